#include "actors/histogram.hpp"

#include <algorithm>
#include <utility>

namespace kinformer {

histogram::histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void histogram::observe(double value) {
  auto bucket = std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();
  ++counts[static_cast<std::size_t>(bucket)];
  sum += value;
  ++count;
}

} // namespace kinformer
