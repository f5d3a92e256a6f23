#include "protocol/backoff.hpp"

#include <algorithm>
#include <memory>
#include <random>

namespace kinformer {

namespace {

backoff::random_fraction default_random() {
  // Shared by copies of the function object; each backoff owns one generator.
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  return [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
}

} // namespace

backoff::backoff(backoff_config config, random_fraction random)
    : config_(config), random_(random ? std::move(random) : default_random()),
      ceiling_(config.initial) {}

void backoff::reset() noexcept {
  ceiling_ = config_.initial;
  last_failure_.reset();
}

std::chrono::milliseconds
backoff::next_delay(watch_clock::time_point now,
                    std::optional<std::chrono::milliseconds> retry_after) {
  // Healthy for long enough since the last failure: start over (client-go's resetDuration).
  if (last_failure_ && now - *last_failure_ >= config_.reset_after)
    ceiling_ = config_.initial;
  last_failure_ = now;

  // Clamp the draw: an injected source may stray outside [0, 1); the delay stays in [d, 2d].
  double fraction = std::clamp(random_(), 0.0, 1.0);
  auto jittered = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(
      static_cast<double>(ceiling_.count()) * (1.0 + fraction)));
  auto grown = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(
      static_cast<double>(ceiling_.count()) * config_.factor));
  ceiling_ = std::min(grown, config_.cap);

  if (retry_after && *retry_after > jittered)
    return *retry_after;
  return jittered;
}

} // namespace kinformer
