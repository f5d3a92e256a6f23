// A Retry-After header value from a server.
// Properties: no crash; a wait is never negative nor longer than max_retry_after.

#include "protocol/retry_after.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace kinformer;
using kinformer::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'764'000'000));
  if (auto wait = parse_retry_after(text, now))
    require(wait->count() >= 0 && *wait <= max_retry_after, "a wait out of bounds");
  return 0;
}
