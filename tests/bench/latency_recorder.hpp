#pragma once
// Delivery latency of watch events: when each write was made and when its delta reached the
// handler, keyed by the resourceVersion the write produced. Writes of one phase have consecutive
// resourceVersions (one writer, one resource), so both sides are slots in flat arrays: the
// handler's side is one atomic store, safe from any actor thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer::bench {

struct latency_percentiles {
  std::uint64_t samples = 0; // writes whose delta arrived
  std::uint64_t missing = 0; // writes whose delta never arrived (coalesced or lost)
  double p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0;
};

// The percentiles of `millis` (sorted here); `samples` is its size, `missing` 0.
latency_percentiles summarize_latencies(std::vector<double> millis);

class latency_recorder {
public:
  using clock = std::chrono::steady_clock;

  // Slots for `capacity` writes starting at resourceVersion `first`.
  latency_recorder(std::uint64_t first, std::uint64_t capacity);

  // The writer: the write that produced `resource_version` started at `at`.
  void written(std::uint64_t resource_version, clock::time_point at);
  // The handler: the delta of `resource_version` arrived now. Versions outside the slots (other
  // phases, relists) are ignored.
  void arrived(std::string_view resource_version);

  latency_percentiles percentiles() const;
  // One line per write whose delta arrived: its start (steady_clock ns) and its latency in ms,
  // for lining stalls up with a scheduler trace (perf record -k CLOCK_MONOTONIC). False when the
  // file cannot be written.
  bool write_trace(const std::string& path) const;

private:
  std::uint64_t first_;
  std::uint64_t capacity_;
  std::unique_ptr<std::atomic<std::int64_t>[]> written_; // steady_clock ns; 0 = no write
  std::unique_ptr<std::atomic<std::int64_t>[]> arrived_; // steady_clock ns of the first arrival
};

} // namespace kinformer::bench
