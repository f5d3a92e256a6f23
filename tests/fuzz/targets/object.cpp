// One object's text through the ingest scanner (simdjson), checked against Boost.JSON.
// Properties: no crash; the scanner accepts only what Boost.JSON accepts; the metadata it reads
// does not change when the same value is written differently (whitespace, escapes, key order of
// other members); a text it accepts comes back byte for byte.

#include "protocol/object.hpp"
#include "tests/fuzz/fuzz_input.hpp"

#include <boost/json.hpp>

#include <string>

using namespace kinformer;
using kinformer::fuzz::require;

namespace {

std::string describe(const object& obj) {
  const auto& m = obj.meta();
  std::string out;
  for (auto part : {m.namespace_, m.name, m.uid, m.resource_version, m.deletion_timestamp,
                    obj.kind(), obj.api_version()}) {
    out.append(part);
    out += '\0';
  }
  out += std::to_string(m.generation);
  for (const auto* map : {&m.labels, &m.annotations})
    for (const auto& [key, value] : *map) {
      out.append(key);
      out += '=';
      out.append(value);
      out += '\0';
    }
  for (const auto& ref : m.owner_references) {
    for (auto part : {ref.api_version, ref.kind, ref.name, ref.uid})
      out.append(part);
    out += ref.controller ? 'c' : '-';
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto scanned = object::parse(text);
  if (!scanned)
    return 0;
  require((*scanned)->json_text() == text, "the stored text differs from the text received");

  boost::json::parse_options options;
  options.max_depth = 100000; // the scanner's own limit is what is tested, not Boost's default
  boost::system::error_code ec;
  boost::json::monotonic_resource arena;
  auto tree = boost::json::parse(text, ec, &arena, options);
  require(!ec, "the scanner accepted text Boost.JSON rejects");

  const std::string rewritten = boost::json::serialize(tree);
  auto again = object::parse(rewritten);
  require(again.ok(), "the scanner rejects the same value written by Boost.JSON");
  require(describe(**scanned) == describe(**again),
          "the metadata read depends on how the value was written");
  return 0;
}
