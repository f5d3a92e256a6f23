#include "protocol/line_splitter.hpp"

#include <algorithm>
#include <cstring>

namespace kinformer {

line_splitter::line_splitter(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

status_result line_splitter::feed(std::string_view chunk, line_sink on_line) {
  std::size_t oversized = 0;
  while (!chunk.empty()) {
    const std::size_t newline = chunk.find('\n');
    const bool complete = newline != std::string_view::npos;
    const std::string_view piece = chunk.substr(0, newline);
    chunk = complete ? chunk.substr(newline + 1) : std::string_view{};

    if (skipping_oversized_) {
      skipping_oversized_ = !complete;
      continue;
    }
    if (partial_.size() + piece.size() > max_line_bytes_) {
      partial_.clear();
      skipping_oversized_ = !complete;
      ++oversized;
      continue;
    }
    if (!complete) {
      append_partial(piece);
      break;
    }
    // A line inside the chunk goes out as a view of it; only a straddling line is gathered.
    std::string_view line = piece;
    if (!partial_.empty()) {
      append_partial(piece);
      line = std::string_view(partial_.data(), partial_.size());
    }
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    on_line(line);
    partial_.clear(); // keeps the capacity for the next straddling line
  }
  if (oversized != 0)
    return make_error(errc::too_large, "skipped " + std::to_string(oversized) +
                                           " line(s) longer than the limit of " +
                                           std::to_string(max_line_bytes_) + " bytes");
  return ok_v;
}

status_result line_splitter::feed(std::string_view chunk, std::vector<std::string>& out) {
  return feed(chunk, [&out](std::string_view line) { out.emplace_back(line); });
}

status_result line_splitter::finish() {
  const std::size_t pending = partial_.size();
  reset();
  if (pending != 0)
    return make_error(errc::io, "stream ended inside a line (" + std::to_string(pending) +
                                    " bytes without a final newline): truncated");
  return ok_v;
}

void line_splitter::reset() noexcept {
  partial_.clear();
  skipping_oversized_ = false;
}

void line_splitter::append_partial(std::string_view bytes) {
  const std::size_t needed = partial_.size() + bytes.size();
  // Grow geometrically, but never reserve past the limit: a line can never need more.
  if (needed > partial_.capacity())
    partial_.reserve(std::min(max_line_bytes_, std::max(needed, 2 * partial_.capacity())));
  partial_.insert(partial_.end(), bytes.begin(), bytes.end());
}

// ---- line_buffer ----

line_buffer::line_buffer(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

std::span<char> line_buffer::prepare(std::size_t min_bytes) {
  if (capacity_ - end_ < min_bytes) {
    const std::size_t unread = end_ - begin_;
    if (capacity_ - unread >= min_bytes) {
      // Enough room once the taken lines are dropped: move the unread bytes to the front.
      std::memmove(data_.get(), data_.get() + begin_, unread);
    } else {
      const std::size_t size = std::max(unread + min_bytes, 2 * capacity_);
      std::unique_ptr<char[]> grown(new char[size]);
      if (unread != 0)
        std::memcpy(grown.get(), data_.get() + begin_, unread);
      data_ = std::move(grown);
      capacity_ = size;
    }
    begin_ = 0;
    end_ = unread;
  }
  return {data_.get() + end_, capacity_ - end_};
}

void line_buffer::commit(std::size_t bytes) noexcept {
  end_ = std::min(capacity_, end_ + bytes);
}

result<std::optional<std::string_view>> line_buffer::next_line() {
  const char* from = data_.get() + begin_;
  const std::size_t unread = end_ - begin_;
  const void* found =
      scanned_ < unread ? std::memchr(from + scanned_, '\n', unread - scanned_) : nullptr;
  if (!found) {
    scanned_ = unread;
    if (unread > max_line_bytes_)
      return make_error(errc::too_large, "a line longer than the limit of " +
                                             std::to_string(max_line_bytes_) + " bytes");
    return std::optional<std::string_view>{};
  }
  const std::size_t length = static_cast<const char*>(found) - from;
  if (length > max_line_bytes_)
    return make_error(errc::too_large, "a line of " + std::to_string(length) +
                                           " bytes, longer than the limit of " +
                                           std::to_string(max_line_bytes_) + " bytes");
  std::string_view line(from, length);
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  begin_ += length + 1;
  scanned_ = 0;
  return std::optional<std::string_view>(line);
}

status_result line_buffer::finish() const {
  if (begin_ != end_)
    return make_error(errc::io, "stream ended inside a line (" + std::to_string(end_ - begin_) +
                                    " bytes without a final newline): truncated");
  return ok_v;
}

} // namespace kinformer
