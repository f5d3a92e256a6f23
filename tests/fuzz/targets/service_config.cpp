// kinformerd's YAML configuration text.
// Properties: no crash, no exception escaping: a clear error or a checked configuration.

#include "app/kinformerd/config.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace kinformer;
using kinformer::service::parse_config_text;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = parse_config_text(text, "fuzz.yaml");
  if (!config)
    fuzz::require(!config.err().message.empty(), "an error without a message");
  return 0;
}
