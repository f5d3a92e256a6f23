#pragma once
// A message written in pieces, each from where its bytes already are: a watch event is its
// literal head, the stored object's own bytes and its literal tail, so that serving an object to
// any number of watchers allocates nothing the object's size. Each piece's owner keeps its bytes
// alive until they are written.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer::apiserver {

struct byte_piece {
  std::shared_ptr<const void> owner; // null: bytes that live as long as the program (literals)
  std::string_view bytes;
};

class byte_pieces {
public:
  byte_pieces() = default;
  // One piece: `text`, kept in a shared string of its own.
  explicit byte_pieces(std::string text);
  // One piece: `*text`, shared.
  explicit byte_pieces(std::shared_ptr<const std::string> text);

  // Bytes that live as long as the program, e.g. a string literal.
  void append_literal(std::string_view bytes);
  // Bytes `owner` keeps alive.
  void append_shared(std::shared_ptr<const void> owner, std::string_view bytes);
  void append(std::string text);
  void append(byte_pieces&& other);
  void reserve(std::size_t pieces) { pieces_.reserve(pieces); }

  std::size_t size() const { return size_; } // bytes in all
  bool empty() const { return size_ == 0; }
  const std::vector<byte_piece>& pieces() const { return pieces_; }
  // The pieces, leaving this empty.
  std::vector<byte_piece> release();
  // The bytes in one string (tests, logs).
  std::string joined() const;

private:
  std::vector<byte_piece> pieces_; // none empty
  std::size_t size_ = 0;
};

} // namespace kinformer::apiserver
