#include "app/common/stop_signals.hpp"

#include <cerrno>
#include <pthread.h>
#include <string.h>

namespace kinformer {

stop_signals::stop_signals(std::initializer_list<int> also) {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  for (int s : also)
    sigaddset(&set_, s);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

int stop_signals::wait() const {
  int received = 0;
  sigwait(&set_, &received);
  return received;
}

std::optional<int> stop_signals::wait_for(std::chrono::milliseconds timeout) const {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec limit{static_cast<time_t>(seconds.count()),
                       static_cast<long>((timeout - seconds).count() * 1'000'000)};
  for (;;) {
    int received = sigtimedwait(&set_, nullptr, &limit);
    if (received > 0)
      return received;
    if (errno != EINTR)
      return std::nullopt; // EAGAIN: the time passed
  }
}

const char* stop_signals::name(int signal) {
  switch (signal) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  case SIGUSR1:
    return "SIGUSR1";
  default:
    return sigabbrev_np(signal) ? sigabbrev_np(signal) : "a signal";
  }
}

} // namespace kinformer
