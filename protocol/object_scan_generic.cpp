// The scans with simdjson's kernel for the compiler's default target (fallback on plain x86-64).
#define KINFORMER_SCAN_KERNEL generic_kernel
#include "protocol/object_scan_kernel.ipp"
