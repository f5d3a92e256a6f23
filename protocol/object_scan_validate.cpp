#include "protocol/object_scan_validate.hpp"
#include "protocol/object_scan_grammar.hpp"

#include <simdjson.h>

#include <cstdint>

namespace kinformer {

namespace {

// Larger texts are walked: the parser keeps about 14 bytes per byte of the largest text it has
// seen (positions, and the tape and strings of a DOM it no longer builds), on every thread that
// scans, for the thread's life.
constexpr std::size_t max_bytes = 32 * 1024;

// Null when the parser cannot be set up: the walk then does the work.
simdjson::dom::parser* thread_parser() {
  thread_local simdjson::dom::parser parser(max_bytes);
  thread_local bool ready = parser.allocate(4096, max_grammar_depth) == simdjson::SUCCESS;
  return ready ? &parser : nullptr;
}

// The first stage's positions, then the text's size, when simdjson's first stage accepts the
// text (`implementation` is public for such access, though documented as private: Debian's
// 3.0.1 is the version this is built against). The first stage checks UTF-8, closes every
// string and refuses control characters inside them; check_grammar() does the rest, where
// simdjson's second stage would also build a tape and copy every string.
std::optional<structural_positions> first_stage(std::string_view padded) {
  simdjson::dom::parser* parser = padded.size() <= max_bytes ? thread_parser() : nullptr;
  if (!parser)
    return std::nullopt;
  if (padded.size() > parser->capacity() &&
      parser->allocate(padded.size(), max_grammar_depth) != simdjson::SUCCESS)
    return std::nullopt;
  auto& stage1 = *parser->implementation;
  if (stage1.stage1(reinterpret_cast<const std::uint8_t*>(padded.data()), padded.size(),
                    simdjson::stage1_mode::regular) != simdjson::SUCCESS)
    return std::nullopt;
  return structural_positions{stage1.structural_indexes.get(),
                              stage1.n_structural_indexes + std::size_t{1}};
}

} // namespace

std::optional<structural_positions> validate_fast(std::string_view padded) {
  auto positions = first_stage(padded);
  if (positions && check_grammar(padded, *positions).accepted)
    return positions;
  return std::nullopt;
}

std::optional<validated_object> validate_object_fast(std::string_view padded) {
  auto positions = first_stage(padded);
  if (!positions || padded[(*positions)[0]] != '{')
    return std::nullopt;
  const grammar_check grammar = check_grammar(padded, *positions);
  if (!grammar.accepted)
    return std::nullopt;
  return validated_object{grammar.type_and_metadata_members, *positions};
}

} // namespace kinformer
