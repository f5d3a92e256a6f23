#include "protocol/retry_after.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace kinformer;
using namespace std::chrono;

namespace {

// 37 seconds before RFC 7231's example date, Sun, 06 Nov 1994 08:49:37 GMT.
const system_clock::time_point example_now = sys_days{1994y / November / 6} + 8h + 49min;

std::optional<seconds> parse(std::string_view value, system_clock::time_point now = example_now) {
  return parse_retry_after(value, now);
}

} // namespace

TEST_CASE("Retry-After: delta-seconds") {
  CHECK(parse("0") == 0s);
  CHECK(parse("7") == 7s);
  CHECK(parse("120") == 120s);
  CHECK(parse(" 5\t") == 5s); // surrounding whitespace is tolerated
  CHECK(parse("3600") == 3600s);
}

TEST_CASE("Retry-After: long waits are capped at max_retry_after") {
  CHECK(max_retry_after == 1h);
  CHECK(parse("3601") == max_retry_after);
  CHECK(parse("86400") == max_retry_after);
  CHECK(parse("99999999999999999999999999") == max_retry_after); // saturates, no overflow
  CHECK(parse("Fri, 31 Dec 9999 23:59:59 GMT") == max_retry_after);
}

TEST_CASE("Retry-After: the three HTTP-date forms are measured from now") {
  CHECK(parse("Sun, 06 Nov 1994 08:49:37 GMT") == 37s);
  CHECK(parse("Sunday, 06-Nov-94 08:49:37 GMT") == 37s);
  CHECK(parse("Sun Nov  6 08:49:37 1994") == 37s);
  CHECK(parse("Sun Nov 06 08:49:37 1994") == 37s); // asctime with a two-digit day
  CHECK(parse("Sun, 06 Nov 1994 09:19:00 GMT") == 30min);
  CHECK(parse("Mon, 07 Nov 1994 08:49:00 GMT") == max_retry_after);
  // Month and year boundaries, and a leap day.
  CHECK(parse("Thu, 01 Dec 1994 00:00:10 GMT", sys_days{1994y / November / 30} + 23h + 59min) ==
        70s);
  CHECK(parse("Sun, 01 Jan 1995 00:00:00 GMT", sys_days{1994y / December / 31} + 23h + 59min) ==
        60s);
  CHECK(parse("Thu, 29 Feb 2024 12:00:05 GMT", sys_days{2024y / February / 29} + 12h) == 5s);
}

TEST_CASE("Retry-After: a date in the past means no wait") {
  CHECK(parse("Sun, 06 Nov 1994 08:49:00 GMT") == 0s); // exactly now
  CHECK(parse("Sun, 06 Nov 1994 08:48:59 GMT") == 0s);
  CHECK(parse("Thu, 01 Jan 1970 00:00:00 GMT") == 0s);
  CHECK(parse("Sat, 01 Jan 0000 00:00:00 GMT") == 0s);
}

TEST_CASE("Retry-After: a fraction of a second to go rounds the wait up") {
  const auto now = example_now + 36s + 250ms;
  CHECK(parse("Sun, 06 Nov 1994 08:49:37 GMT", now) == 1s);
  CHECK(parse("Sun, 06 Nov 1994 08:49:36 GMT", now) == 0s);
}

TEST_CASE("Retry-After: RFC 850 two-digit years are at most 50 years ahead") {
  const system_clock::time_point now_2026 = sys_days{2026y / March / 1};
  // 26 is this year: 2026, one hour ahead.
  CHECK(parse("Sunday, 01-Mar-26 01:00:00 GMT", now_2026) == 1h);
  // 76 is 2076 (50 years ahead: still the future), 77 is 1977 (the past).
  CHECK(parse("Sunday, 01-Mar-76 00:00:00 GMT", now_2026) == max_retry_after);
  CHECK(parse("Monday, 01-Mar-77 00:00:00 GMT", now_2026) == 0s);
  CHECK(parse("Monday, 01-Mar-99 00:00:00 GMT", now_2026) == 0s);
}

TEST_CASE("Retry-After: garbage and impossible dates are rejected") {
  for (const char* bad : {
           "",
           "   ",
           "-1",
           "1.5",
           "10s",
           "+3",
           "0x10",
           "soon",
           "Sun, 06 Nov 1994 08:49:37",          // no zone
           "Sun, 06 Nov 1994 08:49:37 UTC",      // only GMT is allowed
           "Sun, 06 Nov 1994 08:49:37 GMT x",    // trailing text
           "sun, 06 Nov 1994 08:49:37 GMT",      // case-sensitive
           "Sun, 6 Nov 1994 08:49:37 GMT",       // IMF-fixdate days have two digits
           "Sun, 06 November 1994 08:49:37 GMT", // month names are abbreviated
           "Sun, 06 Nov 94 08:49:37 GMT",        // IMF-fixdate years have four digits
           "Xyz, 06 Nov 1994 08:49:37 GMT",      // unknown day name
           "Sun, 31 Feb 1994 08:49:37 GMT",      // no such day
           "Tue, 29 Feb 2023 08:49:37 GMT",      // not a leap year
           "Sun, 00 Nov 1994 08:49:37 GMT",
           "Sun, 06 Nov 1994 24:00:00 GMT",
           "Sun, 06 Nov 1994 08:60:00 GMT",
           "Sun, 06 Nov 1994 08:49:61 GMT",
           "Sun, 06 Nov 1994 8:49:37 GMT",
           "Sun, 06 Nov 1994 08:49:37 GMT\n",
           "Sun, 06 Nov 19", // truncated
           "Sun,",
           "Sun, 06-Nov-94 08:49:37 GMT",      // RFC 850 needs the full day name
           "Sunday, 06-Nov-1994 08:49:37 GMT", // ... and a two-digit year
           "Sunday, 06 Nov 1994 08:49:37 GMT",
           "Sun Nov 6 08:49:37 1994", // asctime pads a one-digit day with a space
           "Sun Nov  6 08:49:37 94",
           "Sun Nov  6 08:49:37 1994 GMT",
       }) {
    INFO('"' << bad << '"');
    CHECK_FALSE(parse(bad));
  }
  // Embedded NUL and bytes outside ASCII.
  CHECK_FALSE(parse(std::string_view("12\0 3", 5)));
  CHECK_FALSE(parse("Sun, 06 Nov 1994 08:49:37 GMT\xC3\xA9"));
}
