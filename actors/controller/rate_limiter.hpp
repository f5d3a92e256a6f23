#pragma once
// How long a work item waits before it is retried: client-go's DefaultControllerRateLimiter
// (workqueue/default_rate_limiters.go), with time passed in so that it is a pure function of
// its inputs and testable without a clock.
//
// Two limits, the larger wait wins (client-go's MaxOfRateLimiter):
//   - per item, exponential: base_delay * 2^failures, capped at max_delay; forget() resets it;
//   - overall, a token bucket of `burst` tokens refilled at `qps` per second, so a storm of
//     failing items cannot retry faster than qps in all. Every call takes a token, even when
//     the per-item wait is longer (as client-go's Reserve()), so the bucket can run negative.

#include "actors/string_hash.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kinformer {

struct rate_limiter_options {
  std::chrono::nanoseconds base_delay = std::chrono::milliseconds(5);
  std::chrono::nanoseconds max_delay = std::chrono::seconds(1000);
  double qps = 10;    // 0: no overall bucket
  double burst = 100; // tokens the bucket holds when full
};

// The overall bucket alone (golang.org/x/time/rate's Limiter, as client-go's BucketRateLimiter
// uses it).
class token_bucket {
public:
  using clock = std::chrono::steady_clock;

  token_bucket(double qps, double burst) : qps_(qps), burst_(burst), tokens_(burst) {}

  // Takes one token at `now` and returns how long its holder must wait for it.
  std::chrono::nanoseconds reserve(clock::time_point now);

private:
  double qps_;
  double burst_;
  double tokens_;
  clock::time_point last_{};
  bool started_ = false;
};

class rate_limiter {
public:
  using clock = std::chrono::steady_clock;

  explicit rate_limiter(rate_limiter_options options = {});

  // Records one more failure of `key` at `now` and returns how long it should wait.
  std::chrono::nanoseconds when(std::string_view key, clock::time_point now);
  // The item succeeded: its own backoff starts over (the bucket is not refunded).
  void forget(std::string_view key);
  // Failures recorded for `key` since it was last forgotten.
  std::uint32_t num_requeues(std::string_view key) const;

  const rate_limiter_options& options() const noexcept { return options_; }

private:
  std::chrono::nanoseconds item_backoff(std::uint32_t failures) const;

  rate_limiter_options options_;
  token_bucket bucket_;
  std::unordered_map<std::string, std::uint32_t, string_hash, std::equal_to<>> failures_;
};

} // namespace kinformer
