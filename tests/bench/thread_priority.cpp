#include "tests/bench/thread_priority.hpp"

#include <cerrno>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

namespace kinformer::bench {

std::string set_this_thread_nice(int nice) {
  if (nice < 0 || nice > 19)
    return "nice must be 0 to 19, not " + std::to_string(nice);
  // PRIO_PROCESS with a thread id sets that thread alone (setpriority(2), "Linux notes").
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice) != 0)
    return std::string("setpriority: ") + std::strerror(errno);
  return {};
}

} // namespace kinformer::bench
