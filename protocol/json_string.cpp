#include "protocol/json_string.hpp"

namespace kinformer {

namespace {

// What each byte below 0x20, and `"` and `\`, is written as after its backslash: 'u' for
// \u00xx, 0 for a byte written as it is.
constexpr char escape_letter(unsigned char c) noexcept {
  switch (c) {
  case '"':
    return '"';
  case '\\':
    return '\\';
  case '\b':
    return 'b';
  case '\t':
    return 't';
  case '\n':
    return 'n';
  case '\f':
    return 'f';
  case '\r':
    return 'r';
  default:
    return c < 0x20 ? 'u' : 0;
  }
}

} // namespace

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  std::size_t run = 0; // start of the bytes not yet appended, all written as they are
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const char letter = escape_letter(c);
    if (letter == 0)
      continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    out += '\\';
    out += letter;
    if (letter == 'u') {
      out += "00";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
  out.append(text.data() + run, text.size() - run);
  out += '"';
}

} // namespace kinformer
