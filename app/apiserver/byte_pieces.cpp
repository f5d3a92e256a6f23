// A message in pieces. See byte_pieces.hpp.

#include "app/apiserver/byte_pieces.hpp"

#include <iterator>
#include <utility>

namespace kinformer::apiserver {

byte_pieces::byte_pieces(std::string text) {
  append(std::move(text));
}

byte_pieces::byte_pieces(std::shared_ptr<const std::string> text) {
  if (text) {
    const std::string_view bytes = *text;
    append_shared(std::move(text), bytes);
  }
}

void byte_pieces::append_literal(std::string_view bytes) {
  append_shared(nullptr, bytes);
}

void byte_pieces::append_shared(std::shared_ptr<const void> owner, std::string_view bytes) {
  if (bytes.empty())
    return;
  size_ += bytes.size();
  pieces_.push_back({std::move(owner), bytes});
}

void byte_pieces::append(std::string text) {
  if (text.empty())
    return;
  auto owned = std::make_shared<const std::string>(std::move(text));
  const std::string_view bytes = *owned;
  append_shared(std::move(owned), bytes);
}

void byte_pieces::append(byte_pieces&& other) {
  if (pieces_.empty()) {
    *this = std::move(other);
  } else {
    pieces_.insert(pieces_.end(), std::make_move_iterator(other.pieces_.begin()),
                   std::make_move_iterator(other.pieces_.end()));
    size_ += other.size_;
  }
  other.pieces_.clear();
  other.size_ = 0;
}

std::vector<byte_piece> byte_pieces::release() {
  size_ = 0;
  return std::exchange(pieces_, {});
}

std::string byte_pieces::joined() const {
  std::string out;
  out.reserve(size_);
  for (const auto& piece : pieces_)
    out.append(piece.bytes);
  return out;
}

} // namespace kinformer::apiserver
