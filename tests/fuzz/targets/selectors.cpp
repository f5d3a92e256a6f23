// Label and field selector text, as it comes in a query string or a config file.
// Properties: no crash; a selector that parses prints as text that parses back to itself.

#include "protocol/selector.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace kinformer;
using kinformer::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto labels = label_selector::parse(text)) {
    auto again = label_selector::parse(labels->to_string());
    require(again.ok(), "a label selector's canonical form does not parse");
    require(*again == *labels, "a label selector's canonical form means something else");
  }
  if (auto fields = field_selector::parse(text)) {
    auto again = field_selector::parse(fields->to_string());
    require(again.ok(), "a field selector's canonical form does not parse");
    require(*again == *fields, "a field selector's canonical form means something else");
  }
  return 0;
}
