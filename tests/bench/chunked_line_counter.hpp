#pragma once
// Counts the lines (watch events) of a chunked HTTP/1.1 body as its bytes arrive, in pieces of any
// size, without parsing them: the raw watch readers of the benchmarks measure the server's rate,
// so the reader does as little as it can. Chunk extensions and trailers are skipped.

#include <cstdint>
#include <string_view>

namespace kinformer::bench {

class chunked_line_counter {
public:
  // Consumes the next bytes of the body. False on a malformed chunk head or chunk end; the
  // counter then stays failed.
  bool feed(std::string_view bytes);

  std::uint64_t lines() const noexcept { return lines_; }
  std::uint64_t data_bytes() const noexcept { return data_bytes_; }
  // The last (zero-size) chunk has arrived.
  bool ended() const noexcept { return state_ == state::ended; }
  bool failed() const noexcept { return state_ == state::failed; }

private:
  enum class state {
    size,      // hex digits of a chunk's size
    size_rest, // extensions, up to the head's LF
    data,      // the chunk's bytes
    data_cr,   // the CR after them
    data_lf,   // the LF after them
    ended,     // the last chunk's head has been read: what follows (trailers) is ignored
    failed,
  };

  state state_ = state::size;
  std::uint64_t size_ = 0;      // of the chunk whose head is being read
  unsigned size_digits_ = 0;    // hex digits read so far (a head needs one, 16 at most)
  std::uint64_t data_left_ = 0; // bytes of the current chunk still to come
  std::uint64_t lines_ = 0;
  std::uint64_t data_bytes_ = 0;
};

} // namespace kinformer::bench
