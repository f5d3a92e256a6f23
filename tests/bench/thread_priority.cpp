#include "tests/bench/thread_priority.hpp"

#include <cerrno>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

namespace kinformer::bench {

status_result set_this_thread_nice(int nice) {
  // PRIO_PROCESS with a thread id sets that thread alone (setpriority(2), "Linux notes").
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice) != 0)
    return make_error(errc::invalid_argument, std::string("setpriority to nice ") +
                                                  std::to_string(nice) + ": " +
                                                  std::strerror(errno));
  return ok_v;
}

} // namespace kinformer::bench
