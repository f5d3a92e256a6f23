#pragma once
// A JSON string literal, for the documents and lines built by hand (list heads, bookmark
// objects, delta lines) around a name or a token, escaped exactly as Boost.JSON's serializer
// escapes it, without building a value first.

#include <string>
#include <string_view>

namespace kinformer {

// Appends "text" to `out`: `"` and `\` escaped, control characters as \b \t \n \f \r or
// \u00xx; every other byte, UTF-8 included, as it is.
void append_json_string(std::string& out, std::string_view text);

// "text", escaped as append_json_string() does.
inline std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

} // namespace kinformer
