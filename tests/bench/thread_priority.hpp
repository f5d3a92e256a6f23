#pragma once
// Lowers the calling thread's scheduling priority (its nice value).
//
// informer_bench's latency phase writes from a thread of its own at nice 19. The writer stands
// for the API server's clients, which in a cluster run on other machines; in one process on
// 2 cores it competes with the informer's threads for CPU and for the address space.
// Measured after the 100,000-event phase, 100,000 pods, six runs each (p99 at 10,000/s):
// - on the main thread, at nice 0: 0.84-2.68 ms. Its writes grew and trimmed the main heap with
//   brk (1,146 calls in 4 s of the phase), and each brk holds the process's address-space lock;
// - on a thread of its own (a heap of its own, no brk), at nice 0: 0.63-0.79 ms;
// - likewise at nice 19: 0.51-0.71 ms.

#include "protocol/result.hpp"

namespace kinformer::bench {

// Sets the calling thread's nice value (Linux keeps it per thread; the caller checks the range).
status_result set_this_thread_nice(int nice);

} // namespace kinformer::bench
