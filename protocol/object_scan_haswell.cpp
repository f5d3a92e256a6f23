// The scans with simdjson's AVX2 kernel (haswell): compiled with -mavx2 -mbmi -mpclmul -mlzcnt,
// used only where the CPU has them (object_scan.cpp checks at run time).
#define KINFORMER_SCAN_KERNEL haswell_kernel
#include "protocol/object_scan_kernel.ipp"
