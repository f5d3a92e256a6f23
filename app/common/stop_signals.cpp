#include "app/common/stop_signals.hpp"

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
