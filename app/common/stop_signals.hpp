#pragma once
// How every program stops: SIGINT and SIGTERM (and any others it names) are blocked in every
// thread, and main waits for them with sigwait instead of running code in a signal handler.
// Construct it first in main, before any thread starts: threads inherit the blocked mask.

#include <signal.h>

#include <chrono>
#include <initializer_list>
#include <optional>

namespace kinformer {

class stop_signals {
public:
  explicit stop_signals(std::initializer_list<int> also = {});

  // Blocks until one of the signals arrives; returns it.
  int wait() const;
  // Waits at most `timeout` for one; returns it, or nothing when the time passed first.
  std::optional<int> wait_for(std::chrono::milliseconds timeout) const;
  // "SIGINT", "SIGTERM", "SIGUSR1", ... for a log line.
  static const char* name(int signal);

private:
  sigset_t set_;
};

} // namespace kinformer
