#include "protocol/stream/byte_stream.hpp"

#include <boost/asio/ssl/stream.hpp>

namespace kinformer {

byte_stream::byte_stream(boost::beast::tcp_stream tcp) : conn_(std::move(tcp)) {}
byte_stream::byte_stream(byte_stream&&) noexcept = default;
byte_stream::~byte_stream() = default;

void byte_stream::start_tls(boost::asio::ssl::context& context) {
  if (tls())
    return;
  auto tcp = std::move(std::get<boost::beast::tcp_stream>(conn_));
  conn_.emplace<tls_stream>(std::move(tcp), context);
}

byte_stream::executor_type byte_stream::get_executor() noexcept {
  return tcp().get_executor();
}

boost::beast::tcp_stream& byte_stream::tcp() noexcept {
  return std::visit(
      [](auto& s) -> boost::beast::tcp_stream& { return boost::beast::get_lowest_layer(s); },
      conn_);
}

byte_stream::tls_stream* byte_stream::tls() noexcept {
  return std::get_if<tls_stream>(&conn_);
}

void byte_stream::read_some(const read_buffers& buffers, stream_completion handler) {
  std::visit([&](auto& s) { s.async_read_some(buffers, std::move(handler)); }, conn_);
}

void byte_stream::write_some(const write_buffers& buffers, stream_completion handler) {
  std::visit([&](auto& s) { s.async_write_some(buffers, std::move(handler)); }, conn_);
}

} // namespace kinformer
