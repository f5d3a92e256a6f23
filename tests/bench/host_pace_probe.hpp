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
//
// Each tick is also relayed through a chain of threads that do nothing but wake the next (an
// eventfd each), and lateness is measured again where the chain ends. A delta crosses as many
// threads: the simulator's I/O thread, the HTTP thread, an actor worker. On session 35's VM
// (Firecracker, cpuidle-haltpoll with guest_halt_poll_ns=0, so an idle vCPU halts) a wake-up of a
// thread on the other, idle vCPU waited up to 9 ms between sched_waking and sched_wakeup: the
// host had not run that vCPU. With halt polling on (guest_halt_poll_ns=200000, a test only) the
// latency phase's p99 fell from 2-4 ms to 0.26-0.33 ms in two runs of three (1.54 ms in the
// third).

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
  unsigned relay_threads = 3; // threads each tick is handed through after its work; 0: none
};

struct host_pace {
  latency_percentiles tick;    // at the ticking thread, after its page writes
  latency_percentiles relayed; // at the end of the relay (samples 0 without one)
};

// Runs the ticks on the calling thread; the working set is unmapped again before it returns.
// Fails when the working set cannot be mapped or a relay thread cannot be made.
result<host_pace> measure_host_pace(const host_pace_options& options);

} // namespace kinformer::bench
