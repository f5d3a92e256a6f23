#pragma once
// The scans' fast path, its second half (private to object_scan_validate.cpp): JSON's grammar
// checked over the positions simdjson's first stage found, without building a tree.
//
// Why not simdjson's second stage: it writes a tape of every value and copies every string into
// a buffer of its own, only for the scan to throw both away and read the positions again. In a
// watch drained at ~120,000 events/s it was 11% of kinformer-watch's samples. The first stage
// has already checked UTF-8, closed every string and refused control characters inside them;
// what is left is the order of the tokens, the escapes inside strings, the numbers' syntax and
// the literals.
//
// Conservative by design: the full walk (object_scan_kernel.ipp) stays the judge of anything
// unusual. A text this accepts, the walk accepts too; a text this refuses, the walk decides:
// - a \u escape naming a surrogate (Boost.JSON checks that they pair up);
// - a number of more than 32 characters, or with more than two exponent digits (the walk
//   checks the exponent against what Boost.JSON reads);
// - nesting deeper than max_grammar_depth.

#include "protocol/object_scan_validate.hpp"

#include <string_view>

namespace kinformer {

// Below the walk's limit of 256.
inline constexpr int max_grammar_depth = 250;

struct grammar_check {
  bool accepted = false;
  // Members of the root object named kind, apiVersion or metadata, by their text as it is (as
  // the structural read compares keys): a read may stop once it has read that many.
  int type_and_metadata_members = 0;
};

// Whether `text` (readable scan_padding bytes past its end) is one JSON value, given
// `structurals`, the positions simdjson's first stage found in it followed by its size.
grammar_check check_grammar(std::string_view text, structural_positions structurals);

} // namespace kinformer
