#pragma once
// The reflector's retry delay: client-go's exponential backoff manager (0.8 s doubling to 30 s,
// reset after 2 minutes without a failure, jitter 1.0: each delay is drawn from [d, 2d) where d
// is the current step), and a server's Retry-After as a lower bound. Time and randomness are
// injected so the sequence is testable.

#include <chrono>
#include <functional>
#include <optional>

namespace kinformer {

using watch_clock = std::chrono::steady_clock;

struct backoff_config {
  std::chrono::milliseconds initial{800};
  std::chrono::milliseconds cap{30'000};
  double factor = 2.0;
  // A failure this long after the previous one starts the sequence again from `initial`.
  std::chrono::milliseconds reset_after{120'000};
};

class backoff {
public:
  // Returns a number uniformly distributed in [0, 1).
  using random_fraction = std::function<double()>;

  // Without `random`, draws from a per-instance Mersenne Twister seeded from random_device.
  explicit backoff(backoff_config config = {}, random_fraction random = {});

  // The delay before the next retry, for a failure observed at `now`: uniform in [d, 2d), where
  // the step d starts at `initial` and doubles per failure up to the cap (client-go's
  // wait.Jitter(d, 1.0)). The server's Retry-After, when given, is a lower bound on the result.
  std::chrono::milliseconds next_delay(watch_clock::time_point now,
                                       std::optional<std::chrono::milliseconds> retry_after = {});

  // The step d the next delay is drawn from, in [d, 2d) (before any reset by elapsed time).
  std::chrono::milliseconds ceiling() const noexcept { return ceiling_; }
  // Forgets past failures: the next delay is drawn from [initial, 2 initial) again.
  void reset() noexcept;
  // A uniform number in [0, 1) from the injected source (the watcher reuses it for timeouts).
  double draw() { return random_(); }

private:
  backoff_config config_;
  random_fraction random_;
  std::chrono::milliseconds ceiling_;
  std::optional<watch_clock::time_point> last_failure_;
};

} // namespace kinformer
