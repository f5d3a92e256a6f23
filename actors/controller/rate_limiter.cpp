#include "actors/controller/rate_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kinformer {

using std::chrono::nanoseconds;

nanoseconds token_bucket::reserve(clock::time_point now) {
  if (qps_ <= 0)
    return nanoseconds(0);
  if (!started_) {
    started_ = true;
    last_ = now;
  }
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0)
    return nanoseconds(0);
  return std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(-tokens_ / qps_));
}

rate_limiter::rate_limiter(rate_limiter_options options)
    : options_(options), bucket_(options.qps, options.burst) {}

nanoseconds rate_limiter::item_backoff(std::uint32_t failures) const {
  // base * 2^failures in floating point, as client-go, so a large count saturates at the cap
  // instead of overflowing.
  double backoff = static_cast<double>(options_.base_delay.count()) * std::pow(2.0, failures);
  if (!(backoff < static_cast<double>(options_.max_delay.count())))
    return options_.max_delay;
  return nanoseconds(static_cast<nanoseconds::rep>(backoff));
}

nanoseconds rate_limiter::when(std::string_view key, clock::time_point now) {
  auto it = failures_.find(key);
  if (it == failures_.end())
    it = failures_.emplace(std::string(key), 0).first;
  nanoseconds item = item_backoff(it->second);
  if (it->second < std::numeric_limits<std::uint32_t>::max())
    ++it->second;
  return std::max(item, bucket_.reserve(now));
}

void rate_limiter::forget(std::string_view key) {
  if (auto it = failures_.find(key); it != failures_.end())
    failures_.erase(it);
}

std::uint32_t rate_limiter::num_requeues(std::string_view key) const {
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

} // namespace kinformer
