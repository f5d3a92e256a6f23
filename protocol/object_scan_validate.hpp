#pragma once
// The scans' fast path (private to object_scan.cpp): simdjson's DOM parser validates a whole
// text about twice as fast as walking every value On-Demand, so a text it accepts is then read
// only for the metadata, over the structural positions the DOM parser's first stage found
// (object_scan_structural.hpp). Compiled without the kernels' flags: the DOM parser picks its
// own kernel at run time, and its inline code must not be built with instructions every CPU
// lacks.

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
// large (over 32 KiB) or too deep for the fast path, or a number the walk checks further (a zero
// that may be an exponent beyond 32 bits).
std::optional<structural_positions> validate_fast(std::string_view padded);

struct validated_object {
  // How many members are named kind, apiVersion or metadata: a read may stop once it has read
  // them all, a repeated one included.
  int type_and_metadata_members = 0;
  structural_positions structurals;
};

// validate_fast() for a text that must be one JSON object.
std::optional<validated_object> validate_object_fast(std::string_view padded);

} // namespace kinformer
