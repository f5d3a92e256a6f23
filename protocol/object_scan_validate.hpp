#pragma once
// The scans' fast path (private to object_scan.cpp): simdjson's DOM parser validates a whole
// text about twice as fast as walking every value On-Demand, so a text it accepts is then walked
// only for the metadata. Compiled without the kernels' flags: the DOM parser picks its own kernel
// at run time, and its inline code must not be built with instructions every CPU lacks.

#include <optional>
#include <string_view>

namespace kinformer {

// Whether `padded` (scan_padding readable past its end) is valid JSON that the walk would also
// accept. False when the walk must decide: invalid text, too large (over 32 KiB) or too deep for
// the fast path, or a number the walk checks further (a zero that may be an exponent beyond 32
// bits).
bool validate_fast(std::string_view padded);

// validate_fast() for a text that must be one JSON object: how many of its members are named
// kind, apiVersion or metadata (the walk may stop once it has read them all, a repeated one
// included); nullopt when the walk must decide.
std::optional<int> validate_object_fast(std::string_view padded);

} // namespace kinformer
