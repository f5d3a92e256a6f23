#pragma once
// Where a member is cut out of an object's text (private to the scans): what removes
// metadata.managedFields so that what is left is the same JSON without it.

#include "protocol/object_scan.hpp"

namespace kinformer {

// The range that removes the member whose key's opening quote is at `key` and whose value ends,
// but for whitespace and at most one comma, at `next` (the next member's opening quote, or the
// object's closing brace). Not the first member: from the comma before it to its value's end.
// The first: from its key to the next member's key, or to its value's end when it is the only
// one. Offsets are from `base`.
inline scanned_range member_cut(const char* base, const char* key, const char* next) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  auto back_over_space = [&](const char* p) {
    while (space(p[-1]))
      --p;
    return p; // one past the last byte that is not space
  };
  const char* value_end = back_over_space(next);
  const bool followed = value_end[-1] == ',';
  if (followed)
    value_end = back_over_space(value_end - 1);
  const char* before = back_over_space(key) - 1; // ',' or the object's '{'
  const char* begin = *before == ',' ? before : key;
  const char* end = *before == ',' || !followed ? value_end : next;
  return {static_cast<std::size_t>(begin - base), static_cast<std::size_t>(end - base), true};
}

} // namespace kinformer
