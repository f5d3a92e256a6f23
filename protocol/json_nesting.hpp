#pragma once
// Finds where a JSON object or array ends in text that arrives in pieces: the byte that brings
// the nesting back to zero, outside strings. It does not validate (the object scan does that
// once the whole value is in); it only has to agree with any valid JSON on where a value ends.
//
// Where the CPU has AVX2 and PCLMUL, 64 bytes are classified at a time (quotes, escapes and
// brackets as bit masks, strings by a carry-less prefix XOR, as simdjson's first stage does),
// and the brackets are walked one by one only in blocks where the nesting could reach zero.

#include <cstddef>
#include <cstdint>

namespace kinformer {

// The scan's state between two pieces of text.
struct json_nesting {
  std::uint64_t depth = 0; // brackets opened and not yet closed
  bool in_string = false;
  bool escaped = false; // inside a string, the next byte is escaped

  // Scans [p, p + n) from this state. Returns the offset one past the byte that closes the value
  // (the state is then depth 0, outside a string), or `n` with the state carried to the next
  // piece when the value does not end in these bytes; `ended` tells the two apart.
  std::size_t scan(const char* p, std::size_t n, bool& ended);
};

} // namespace kinformer
