#include "app/kinformerd/service_log.hpp"

#include "app/kinformerd/config.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace kinformer::service {

namespace {} // namespace

// RFC 3339 in UTC with milliseconds: 2024-05-01T12:00:00.123Z.
std::string utc_timestamp(std::chrono::system_clock::time_point now) {
  auto since_epoch = now.time_since_epoch();
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds);
  std::time_t t = seconds.count();
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[64]; // room for any int the format could print
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis.count()));
  return text;
}

std::string logfmt_value(std::string_view value) {
  bool plain = !value.empty();
  for (char c : value)
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
      plain = false;
  if (plain)
    return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        out += ' ';
      else
        out += c;
    }
  }
  return out + "\"";
}

service_log::service_log(std::ostream& out, log_level threshold)
    : out_(out), threshold_(threshold) {}

bool service_log::enabled(log_level level) const noexcept {
  return static_cast<int>(level) >= static_cast<int>(threshold_);
}

void service_log::write(log_level level, std::string_view event, const fields& extra) {
  if (!enabled(level))
    return;
  std::string line = "ts=" + utc_timestamp(std::chrono::system_clock::now()) +
                     " level=" + std::string(to_string(level)) + " event=" + logfmt_value(event);
  for (const auto& [key, value] : extra) {
    line += ' ';
    line += key;
    line += '=';
    line += logfmt_value(value);
  }
  line += '\n';
  std::lock_guard lock(mutex_);
  out_ << line << std::flush;
}

void service_log::debug(std::string_view event, const fields& extra) {
  write(log_level::debug, event, extra);
}
void service_log::info(std::string_view event, const fields& extra) {
  write(log_level::info, event, extra);
}
void service_log::warn(std::string_view event, const fields& extra) {
  write(log_level::warn, event, extra);
}
void service_log::error(std::string_view event, const fields& extra) {
  write(log_level::error, event, extra);
}

} // namespace kinformer::service
