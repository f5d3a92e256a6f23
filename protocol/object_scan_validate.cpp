#include "protocol/object_scan_validate.hpp"

#include <simdjson.h>

#include <cstdint>
#include <new>

namespace kinformer {

namespace {

// The DOM parser's tape takes 8 bytes per byte of text on every thread that scans: larger texts
// are walked instead.
constexpr std::size_t max_bytes = 64 * 1024;
// Below the walk's limit of 256: what this accepts, the walk accepts too.
constexpr std::size_t max_depth = 250;

simdjson::dom::parser& thread_parser() {
  thread_local simdjson::dom::parser parser = [] {
    simdjson::dom::parser p(max_bytes);
    if (p.allocate(4096, max_depth) != simdjson::SUCCESS)
      throw std::bad_alloc();
    return p;
  }();
  return parser;
}

// Whether a parsed document may hold a double of zero. simdjson reads an exponent beyond a
// 32-bit int (4e-99999999999) as zero where Boost.JSON refuses it, and object::tree() must read
// every object the scan accepts; the walk tells the two apart. Every word of the tape is looked
// at, a number's value word too: one that merely looks like a zero double's tag sends the text to
// the walk, which is slower, never wrong, and one loop without branches on the tag is faster.
bool may_hold_zero_double(const simdjson::dom::document& doc) {
  const std::uint64_t* tape = doc.tape.get();
  const std::uint64_t end = tape[0] & simdjson::internal::JSON_VALUE_MASK; // the root's last word
  bool found = false;
  for (std::uint64_t i = 1; i < end; ++i)
    found |= (tape[i] >> 56) == 'd' && (tape[i + 1] << 1) == 0; // +0.0 or -0.0
  return found;
}

bool parse(std::string_view padded, simdjson::dom::element& root) {
  if (padded.size() > max_bytes)
    return false;
  auto& parser = thread_parser();
  return parser.parse(padded.data(), padded.size(), false).get(root) == simdjson::SUCCESS &&
         !may_hold_zero_double(parser.doc);
}

} // namespace

bool validate_fast(std::string_view padded) {
  simdjson::dom::element root;
  return parse(padded, root);
}

std::optional<int> validate_object_fast(std::string_view padded) {
  simdjson::dom::element element;
  simdjson::dom::object root;
  if (!parse(padded, element) || element.get_object().get(root) != simdjson::SUCCESS)
    return std::nullopt;
  int read_by_the_walk = 0;
  for (auto [key, value] : root)
    read_by_the_walk += key == "kind" || key == "apiVersion" || key == "metadata";
  return read_by_the_walk;
}

} // namespace kinformer
