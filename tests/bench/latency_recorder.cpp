#include "tests/bench/latency_recorder.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <vector>

namespace kinformer::bench {

namespace {

std::int64_t nanoseconds(latency_recorder::clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

} // namespace

latency_recorder::latency_recorder(std::uint64_t first, std::uint64_t capacity)
    : first_(first), capacity_(capacity),
      written_(std::make_unique<std::atomic<std::int64_t>[]>(capacity)),
      arrived_(std::make_unique<std::atomic<std::int64_t>[]>(capacity)) {}

void latency_recorder::written(std::uint64_t resource_version, clock::time_point at) {
  if (resource_version >= first_ && resource_version - first_ < capacity_)
    written_[resource_version - first_].store(nanoseconds(at), std::memory_order_relaxed);
}

void latency_recorder::arrived(std::string_view resource_version) {
  std::uint64_t version = 0;
  auto [end, ec] = std::from_chars(resource_version.data(),
                                   resource_version.data() + resource_version.size(), version);
  if (ec != std::errc() || version < first_ || version - first_ >= capacity_)
    return;
  std::int64_t none = 0;
  // The first arrival counts: a later delta of the same version (a relist) is not a delivery.
  arrived_[version - first_].compare_exchange_strong(none, nanoseconds(clock::now()),
                                                     std::memory_order_relaxed);
}

latency_percentiles summarize_latencies(std::vector<double> millis) {
  latency_percentiles out;
  out.samples = millis.size();
  if (millis.empty())
    return out;
  std::sort(millis.begin(), millis.end());
  auto at = [&](double quantile) {
    auto index = static_cast<std::size_t>(quantile * double(millis.size() - 1) + 0.5);
    return millis[std::min(index, millis.size() - 1)];
  };
  out.p50_ms = at(0.50);
  out.p99_ms = at(0.99);
  out.p999_ms = at(0.999);
  out.max_ms = millis.back();
  return out;
}

latency_percentiles latency_recorder::percentiles() const {
  std::vector<double> millis;
  std::uint64_t missing = 0;
  for (std::uint64_t i = 0; i < capacity_; ++i) {
    auto wrote = written_[i].load(std::memory_order_relaxed);
    if (wrote == 0)
      continue;
    auto came = arrived_[i].load(std::memory_order_relaxed);
    if (came == 0) {
      ++missing;
      continue;
    }
    millis.push_back(double(came - wrote) / 1e6);
  }
  auto out = summarize_latencies(std::move(millis));
  out.missing = missing;
  return out;
}

bool latency_recorder::write_trace(const std::string& path) const {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file)
    return false;
  for (std::uint64_t i = 0; i < capacity_; ++i) {
    auto wrote = written_[i].load(std::memory_order_relaxed);
    auto came = arrived_[i].load(std::memory_order_relaxed);
    if (wrote != 0 && came != 0)
      std::fprintf(file, "%lld %.4f\n", static_cast<long long>(wrote), double(came - wrote) / 1e6);
  }
  return std::fclose(file) == 0;
}

} // namespace kinformer::bench
