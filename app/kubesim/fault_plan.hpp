#pragma once
// Data-side faults armed by tests and the control interface: the next N watches answer 410 (or
// 429 with Retry-After), the next N lists answer a chosen error, the next N continue pages find
// their token expired, and streaming lists can be refused as a server without the WatchList
// feature gate refuses them. Each armed failure is consumed by exactly one request.

#include "protocol/decode.hpp"

#include <cstddef>
#include <mutex>
#include <optional>

namespace kinformer::sim {

// A failure armed for one request: its HTTP code and the Retry-After the answer carries.
struct armed_failure {
  int code = 500;
  std::optional<int> retry_after_seconds;
};

class fault_plan {
public:
  // The next `count` watches answer 410 Expired (their resourceVersion fell out of the window).
  void fail_next_watches(std::size_t count);
  // The next `count` watches answer `code` (429 as an overloaded server's max-in-flight filter,
  // 503, ...) before any event, with Retry-After when given.
  void fail_next_watches(std::size_t count, int code, std::optional<int> retry_after_seconds);
  void fail_next_lists(std::size_t count, int code, std::optional<int> retry_after_seconds);
  // The next `count` writes through the API (create, update, patch, delete) answer `code`
  // without being applied.
  void fail_next_writes(std::size_t count, int code, std::optional<int> retry_after_seconds);
  // The next `count` list requests that carry a continue token answer 410 Expired, as when etcd
  // compacts the token's revision between two pages.
  void expire_next_continues(std::size_t count);
  // While on, watches with sendInitialEvents answer 422, as a server without WatchList does.
  void refuse_streaming_lists(bool refuse);
  // Clears every armed fault and accepts streaming lists again.
  void reset();

  // Consumes one armed watch failure.
  std::optional<armed_failure> take_watch_failure();
  // Consumes one armed list failure: the Status to answer with, if one was armed.
  std::optional<status> take_list_failure();
  // Consumes one armed write failure.
  std::optional<status> take_write_failure();
  // Consumes one armed continue-token expiry.
  bool take_continue_expiry();
  bool refuses_streaming_lists();

private:
  std::mutex mutex_;
  std::size_t watch_failures_ = 0;
  armed_failure watch_failure_{410, std::nullopt};
  std::size_t list_failures_ = 0;
  int list_code_ = 500;
  std::optional<int> list_retry_after_;
  std::size_t write_failures_ = 0;
  armed_failure write_failure_;
  std::size_t continue_expiries_ = 0;
  bool refuse_streaming_ = false;
};

} // namespace kinformer::sim
