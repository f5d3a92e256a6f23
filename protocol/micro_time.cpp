#include "protocol/micro_time.hpp"

#include <cstdio>
#include <ctime>

namespace kinformer {

std::string micro_time(std::chrono::system_clock::time_point t) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  auto seconds = static_cast<std::time_t>(micros / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(micros % 1'000'000));
  return text;
}

} // namespace kinformer
