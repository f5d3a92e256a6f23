#pragma once
// What a controller reports (controller-runtime's controller_runtime_reconcile_* and the
// workqueue_* metrics), as plain data copied out of the controller actor.

#include "actors/controller/work_queue.hpp"
#include "actors/histogram.hpp"

#include <cstdint>
#include <string>

namespace kinformer {

struct controller_stats {
  std::string name;
  std::size_t workers = 0;
  std::size_t busy_workers = 0; // controller_runtime_active_workers
  bool sources_synced = false;  // every source's initial list has been mapped to requests
  // controller_runtime_reconcile_total by result.
  std::uint64_t reconciles_succeeded = 0;
  std::uint64_t reconciles_failed = 0; // and retried with the rate limiter's backoff
  std::uint64_t reconciles_requeued = 0;
  std::uint64_t reconciles_requeued_after = 0;
  std::string last_error;      // the last failed reconcile: "key: message"
  histogram reconcile_seconds; // controller_runtime_reconcile_time_seconds
  // The work queue: counters, histograms, and the gauges at the time of asking.
  work_queue_stats queue;
  std::size_t queue_depth = 0;
  std::size_t queue_delayed = 0;
  double unfinished_work_seconds = 0;
  double longest_running_seconds = 0;

  controller_stats() : reconcile_seconds(reconcile_seconds_bounds()) {}
  static std::vector<double> reconcile_seconds_bounds() {
    return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  }
};

// What one reconcile came to, sent from a worker back to its controller.
struct reconcile_outcome {
  bool ok = true;
  std::string error; // when !ok
  bool requeue = false;
  std::chrono::nanoseconds requeue_after{0};
};

} // namespace kinformer
