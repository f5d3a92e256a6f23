#include "app/kubesim/fault_plan.hpp"

#include "app/apiserver/api_status.hpp"

namespace kinformer::sim {

void fault_plan::fail_next_watches(std::size_t count) {
  fail_next_watches(count, 410, std::nullopt);
}

void fault_plan::fail_next_watches(std::size_t count, int code,
                                   std::optional<int> retry_after_seconds) {
  std::lock_guard lock(mutex_);
  watch_failures_ = count;
  watch_failure_ = armed_failure{code, retry_after_seconds};
}

void fault_plan::fail_next_lists(std::size_t count, int code,
                                 std::optional<int> retry_after_seconds) {
  std::lock_guard lock(mutex_);
  list_failures_ = count;
  list_code_ = code;
  list_retry_after_ = retry_after_seconds;
}

void fault_plan::expire_next_continues(std::size_t count) {
  std::lock_guard lock(mutex_);
  continue_expiries_ = count;
}

void fault_plan::refuse_streaming_lists(bool refuse) {
  std::lock_guard lock(mutex_);
  refuse_streaming_ = refuse;
}

void fault_plan::reset() {
  std::lock_guard lock(mutex_);
  watch_failures_ = 0;
  list_failures_ = 0;
  write_failures_ = 0;
  continue_expiries_ = 0;
  refuse_streaming_ = false;
}

std::optional<armed_failure> fault_plan::take_watch_failure() {
  std::lock_guard lock(mutex_);
  if (watch_failures_ == 0)
    return std::nullopt;
  --watch_failures_;
  return watch_failure_;
}

std::optional<status> fault_plan::take_list_failure() {
  std::lock_guard lock(mutex_);
  if (list_failures_ == 0)
    return std::nullopt;
  --list_failures_;
  return apiserver::injected_failure(list_code_, list_retry_after_);
}

void fault_plan::fail_next_writes(std::size_t count, int code,
                                  std::optional<int> retry_after_seconds) {
  std::lock_guard lock(mutex_);
  write_failures_ = count;
  write_failure_ = {code, retry_after_seconds};
}

std::optional<status> fault_plan::take_write_failure() {
  std::lock_guard lock(mutex_);
  if (write_failures_ == 0)
    return std::nullopt;
  --write_failures_;
  return apiserver::injected_failure(write_failure_.code, write_failure_.retry_after_seconds);
}

bool fault_plan::take_continue_expiry() {
  std::lock_guard lock(mutex_);
  if (continue_expiries_ == 0)
    return false;
  --continue_expiries_;
  return true;
}

bool fault_plan::refuses_streaming_lists() {
  std::lock_guard lock(mutex_);
  return refuse_streaming_;
}

} // namespace kinformer::sim
