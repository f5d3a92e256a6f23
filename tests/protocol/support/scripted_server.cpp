#include "tests/protocol/support/scripted_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <cstdio>
#include <mutex>
#include <thread>

namespace kinformer::test {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

std::string percent_decode(std::string_view text) {
  const auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c - 'a' + 10;
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

const char* reason_phrase(int status) {
  switch (status) {
  case 200:
    return "OK";
  case 401:
    return "Unauthorized";
  case 404:
    return "Not Found";
  case 410:
    return "Gone";
  case 429:
    return "Too Many Requests";
  case 500:
    return "Internal Server Error";
  case 504:
    return "Gateway Timeout";
  default:
    return "Status";
  }
}

} // namespace

std::optional<std::string> received_request::query(std::string_view key) const {
  const auto q = target.find('?');
  if (q == std::string::npos)
    return std::nullopt;
  std::string_view rest = std::string_view(target).substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == key)
      return eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos)
      break;
    rest.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

void server_exchange::respond(int status, std::string_view body,
                              const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
  head +=
      "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  for (const auto& [name, value] : headers)
    head += name + ": " + value + "\r\n";
  head += "\r\n";
  write_raw(head + std::string(body));
}

void server_exchange::start_chunked(int status) {
  write_raw("HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
            "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
}

void server_exchange::chunk(std::string_view data) {
  if (data.empty())
    return; // an empty chunk would end the body
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  write_raw(std::string(size) + std::string(data) + "\r\n");
}

void server_exchange::end_chunked() {
  write_raw("0\r\n\r\n");
}

struct scripted_server::state {
  handler on_request;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::optional<asio::ssl::context> tls;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> requests{0};
  std::atomic<std::size_t> connections{0};
  std::thread accept_thread;
  std::mutex mutex;
  std::vector<std::thread> connection_threads;
  std::vector<tcp::socket*> open_sockets; // shut down on stop to wake blocked reads

  void accept_loop();
  template <class Stream>
  void serve(Stream& stream, tcp::socket& socket);
  void unregister_socket(tcp::socket* s) {
    std::lock_guard lock(mutex);
    std::erase(open_sockets, s);
  }
};

namespace {

template <class Stream>
class stream_exchange final : public server_exchange {
public:
  stream_exchange(Stream& stream, tcp::socket& socket, received_request request)
      : stream_(stream), socket_(socket), request_(std::move(request)) {}

  const received_request& request() const override { return request_; }
  void write_raw(std::string_view bytes) override {
    if (dropped_)
      return;
    boost::system::error_code ec;
    asio::write(stream_, asio::buffer(bytes.data(), bytes.size()), ec);
  }
  void drop() override {
    dropped_ = true;
    boost::system::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }
  bool dropped() const { return dropped_; }

private:
  Stream& stream_;
  tcp::socket& socket_;
  received_request request_;
  bool dropped_ = false;
};

} // namespace

template <class Stream>
void scripted_server::state::serve(Stream& stream, tcp::socket& socket) {
  boost::beast::flat_buffer buffer;
  while (!stopping) {
    bhttp::request<bhttp::string_body> message;
    boost::system::error_code ec;
    bhttp::read(stream, buffer, message, ec);
    if (ec)
      return;
    ++requests;
    received_request request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.authorization = std::string(message[bhttp::field::authorization]);
    request.accept = std::string(message[bhttp::field::accept]);
    stream_exchange<Stream> exchange(stream, socket, std::move(request));
    on_request(exchange);
    if (exchange.dropped() || !message.keep_alive())
      return;
  }
}

void scripted_server::state::accept_loop() {
  while (!stopping) {
    auto socket = std::make_unique<tcp::socket>(ioc);
    boost::system::error_code ec;
    acceptor.accept(*socket, ec);
    if (ec || stopping)
      return;
    ++connections;
    std::lock_guard lock(mutex);
    open_sockets.push_back(socket.get()); // before the thread starts, so stop always sees it
    connection_threads.emplace_back([this, socket = std::move(socket)]() mutable {
      if (tls) {
        asio::ssl::stream<tcp::socket&> stream(*socket, *tls);
        boost::system::error_code ec;
        stream.handshake(asio::ssl::stream_base::server, ec);
        if (!ec)
          serve(stream, *socket);
      } else {
        serve(*socket, *socket);
      }
      unregister_socket(socket.get());
      boost::system::error_code ignored;
      socket->close(ignored);
    });
  }
}

scripted_server::scripted_server(handler on_request, std::optional<server_tls_files> tls)
    : state_(std::make_shared<state>()) {
  state_->on_request = std::move(on_request);
  if (tls) {
    state_->tls.emplace(asio::ssl::context::tls_server);
    state_->tls->use_certificate_chain_file(tls->cert_file);
    state_->tls->use_private_key_file(tls->key_file, asio::ssl::context::pem);
  }
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  state_->acceptor.open(endpoint.protocol());
  state_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  state_->acceptor.bind(endpoint);
  state_->acceptor.listen();
  state_->accept_thread = std::thread([s = state_.get()] { s->accept_loop(); });
}

scripted_server::~scripted_server() {
  state_->stopping = true;
  {
    // Wake the blocking accept with a connection of our own.
    boost::system::error_code ec;
    tcp::socket waker(state_->ioc);
    waker.connect(state_->acceptor.local_endpoint(), ec);
  }
  state_->accept_thread.join();
  {
    std::lock_guard lock(state_->mutex);
    for (auto* socket : state_->open_sockets) {
      boost::system::error_code ec;
      socket->shutdown(tcp::socket::shutdown_both, ec);
    }
  }
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(state_->mutex);
    threads.swap(state_->connection_threads);
  }
  for (auto& t : threads)
    t.join();
}

unsigned short scripted_server::port() const {
  return state_->acceptor.local_endpoint().port();
}

std::string scripted_server::url() const {
  return std::string(state_->tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port());
}

std::size_t scripted_server::request_count() const {
  return state_->requests;
}
std::size_t scripted_server::connection_count() const {
  return state_->connections;
}

} // namespace kinformer::test
