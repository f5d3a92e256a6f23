#pragma once
// The benchmark's view of its own memory: resident set size now and at its peak.

#include <cstddef>

namespace kinformer::bench {

// Hands freed heap pages back to the kernel (glibc's malloc_trim), so that the next RSS reading
// counts live data rather than what the allocator keeps cached from earlier phases.
void release_free_heap();

// Resident set size now, in bytes (/proc/self/statm); 0 when it cannot be read.
std::size_t current_rss_bytes();

// The largest resident set size this process has had, in bytes (getrusage's ru_maxrss).
std::size_t peak_rss_bytes();

// Starts a new peak: the kernel's high-water mark (VmHWM) is set to the current RSS
// (/proc/self/clear_refs). False when the kernel refuses.
bool reset_peak_rss();

// The largest resident set size since the last reset_peak_rss() (VmHWM), in bytes; 0 when it
// cannot be read.
std::size_t peak_rss_since_reset_bytes();

} // namespace kinformer::bench
