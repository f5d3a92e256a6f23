#pragma once
// The host's own share of delivery latency: one thread keeps the latency phase's schedule with
// no informer behind it, and each of its ticks touches a few random pages of a working set as
// large as the process. Lateness is measured as the latency phase measures delivery: from the
// tick's scheduled time to the end of its work, so a stall delays every tick queued behind it.
//
// Why: on a small VM the latency phase's tail can belong to the host, not to the informer. On
// session 28's 2-core VM, DAMON's kdamond (sampling physical memory every 500 ms, as the VM was
// set up) ran for 4-20 ms at a time, and 11 of the 13 delivery stalls over 15 ms in one latency
// phase overlapped one of its runs over 3 ms or came within 40 ms of it. A C loop with no
// kinformer code, touching 64 random pages of 1.5 GB every 100 us, was up to 11-19 ms late, once
// every ~512 ms; with 16 MB, at most 3.4 ms. Printed beside the informer's figure, this shows how
// much of the tail the host alone makes at this pace and size. It is not a bound: one host stall
// more or less moves its p99.

#include "protocol/result.hpp"
#include "tests/bench/latency_recorder.hpp"

#include <cstddef>
#include <cstdint>

namespace kinformer::bench {

struct host_pace_options {
  std::uint64_t ticks = 50'000;
  double ticks_per_second = 10'000;
  std::size_t working_set_bytes = std::size_t{256} << 20; // mapped and filled before the ticks
  unsigned pages_per_tick = 16;                           // random pages each tick writes to
};

// Runs the ticks on the calling thread; the working set is unmapped again before it returns.
// Fails only when the working set cannot be mapped.
result<latency_percentiles> measure_host_pace(const host_pace_options& options);

} // namespace kinformer::bench
