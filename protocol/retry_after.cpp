#include "protocol/retry_after.hpp"

#include <array>
#include <cstdint>
#include <limits>

namespace kinformer {

namespace {

using namespace std::chrono;

constexpr std::array<std::string_view, 7> short_day_names{"Mon", "Tue", "Wed", "Thu",
                                                          "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> long_day_names{
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
constexpr std::array<std::string_view, 12> month_names{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Reads an HTTP-date token by token; every read consumes its token only when it matches.
// The grammar is case-sensitive (RFC 7231 section 7.1.1.1).
class date_reader {
public:
  explicit date_reader(std::string_view text) : text_(text) {}

  bool literal(std::string_view expected) {
    if (text_.substr(0, expected.size()) != expected)
      return false;
    text_.remove_prefix(expected.size());
    return true;
  }

  // Exactly `count` digits.
  std::optional<int> number(std::size_t count) {
    if (text_.size() < count)
      return std::nullopt;
    int value = 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (!is_digit(text_[i]))
        return std::nullopt;
      value = value * 10 + (text_[i] - '0');
    }
    text_.remove_prefix(count);
    return value;
  }

  // The index of the name that comes next. No name in a table is a prefix of another, so the
  // first match is the only one.
  template <std::size_t N>
  std::optional<unsigned> name(const std::array<std::string_view, N>& names) {
    for (unsigned i = 0; i < N; ++i)
      if (literal(names[i]))
        return i;
    return std::nullopt;
  }

  bool at_end() const { return text_.empty(); }

private:
  std::string_view text_;
};

struct civil_time {
  int year = 0;
  unsigned month = 0; // 1..12
  unsigned day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
};

// time-of-day = hour ":" minute ":" second, each 2DIGIT; 60 seconds allows a leap second.
bool read_time_of_day(date_reader& in, civil_time& t) {
  auto hour = in.number(2);
  if (!hour || !in.literal(":"))
    return false;
  auto minute = in.number(2);
  if (!minute || !in.literal(":"))
    return false;
  auto second = in.number(2);
  if (!second || *hour > 23 || *minute > 59 || *second > 60)
    return false;
  t.hour = *hour;
  t.minute = *minute;
  t.second = *second;
  return true;
}

std::optional<unsigned> read_month(date_reader& in) {
  auto index = in.name(month_names);
  if (!index)
    return std::nullopt;
  return *index + 1;
}

// IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
std::optional<civil_time> read_imf_fixdate(std::string_view text) {
  date_reader in(text);
  civil_time t;
  if (!in.name(short_day_names) || !in.literal(", "))
    return std::nullopt;
  auto day = in.number(2);
  if (!day || !in.literal(" "))
    return std::nullopt;
  auto month = read_month(in);
  if (!month || !in.literal(" "))
    return std::nullopt;
  auto year = in.number(4);
  if (!year || !in.literal(" ") || !read_time_of_day(in, t) || !in.literal(" GMT") || !in.at_end())
    return std::nullopt;
  t.year = *year;
  t.month = *month;
  t.day = static_cast<unsigned>(*day);
  return t;
}

// RFC 850: Sunday, 06-Nov-94 08:49:37 GMT. A two-digit year more than 50 years ahead of `now`
// is the most recent past year with those digits (RFC 7231 section 7.1.1.1).
std::optional<civil_time> read_rfc850_date(std::string_view text, year now_year) {
  date_reader in(text);
  civil_time t;
  if (!in.name(long_day_names) || !in.literal(", "))
    return std::nullopt;
  auto day = in.number(2);
  if (!day || !in.literal("-"))
    return std::nullopt;
  auto month = read_month(in);
  if (!month || !in.literal("-"))
    return std::nullopt;
  auto two_digit_year = in.number(2);
  if (!two_digit_year || !in.literal(" ") || !read_time_of_day(in, t) || !in.literal(" GMT") ||
      !in.at_end())
    return std::nullopt;
  const int current = static_cast<int>(now_year);
  int full_year = current - current % 100 + *two_digit_year;
  if (full_year > current + 50)
    full_year -= 100;
  t.year = full_year;
  t.month = *month;
  t.day = static_cast<unsigned>(*day);
  return t;
}

// asctime: Sun Nov  6 08:49:37 1994 (a one-digit day is padded with a space).
std::optional<civil_time> read_asctime_date(std::string_view text) {
  date_reader in(text);
  civil_time t;
  if (!in.name(short_day_names) || !in.literal(" "))
    return std::nullopt;
  auto month = read_month(in);
  if (!month || !in.literal(" "))
    return std::nullopt;
  auto day = in.literal(" ") ? in.number(1) : in.number(2);
  if (!day || !in.literal(" ") || !read_time_of_day(in, t) || !in.literal(" "))
    return std::nullopt;
  auto year = in.number(4);
  if (!year || !in.at_end())
    return std::nullopt;
  t.year = *year;
  t.month = *month;
  t.day = static_cast<unsigned>(*day);
  return t;
}

// Whole seconds throughout: a nanosecond system_clock cannot hold year 9999.
std::optional<sys_seconds> to_sys_seconds(const civil_time& t) {
  const year_month_day date{year{t.year}, month{t.month}, day{t.day}};
  if (!date.ok())
    return std::nullopt; // 31 Feb, 29 Feb of a common year, day 00
  return sys_days{date} + hours{t.hour} + minutes{t.minute} + seconds{t.second};
}

seconds clamp_wait(std::int64_t wait_seconds) {
  if (wait_seconds <= 0)
    return seconds{0};
  return seconds{wait_seconds} < max_retry_after ? seconds{wait_seconds} : max_retry_after;
}

// delta-seconds = 1*DIGIT. Huge values saturate rather than fail: they still mean "long".
std::optional<seconds> read_delta_seconds(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  std::int64_t value = 0;
  constexpr std::int64_t saturated = std::numeric_limits<std::int32_t>::max();
  for (char c : text) {
    if (!is_digit(c))
      return std::nullopt;
    value = std::min(saturated, value * 10 + (c - '0'));
  }
  return clamp_wait(value);
}

std::string_view trim_whitespace(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && blank(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && blank(text.back()))
    text.remove_suffix(1);
  return text;
}

} // namespace

std::optional<seconds> parse_retry_after(std::string_view value, system_clock::time_point now) {
  value = trim_whitespace(value);
  if (!value.empty() && is_digit(value.front()))
    return read_delta_seconds(value);

  const sys_seconds now_seconds = floor<seconds>(now);
  auto date = read_imf_fixdate(value);
  if (!date)
    date = read_rfc850_date(value, year_month_day{floor<days>(now_seconds)}.year());
  if (!date)
    date = read_asctime_date(value);
  if (!date)
    return std::nullopt;
  const auto when = to_sys_seconds(*date);
  if (!when)
    return std::nullopt;
  // The date is whole seconds, so measuring from the start of now's second rounds the wait up.
  return clamp_wait((*when - now_seconds).count());
}

} // namespace kinformer
