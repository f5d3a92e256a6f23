#pragma once
// glibc's allocator, tuned for a process that keeps hundreds of MB of small objects it received
// from the network.
//
// Measured (kinformer-watch, 50,000 pods, 176 MB of JSON): with glibc's defaults about half of
// the I/O thread's time went to growing its heap (a thread arena grows one mprotect call at a
// time, 40,000 calls) and to 4 KB page faults. One arena, grown 64 MB at a time, took the sync
// from 1.6 to 0.8-1.2 s of CPU.
//
// glibc reads these settings (GLIBC_TUNABLES) only at start-up, so the process re-executes
// itself once with them set. A GLIBC_TUNABLES the user set is left alone, and
// KINFORMER_MALLOC_TUNING=off turns this off.

namespace kinformer {

// Call first thing in main(), before any thread starts. Returns only when the process keeps
// running as it is (tuned already, opted out, or the re-exec failed).
void tune_allocator_or_reexec(char** argv);

} // namespace kinformer
