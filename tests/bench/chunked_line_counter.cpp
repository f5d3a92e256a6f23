#include "tests/bench/chunked_line_counter.hpp"

#include <algorithm>
#include <charconv>

namespace kinformer::bench {

namespace {

// The value of one hex digit, or -1.
int hex_value(char c) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(&c, &c + 1, value, 16);
  return ec == std::errc() ? static_cast<int>(value) : -1;
}

} // namespace

bool chunked_line_counter::feed(std::string_view bytes) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    switch (state_) {
    case state::size: {
      char c = bytes[at++];
      if (int digit = hex_value(c); digit >= 0 && size_digits_ < 16) {
        size_ = size_ * 16 + static_cast<std::uint64_t>(digit);
        ++size_digits_;
      } else if ((c == ';' || c == '\r') && size_digits_ > 0) {
        state_ = state::size_rest;
      } else if (c == '\n' && size_digits_ > 0) {
        state_ = size_ == 0 ? state::ended : state::data;
        data_left_ = size_;
      } else {
        state_ = state::failed;
      }
      break;
    }
    case state::size_rest:
      if (bytes[at++] == '\n') {
        state_ = size_ == 0 ? state::ended : state::data;
        data_left_ = size_;
      }
      break;
    case state::data: {
      auto take = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size() - at, data_left_));
      const char* begin = bytes.data() + at;
      lines_ += static_cast<std::uint64_t>(std::count(begin, begin + take, '\n'));
      data_bytes_ += take;
      data_left_ -= take;
      at += take;
      if (data_left_ == 0)
        state_ = state::data_cr;
      break;
    }
    case state::data_cr:
      state_ = bytes[at++] == '\r' ? state::data_lf : state::failed;
      break;
    case state::data_lf:
      if (bytes[at++] == '\n') {
        state_ = state::size;
        size_ = 0;
        size_digits_ = 0;
      } else {
        state_ = state::failed;
      }
      break;
    case state::ended:
      return true;
    case state::failed:
      return false;
    }
  }
  return state_ != state::failed;
}

} // namespace kinformer::bench
