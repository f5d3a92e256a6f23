#include "tests/bench/raw_http.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace kinformer::bench {
namespace {

constexpr std::size_t read_size = 1 << 20;

bool iequals_prefix(std::string_view line, std::string_view prefix) {
  if (line.size() < prefix.size())
    return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != prefix[i])
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

} // namespace

raw_http_connection::raw_http_connection(int fd) : fd_(fd), buffer_(read_size * 2) {}

raw_http_connection::raw_http_connection(raw_http_connection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)), begin_(other.begin_),
      end_(other.end_), body_(other.body_), closed_(other.closed_) {}

raw_http_connection& raw_http_connection::operator=(raw_http_connection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
    begin_ = other.begin_;
    end_ = other.end_;
    body_ = other.body_;
    closed_ = other.closed_;
  }
  return *this;
}

raw_http_connection::~raw_http_connection() {
  if (fd_ >= 0)
    ::close(fd_);
}

result<raw_http_connection> raw_http_connection::connect(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return make_error(errc::io, std::string("socket: ") + std::strerror(errno));
  raw_http_connection out(fd);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    return make_error(errc::io, std::string("connect: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return out;
}

status_result raw_http_connection::send_get(std::string_view target) {
  std::string request = "GET ";
  request.append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n");
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      return make_error(errc::io, std::string("send: ") + std::strerror(errno));
    sent += static_cast<std::size_t>(n);
  }
  return ok_v;
}

bool raw_http_connection::fill() {
  if (begin_ == end_) {
    begin_ = end_ = 0;
  } else if (buffer_.size() - end_ < read_size) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buffer_.size() - end_ < read_size)
      buffer_.resize(end_ + read_size);
  }
  ssize_t n = ::recv(fd_, buffer_.data() + end_, buffer_.size() - end_, 0);
  if (n <= 0)
    return false;
  end_ += static_cast<std::size_t>(n);
  return true;
}

result<raw_http_connection::response_head> raw_http_connection::read_head() {
  for (;;) {
    std::string_view unread(buffer_.data() + begin_, end_ - begin_);
    auto at = unread.find("\r\n\r\n");
    if (at != std::string_view::npos) {
      std::string_view head = unread.substr(0, at + 2);
      begin_ += at + 4;
      response_head out;
      auto eol = head.find("\r\n");
      std::string_view status_line = head.substr(0, eol);
      if (!status_line.starts_with("HTTP/1.1 ") || status_line.size() < 12)
        return make_error(errc::io, "not an HTTP/1.1 response: " + std::string(status_line));
      std::from_chars(status_line.data() + 9, status_line.data() + 12, out.code);
      for (std::size_t pos = eol + 2; pos < head.size();) {
        auto next = head.find("\r\n", pos);
        std::string_view line = head.substr(pos, next - pos);
        pos = next + 2;
        if (iequals_prefix(line, "content-length:")) {
          auto value = trim(line.substr(15));
          std::from_chars(value.data(), value.data() + value.size(), out.content_length);
        } else if (iequals_prefix(line, "transfer-encoding:")) {
          out.chunked = trim(line.substr(18)) == "chunked";
        }
      }
      return out;
    }
    if (!fill())
      return make_error(errc::io, "connection closed before the response head");
  }
}

result<std::uint64_t> raw_http_connection::read_body(std::uint64_t length,
                                                     std::string& first_bytes) {
  std::uint64_t received = 0;
  first_bytes.clear();
  while (received < length) {
    if (begin_ == end_ && !fill())
      return make_error(errc::io, "connection closed after " + std::to_string(received) + " of " +
                                      std::to_string(length) + " body bytes");
    std::size_t take =
        static_cast<std::size_t>(std::min<std::uint64_t>(end_ - begin_, length - received));
    if (first_bytes.size() < 256)
      first_bytes.append(buffer_.data() + begin_, std::min(take, 256 - first_bytes.size()));
    begin_ += take;
    received += take;
  }
  return received;
}

result<raw_http_connection::stream_counts>
raw_http_connection::read_lines(std::chrono::milliseconds wait) {
  if (begin_ == end_ && !body_.ended() && !closed_) {
    pollfd readable{fd_, POLLIN, 0};
    int ready = ::poll(&readable, 1, static_cast<int>(wait.count()));
    if (ready < 0 && errno != EINTR)
      return make_error(errc::io, std::string("poll: ") + std::strerror(errno));
    if (ready > 0 && !fill())
      closed_ = true;
  }
  // What read_head left behind is the body's first bytes.
  if (!body_.feed({buffer_.data() + begin_, end_ - begin_}))
    return make_error(errc::io, "malformed chunked body after " +
                                    std::to_string(body_.data_bytes()) + " bytes");
  begin_ = end_;
  return stream_counts{body_.lines(), body_.data_bytes(), body_.ended() || closed_};
}

result<raw_http_connection::stream_counts> raw_http_connection::count_lines(std::uint64_t lines) {
  for (;;) {
    auto counts = read_lines(std::chrono::milliseconds(-1));
    if (!counts || counts->ended || counts->lines >= lines)
      return counts;
  }
}

} // namespace kinformer::bench
