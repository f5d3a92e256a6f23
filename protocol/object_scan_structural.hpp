#pragma once
// The scans' fast read (private to object_scan.cpp): once the fast path has validated a text
// (object_scan_validate.hpp), its metadata is read over the structural positions simdjson's
// first stage found. The
// text is then indexed once, not a second time by an On-Demand walk. The read trusts the text's
// grammar, which the validation has checked, and checks only the types of what it records.

#include "protocol/object_scan.hpp"
#include "protocol/object_scan_validate.hpp"

#include <string_view>

namespace kinformer {

// Reads an object validate_object_fast() accepted as scan_object() does. False when a metadata
// field has the wrong type: the full walk then says which.
bool read_structural_object(std::string_view padded_text, const validated_object& validated,
                            object_scan& out);

// Reads a watch line validate_fast() accepted as scan_watch_line() does. False when the walk must
// say what is wrong with its object.
bool read_structural_watch_line(std::string_view padded_line, structural_positions structurals,
                                watch_line_scan& out);

} // namespace kinformer
