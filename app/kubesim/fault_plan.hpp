#pragma once
// Data-side faults armed by tests and the control interface: the next N watches answer 410, the
// next N lists answer a chosen error. Each armed failure is consumed by exactly one request.

#include "protocol/decode.hpp"

#include <cstddef>
#include <mutex>
#include <optional>

namespace kinformer::sim {

class fault_plan {
public:
  void fail_next_watches(std::size_t count);
  void fail_next_lists(std::size_t count, int code, std::optional<int> retry_after_seconds);
  // Clears every armed fault.
  void reset();

  // Consumes one armed watch failure: true when the watch must answer 410 Expired.
  bool take_watch_failure();
  // Consumes one armed list failure: the Status to answer with, if one was armed.
  std::optional<status> take_list_failure();

private:
  std::mutex mutex_;
  std::size_t watch_failures_ = 0;
  std::size_t list_failures_ = 0;
  int list_code_ = 500;
  std::optional<int> list_retry_after_;
};

} // namespace kinformer::sim
