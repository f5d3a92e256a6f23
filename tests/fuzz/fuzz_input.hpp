#pragma once
// What a fuzz target makes of libFuzzer's bytes: the first byte seeds where the rest is cut into
// chunks, so that one input explores one way of splitting a stream (as TCP reads would).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace kinformer::fuzz {

class fuzz_input {
public:
  fuzz_input(const std::uint8_t* data, std::size_t size)
      : seed_(size > 0 ? data[0] : 0),
        text_(reinterpret_cast<const char*>(data) + (size > 0 ? 1 : 0), size > 0 ? size - 1 : 0) {}

  // The bytes after the seed.
  std::string_view text() const { return text_; }

  // text() cut into chunks of 1 to 64 bytes (now and then a large one), the same cuts for the
  // same seed.
  std::vector<std::string_view> chunks() const {
    std::vector<std::string_view> out;
    std::uint32_t state = 0x9e3779b9u ^ seed_;
    std::size_t at = 0;
    while (at < text_.size()) {
      state ^= state << 13;
      state ^= state >> 17;
      state ^= state << 5;
      std::size_t length = (state % 8 == 0) ? 1 + state % 4096 : 1 + state % 64;
      if (length > text_.size() - at)
        length = text_.size() - at;
      out.push_back(text_.substr(at, length));
      at += length;
    }
    return out;
  }

private:
  std::uint8_t seed_;
  std::string_view text_;
};

// A property the target checks does not hold: report it and abort, so libFuzzer keeps the input.
[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what);
  std::abort();
}

inline void require(bool holds, const char* what) {
  if (!holds)
    violated(what);
}

} // namespace kinformer::fuzz
