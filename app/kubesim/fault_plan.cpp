#include "app/kubesim/fault_plan.hpp"

#include "app/kubesim/api_status.hpp"

namespace kinformer::sim {

void fault_plan::fail_next_watches(std::size_t count) {
  std::lock_guard lock(mutex_);
  watch_failures_ = count;
}

void fault_plan::fail_next_lists(std::size_t count, int code,
                                 std::optional<int> retry_after_seconds) {
  std::lock_guard lock(mutex_);
  list_failures_ = count;
  list_code_ = code;
  list_retry_after_ = retry_after_seconds;
}

void fault_plan::reset() {
  std::lock_guard lock(mutex_);
  watch_failures_ = 0;
  list_failures_ = 0;
}

bool fault_plan::take_watch_failure() {
  std::lock_guard lock(mutex_);
  if (watch_failures_ == 0)
    return false;
  --watch_failures_;
  return true;
}

std::optional<status> fault_plan::take_list_failure() {
  std::lock_guard lock(mutex_);
  if (list_failures_ == 0)
    return std::nullopt;
  --list_failures_;
  return injected_failure(list_code_, list_retry_after_);
}

} // namespace kinformer::sim
