#pragma once
// When the cache supervisor restarts a failed informer: an exponential backoff per informer
// slot, so an informer that fails on every start (its reflector cannot be created, it crashes
// on its first list) does not spin in a crash loop. Plain C++, no CAF, no clock: the caller
// says how long the failed informer was up.
//
// Policy: the first failure waits `initial`, each further failure doubles the wait (no jitter:
// restarts of different slots are not synchronised by a shared event), up to `cap`. A failure
// after the informer stayed up for at least `reset_after` starts again from `initial`. Uptime,
// not "it synced", is the health signal: an informer that syncs and then crashes at once is
// still crash-looping.

#include <chrono>

namespace kinformer {

struct restart_backoff_config {
  std::chrono::milliseconds initial{100};
  std::chrono::milliseconds cap{30'000};
  std::chrono::milliseconds reset_after{60'000};
};

class restart_backoff {
public:
  restart_backoff() = default;
  explicit restart_backoff(restart_backoff_config config) : config_(config) {}

  // The wait before restarting an informer that failed after `uptime`.
  std::chrono::milliseconds on_failure(std::chrono::milliseconds uptime);

  // The wait of the latest failure; zero before any.
  std::chrono::milliseconds last_delay() const { return last_; }

private:
  restart_backoff_config config_{};
  std::chrono::milliseconds last_{0};
};

} // namespace kinformer
