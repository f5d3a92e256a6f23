#pragma once
// A TCP connection, or TLS over one, as one concrete stream type with type-erased completions.
// Beast's and Asio's composed operations (HTTP reads and writes, net::async_write) are then
// instantiated once per call site for this type, and the TCP and TLS layers' own operations
// once, in byte_stream.cpp, instead of once per stream type and completion handler in every
// file that speaks HTTP (docs/ci.md: the HTTP server's file was 1.5 MB of code, 113 s to
// compile). Include it only where Beast's headers are wanted anyway.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <variant>

namespace kinformer {

// The first `Capacity` buffers of a buffer sequence, by value. An async_read_some or
// async_write_some may move fewer bytes than asked, so its caller's loop takes the rest.
template <class Buffer, std::size_t Capacity>
class buffer_list {
public:
  using value_type = Buffer;
  using const_iterator = const Buffer*;

  template <class Sequence>
  explicit buffer_list(const Sequence& sequence) {
    auto it = boost::asio::buffer_sequence_begin(sequence);
    const auto end = boost::asio::buffer_sequence_end(sequence);
    for (; it != end && size_ < Capacity; ++it)
      buffers_[size_++] = Buffer(*it);
  }

  const Buffer* begin() const noexcept { return buffers_.data(); }
  const Buffer* end() const noexcept { return buffers_.data() + size_; }

private:
  std::array<Buffer, Capacity> buffers_{};
  std::size_t size_ = 0;
};

// A completion handler of any type behind one type. Its executor is the one the handler is
// associated with (the stream's when none): Boost 1.81's any_completion_handler carries an
// executor that Beast's TLS layer cannot post through.
class stream_completion {
public:
  using executor_type = boost::asio::any_io_executor;

  template <class Handler>
  stream_completion(Handler&& handler, const executor_type& fallback)
      : executor_(boost::asio::get_associated_executor(handler, fallback)),
        call_(std::make_unique<holder<std::decay_t<Handler>>>(std::forward<Handler>(handler))) {}

  executor_type get_executor() const noexcept { return executor_; }

  void operator()(boost::system::error_code ec, std::size_t bytes) {
    auto call = std::move(call_); // once
    call->complete(ec, bytes);
  }

private:
  struct base {
    virtual ~base() = default;
    virtual void complete(boost::system::error_code ec, std::size_t bytes) = 0;
  };
  template <class Handler>
  struct holder final : base {
    explicit holder(Handler&& h) : handler(std::move(h)) {}
    void complete(boost::system::error_code ec, std::size_t bytes) override {
      std::move(handler)(ec, bytes);
    }
    Handler handler;
  };

  executor_type executor_;
  std::unique_ptr<base> call_;
};

class byte_stream {
public:
  using executor_type = boost::asio::any_io_executor;
  using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;
  // 64: Asio's own bound on the buffers of one system call.
  using write_buffers = buffer_list<boost::asio::const_buffer, 64>;
  using read_buffers = buffer_list<boost::asio::mutable_buffer, 8>;

  // Plain TCP; start_tls() turns it into TLS over the same connection.
  explicit byte_stream(boost::beast::tcp_stream tcp);
  byte_stream(byte_stream&&) noexcept;
  ~byte_stream();

  // TLS over the connection from here on (after a proxy's CONNECT, or once the first bytes
  // showed a TLS client). Only with no operation in flight.
  void start_tls(boost::asio::ssl::context& context);

  executor_type get_executor() noexcept;
  // The TCP layer: connect, timeouts, shutdown.
  boost::beast::tcp_stream& tcp() noexcept;
  // The TLS layer (handshake, the SSL object), or null while plain.
  tls_stream* tls() noexcept;

  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, read_buffers list) {
          read_some(list, stream_completion(std::move(handler), get_executor()));
        },
        token, read_buffers(buffers));
  }

  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, write_buffers list) {
          write_some(list, stream_completion(std::move(handler), get_executor()));
        },
        token, write_buffers(buffers));
  }

private:
  void read_some(const read_buffers& buffers, stream_completion handler);
  void write_some(const write_buffers& buffers, stream_completion handler);

  std::variant<boost::beast::tcp_stream, tls_stream> conn_;
};

} // namespace kinformer
