#include "protocol/base64.hpp"

#include <array>
#include <cstdint>

namespace kinformer {

namespace {
constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
} // namespace

std::string encode_base64(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < data.size(); i += 3) {
    unsigned n = static_cast<unsigned char>(data[i]) << 16;
    if (i + 1 < data.size())
      n |= static_cast<unsigned char>(data[i + 1]) << 8;
    if (i + 2 < data.size())
      n |= static_cast<unsigned char>(data[i + 2]);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += i + 1 < data.size() ? alphabet[(n >> 6) & 63] : '=';
    out += i + 2 < data.size() ? alphabet[n & 63] : '=';
  }
  return out;
}

result<std::string> decode_base64(std::string_view text) {
  static constexpr auto table = [] {
    std::array<signed char, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 64; ++i)
      t[static_cast<unsigned char>(alphabet[i])] = static_cast<signed char>(i);
    return t;
  }();
  std::string out;
  std::uint32_t bits = 0;
  int nbits = 0;
  std::size_t symbols = 0, padding = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
      continue;
    if (c == '=') {
      ++padding;
      ++symbols;
      continue;
    }
    const int v = table[static_cast<unsigned char>(c)];
    if (v < 0 || padding > 0)
      return make_error(errc::invalid_argument, "not valid base64");
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    nbits += 6;
    ++symbols;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xff));
    }
  }
  if (symbols % 4 != 0 || padding > 2)
    return make_error(errc::invalid_argument, "not valid base64 (truncated or bad padding)");
  return out;
}

} // namespace kinformer
