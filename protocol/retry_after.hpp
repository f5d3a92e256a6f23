#pragma once
// The Retry-After header (RFC 7231 section 7.1.3): how long a client should wait before
// repeating a request, given as delta-seconds ("120") or as an HTTP-date in any of the three
// forms a recipient must accept (section 7.1.1.1):
//   IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
//   RFC 850      Sunday, 06-Nov-94 08:49:37 GMT
//   asctime      Sun Nov  6 08:49:37 1994

#include <chrono>
#include <optional>
#include <string_view>

namespace kinformer {

// The longest wait a Retry-After can impose. A hostile or broken server could otherwise park a
// reflector for days with one header; after an hour the client retries (and is told again).
inline constexpr std::chrono::seconds max_retry_after = std::chrono::hours(1);

// The wait a Retry-After value asks for, measured from `now` for a date: a date in the past
// means no wait (0 s), a date with a fraction of a second to go rounds up, and anything longer
// than max_retry_after is cut to it. nullopt when the value is neither form (garbage, a
// negative or fractional number, an impossible date such as 31 Feb).
std::optional<std::chrono::seconds> parse_retry_after(std::string_view value,
                                                      std::chrono::system_clock::time_point now);

} // namespace kinformer
