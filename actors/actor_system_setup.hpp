#pragma once
// The CAF settings every kinformer process uses.

#include <caf/fwd.hpp>

#include <cstddef>

namespace kinformer {

// Messages an actor handles in one run before its worker turns to other jobs.
inline constexpr std::size_t scheduler_max_throughput = 100;

// Sets `threads` scheduler threads (CAF defaults to 4, even on 2 cores), kinformer's scheduler
// (sharing_scheduler_policy.hpp), at most scheduler_max_throughput messages per actor run, and
// no console logging. Why work sharing and not CAF's default work stealing: CAF 0.17's
// work-stealing workers poll, and an idle one sleeps in 10 ms steps, so a message posted from a
// non-CAF thread (the HTTP client's I/O thread posts every watch event) can wait that long; a
// sharing worker sleeps on a condition variable and is woken at once.
void configure_actor_system(caf::actor_system_config& cfg, std::size_t threads = 2);

} // namespace kinformer
