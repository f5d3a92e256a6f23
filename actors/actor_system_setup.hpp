#pragma once
// The CAF settings every kinformer process uses.

#include <caf/fwd.hpp>

#include <cstddef>

namespace kinformer {

// Sets `threads` scheduler threads (CAF defaults to 4, even on 2 cores), the sharing scheduler,
// and no console logging. Why sharing: CAF 0.17's work-stealing workers poll, and an idle one
// sleeps in 10 ms steps, so a message posted from a non-CAF thread (the HTTP client's I/O
// thread posts every watch event) can wait that long; the sharing scheduler wakes a worker on a
// condition variable at once.
void configure_actor_system(caf::actor_system_config& cfg, std::size_t threads = 2);

} // namespace kinformer
