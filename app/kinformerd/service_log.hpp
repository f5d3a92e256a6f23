#pragma once
// kinformerd's own log: one logfmt line per event that matters (start-up addresses, list done,
// watch restarted and why, relist, handler overflow, shutdown), on stderr, from any thread.
//
//   ts=2026-11-22T14:00:00.123Z level=info event=list_done informer=pods objects=2000 took=0.41s

#include <chrono>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kinformer::service {

enum class log_level;

class service_log {
public:
  using fields = std::vector<std::pair<std::string_view, std::string>>;

  service_log(std::ostream& out, log_level threshold);

  bool enabled(log_level level) const noexcept;
  // One line: ts, level, event, then `extra` in order; values are quoted when they need it.
  void write(log_level level, std::string_view event, const fields& extra = {});

  void debug(std::string_view event, const fields& extra = {});
  void info(std::string_view event, const fields& extra = {});
  void warn(std::string_view event, const fields& extra = {});
  void error(std::string_view event, const fields& extra = {});

private:
  std::ostream& out_;
  log_level threshold_;
  std::mutex mutex_;
};

// RFC 3339 in UTC with milliseconds: 2024-05-01T12:00:00.123Z.
std::string utc_timestamp(std::chrono::system_clock::time_point now);

// A value as logfmt writes it: bare when it has no space, quote, '=' or control character,
// else quoted with escapes.
std::string logfmt_value(std::string_view value);

} // namespace kinformer::service
