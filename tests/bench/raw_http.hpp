#pragma once
// A deliberately minimal HTTP/1.1 client over a blocking loopback socket, for sim_bench: it
// measures the simulator's serving, so the client does as little as possible (no parsing of the
// JSON, no allocation per event). Plain POSIX sockets: no Beast, nothing of the project's client.

#include "protocol/result.hpp"
#include "tests/bench/chunked_line_counter.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer::bench {

class raw_http_connection {
public:
  // Connects to 127.0.0.1:port.
  static result<raw_http_connection> connect(std::uint16_t port);

  raw_http_connection(raw_http_connection&& other) noexcept;
  raw_http_connection& operator=(raw_http_connection&& other) noexcept;
  raw_http_connection(const raw_http_connection&) = delete;
  raw_http_connection& operator=(const raw_http_connection&) = delete;
  ~raw_http_connection();

  // Sends "GET target HTTP/1.1" with a Host header.
  status_result send_get(std::string_view target);

  struct response_head {
    unsigned code = 0;
    bool chunked = false;
    std::uint64_t content_length = 0;
  };
  // Reads the status line and headers.
  result<response_head> read_head();

  // Reads a Content-Length body; `first_bytes` receives its first bytes (up to 256), for a
  // sanity check of what was sent.
  result<std::uint64_t> read_body(std::uint64_t length, std::string& first_bytes);

  // A chunked watch body's lines (watch events) and data bytes so far, counted without parsing.
  struct stream_counts {
    std::uint64_t lines = 0;
    std::uint64_t bytes = 0;
    bool ended = false; // the terminating chunk or EOF has come
  };
  // Reads the chunked body until it holds `lines` lines in all, or the stream ends.
  result<stream_counts> count_lines(std::uint64_t lines);
  // Reads once, waiting at most `wait` for bytes (none came: the counts are unchanged), for a
  // reader that does something between reads. Fails on a malformed chunk or a socket error.
  result<stream_counts> read_lines(std::chrono::milliseconds wait);

private:
  explicit raw_http_connection(int fd);
  // Appends more bytes from the socket to buffer_; false at EOF or on error.
  bool fill();

  int fd_ = -1;
  std::vector<char> buffer_;
  std::size_t begin_ = 0; // unread bytes are buffer_[begin_, end_)
  std::size_t end_ = 0;
  chunked_line_counter body_;
  bool closed_ = false; // EOF before the last chunk
};

} // namespace kinformer::bench
