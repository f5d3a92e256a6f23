#pragma once
// A Prometheus-style histogram as plain data, so that stats can be copied out of an actor.

#include <cstdint>
#include <vector>

namespace kinformer {

// Counts per bucket (upper bounds ascending, +Inf implied), sum and count.
struct histogram {
  std::vector<double> bounds;
  std::vector<std::uint64_t> counts; // bounds.size() + 1 buckets, not cumulative
  double sum = 0;
  std::uint64_t count = 0;

  explicit histogram(std::vector<double> upper_bounds = {});
  void observe(double value);
};

} // namespace kinformer
