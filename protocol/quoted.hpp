#pragma once
// Text in double quotes, as error messages show what they refuse: `"abc" is not host:port`.

#include <string>
#include <string_view>

namespace kinformer {

inline std::string quoted(std::string_view text) {
  // Appended piecewise: GCC 12's -Wrestrict misfires on "literal" + std::string at -O2.
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  out += text;
  out += '"';
  return out;
}

} // namespace kinformer
