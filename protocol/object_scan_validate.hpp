#pragma once
// The scans' fast path (private to object_scan.cpp): simdjson's first stage finds where a text's
// structure is (and checks its UTF-8 and strings), check_grammar() checks the order of its tokens
// over those positions (object_scan_grammar.hpp), and a text both accept is then read only for
// the metadata, over the same positions (object_scan_structural.hpp). Compiled without the
// kernels' flags: simdjson picks its own kernel at run time, and its inline code must not be
// built with instructions every CPU lacks.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kinformer {

// Where simdjson's first stage found the text's structure, in text order: every brace, bracket,
// colon and comma, and the first byte of every scalar (a string's opening quote), then the
// text's size. Valid until this thread validates another text.
using structural_positions = std::span<const std::uint32_t>;

// Whether `padded` (scan_padding readable past its end) is valid JSON that the walk would also
// accept, and if so where its structure is. Nullopt when the walk must decide: invalid text, too
// large (over 32 KiB) or too deep for the fast path, or what check_grammar() leaves to the walk
// (a long number, a large exponent, a surrogate escape).
std::optional<structural_positions> validate_fast(std::string_view padded);

// JSON's whitespace: all the first stage skips between tokens.
inline bool json_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Where the token at `begin` ends, given `next`, where the next position (or the text) begins:
// no whitespace follows a token inside it, so the token is what lies before the whitespace.
inline const char* token_end(const char* begin, const char* next) noexcept {
  while (next > begin && json_space(next[-1]))
    --next;
  return next;
}

struct validated_object {
  // How many members are named kind, apiVersion or metadata: a read may stop once it has read
  // them all, a repeated one included.
  int type_and_metadata_members = 0;
  structural_positions structurals;
};

// validate_fast() for a text that must be one JSON object.
std::optional<validated_object> validate_object_fast(std::string_view padded);

} // namespace kinformer
