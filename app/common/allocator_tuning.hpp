#pragma once
// glibc's allocator, tuned for a process that keeps hundreds of MB of small objects it received
// from the network. Call tune_allocator() first thing in main(), before any thread starts:
// kinformer's programs do, and so should a controller built on the library.
//
// Measured (informer_bench, 100,000 pods of 3.5 KB, 352 MB of list items): with glibc's
// defaults a thread's arena grows one mprotect call at a time and shrinks again whenever its top
// is free, 93,395 mprotect calls in one sync and 0.62-0.66 s of the informer's CPU (six runs).
// Heaps grown 64 MB at a time, and trimmed only past that much: 37 calls, 0.57-0.61 s (eight
// runs). (kinformer-watch, 50,000 pods, with one arena too: 1.6 s of CPU before, 0.8-1.2 s.)
//
// The settings go through mallopt(), in this process only: GLIBC_TUNABLES would also reach every
// program this one starts (a credential plugin, say). A GLIBC_TUNABLES of the user's own means
// they tuned glibc themselves, and is left alone; KINFORMER_MALLOC_TUNING=off turns this off.

#include <cstddef>

namespace kinformer {

struct allocator_tuning {
  // How much more than it needs a heap grows by, and keeps when its top is freed (M_TOP_PAD).
  // malloc_trim(0) still gives it all back (app/common/heap_trimmer.hpp).
  std::size_t heap_growth_bytes = std::size_t{64} << 20;
  // Blocks this large or larger get a mapping of their own (M_MMAP_THRESHOLD); smaller ones come
  // from the heap and are reused. glibc raises its threshold from 128 KiB up to 32 MiB as large
  // blocks are freed, unless M_TOP_PAD is set, as above: then every block over 128 KiB was a new
  // mapping, its pages first-touched each time. Measured (kinformerd's read API, a list of
  // 100,000 pods, whose sort and gather vectors are 2-6 MB): 0.267-0.313 s a list at 128 KiB;
  // at 32 MiB, 0.205-0.220 s once the heap has grown for them, on a VM that charges each page's
  // first touch.
  std::size_t mmap_threshold_bytes = std::size_t{32} << 20;
  // Arenas at most (M_ARENA_MAX); 0 keeps glibc's default (8 per core). One arena shares every
  // freed chunk between all threads, which keeps a long-running process's heap smallest, but
  // makes threads that allocate at once wait for each other.
  int max_arenas = 0;
};

// Applies `tuning`. Returns false, having changed nothing, when GLIBC_TUNABLES is set or
// KINFORMER_MALLOC_TUNING=off; true otherwise.
bool tune_allocator(const allocator_tuning& tuning = {});

} // namespace kinformer
