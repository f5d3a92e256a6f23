#include "protocol/object_scan_validate.hpp"

#include <simdjson.h>

#include <cstdint>

namespace kinformer {

namespace {

// Larger texts are walked. Two reasons:
// - the DOM parser keeps about 14 bytes per byte of the largest text it has seen (tape, strings,
//   structural indexes), on every thread that scans, for the thread's life;
// - a number of more than 19 digits goes through simdjson's slow path, which stops reading its
//   exponent at 65,536: some 65,000 digits can then offset an exponent beyond what Boost.JSON
//   reads (1000...0e-6553600000) into a double that is not zero, which the check below would not
//   see. 32 KiB leaves no room for that.
constexpr std::size_t max_bytes = 32 * 1024;
// Below the walk's limit of 256: what this accepts, the walk accepts too.
constexpr std::size_t max_depth = 250;

// Null when the parser cannot be set up: the walk then does the work.
simdjson::dom::parser* thread_parser() {
  thread_local simdjson::dom::parser parser(max_bytes);
  thread_local bool ready = parser.allocate(4096, max_depth) == simdjson::SUCCESS;
  return ready ? &parser : nullptr;
}

// Whether a parsed document may hold a double of zero. simdjson reads an exponent beyond a
// 32-bit int (4e-99999999999) as zero where Boost.JSON refuses it, and object::tree() must read
// every object the scan accepts; the walk tells the two apart. Every word of the tape is looked
// at, a number's value word too, which keeps the loop simple: a value word that merely looks like
// a zero double's tag sends the text to the walk, which is slower, never wrong.
bool may_hold_zero_double(const simdjson::dom::document& doc) {
  const std::uint64_t* tape = doc.tape.get();
  // The first root word's payload is one past the last root word; a double's value word always
  // comes before that last word, so tape[i + 1] stays inside what the parse wrote.
  const std::uint64_t end = tape[0] & simdjson::internal::JSON_VALUE_MASK;
  // Without a branch (& rather than &&): one word in eight or more is a double's tag.
  std::uint64_t found = 0;
  for (std::uint64_t i = 1; i + 1 < end; ++i)
    found |= std::uint64_t{(tape[i] >> 56) == 'd'} & std::uint64_t{(tape[i + 1] << 1) == 0};
  return found != 0;
}

// The parser that accepted the text, or null.
simdjson::dom::parser* parse(std::string_view padded, simdjson::dom::element& root) {
  simdjson::dom::parser* parser = padded.size() <= max_bytes ? thread_parser() : nullptr;
  if (parser && parser->parse(padded.data(), padded.size(), false).get(root) == simdjson::SUCCESS &&
      !may_hold_zero_double(parser->doc))
    return parser;
  return nullptr;
}

// The first stage's positions, which stay in the parser after the second stage has used them
// (`implementation` is public for such access, though documented as private: Debian's 3.0.1 is
// the version this is built against). The size that follows the last position is included.
structural_positions structurals(const simdjson::dom::parser& parser) {
  const auto& stage1 = *parser.implementation;
  return {stage1.structural_indexes.get(), stage1.n_structural_indexes + std::size_t{1}};
}

} // namespace

std::optional<structural_positions> validate_fast(std::string_view padded) {
  simdjson::dom::element root;
  if (simdjson::dom::parser* parser = parse(padded, root))
    return structurals(*parser);
  return std::nullopt;
}

std::optional<validated_object> validate_object_fast(std::string_view padded) {
  simdjson::dom::element element;
  simdjson::dom::object root;
  simdjson::dom::parser* parser = parse(padded, element);
  if (!parser || element.get_object().get(root) != simdjson::SUCCESS)
    return std::nullopt;
  validated_object validated{0, structurals(*parser)};
  for (auto [key, value] : root)
    validated.type_and_metadata_members +=
        key == "kind" || key == "apiVersion" || key == "metadata";
  return validated;
}

} // namespace kinformer
