#pragma once
// The event source of the benchmark: updates of random existing pods written straight into the
// simulator's storage, as fast as it accepts them, on the calling thread.
//
// The writer stays at most `max_lag` writes ahead of what the handler has received. Without that
// bound a writer faster than the informer fills the simulator's per-watch queue, the watch is
// closed as hopelessly behind, and the informer must resume from a history window holding every
// event in between (about 20 KB of memory per event at the default pod size: a million would not
// fit). The time spent waiting on the bound is reported, so a reader sees which side limits.
//
// Drain mode separates the two sides: each burst of `max_lag` writes is made while the server
// holds the watches back, then released, and only its delivery is timed.

#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/result.hpp"
#include "tests/bench/delivery_counter.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kinformer::bench {

struct pump_options {
  std::uint64_t writes = 0;
  std::uint64_t max_lag = 10'000;
  // Give up when the handler receives nothing for this long while the writer waits on it.
  std::chrono::milliseconds stall_timeout{std::chrono::seconds(120)};
  // Out of 100 writes, how many relabel the pod (metadata changes); the rest move its status.
  unsigned label_percent = 20;
  sim::generator_options generator;
  // Drain mode when both are set: called around each burst of writes (e.g. the simulator's
  // stall_watches / resume_watches).
  std::function<void()> hold_watches;
  std::function<void()> release_watches;
  // Paced: the n-th write starts no earlier than n / writes_per_second after the first (0: as
  // fast as the storage accepts). Not with drain mode.
  double writes_per_second = 0;
  // Called after each write with the resourceVersion it produced and when it started.
  std::function<void(std::uint64_t, std::chrono::steady_clock::time_point)> on_write;
};

struct pump_stats {
  std::uint64_t writes = 0;
  double seconds = 0;           // from the first write to the end of the last
  double throttled_seconds = 0; // waiting for the handler to catch up (or, drain mode, drain)
  double drain_seconds = 0;     // drain mode: from each release to the burst's last delta

  double writes_per_second() const { return seconds > 0 ? writes / seconds : 0; }
  // The rate the writer sustained while it was not waiting: what the storage accepts.
  double unthrottled_writes_per_second() const {
    double busy = seconds - throttled_seconds;
    return busy > 0 ? writes / busy : 0;
  }
};

// `delivered` counts the deltas of this phase only (not the initial list).
class update_pump {
public:
  update_pump(sim::storage& store, delivery_counter& delivered, pump_options options);

  // Writes `options.writes` updates spread over every pod in the storage. Fails when there are
  // no pods, when the storage refuses a write, or when the handler stalls.
  result<pump_stats> run();

private:
  struct pod_key {
    std::string ns;
    std::string name;
  };

  status_result write_one(const pod_key& pod);
  // Waits until the handler has `target` deltas; a clear error when it stalls.
  status_result wait_for_delivery(std::uint64_t target, std::uint64_t written);
  result<pump_stats> run_continuous(const std::vector<pod_key>& pods);
  result<pump_stats> run_bursts(const std::vector<pod_key>& pods);

  sim::storage& store_;
  delivery_counter& delivered_;
  pump_options options_;
  sim::object_generator generator_;
};

} // namespace kinformer::bench
