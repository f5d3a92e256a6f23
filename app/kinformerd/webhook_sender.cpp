#include "app/kinformerd/webhook_sender.hpp"

#include "protocol/http/tls_client.hpp"
#include "protocol/stream/byte_stream.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <charconv>
#include <optional>
#include <thread>

namespace kinformer {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

result<webhook_endpoint> parse_webhook_url(std::string_view url) {
  webhook_endpoint e;
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    rest = url.substr(8);
    e.tls = true;
  } else {
    return make_error(errc::invalid_argument, "webhook URL must start with http:// or https:// "
                                              "(got \"" +
                                                  std::string(url) + "\")");
  }
  auto slash = rest.find_first_of("/?");
  auto authority = rest.substr(0, slash);
  e.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (e.target[0] == '?')
    e.target.insert(0, "/");
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return make_error(errc::invalid_argument, "webhook URL: unclosed '[' in the host");
    e.host = std::string(authority.substr(1, close - 1));
    auto after = authority.substr(close + 1);
    if (!after.empty() && after[0] != ':')
      return make_error(errc::invalid_argument, "webhook URL: junk after the IPv6 address");
    port = after.empty() ? after : after.substr(1);
  } else {
    auto colon = authority.rfind(':');
    e.host = std::string(authority.substr(0, colon));
    port = colon == std::string_view::npos ? std::string_view{} : authority.substr(colon + 1);
  }
  if (e.host.empty())
    return make_error(errc::invalid_argument,
                      "webhook URL has no host: \"" + std::string(url) + "\"");
  if (port.empty()) {
    e.port = e.tls ? "443" : "80";
  } else {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535)
      return make_error(errc::invalid_argument,
                        "webhook URL: bad port \"" + std::string(port) + "\"");
    e.port = std::string(port);
  }
  return e;
}

namespace {

// One POST: resolve, connect, (TLS handshake,) write, read; every step under the one deadline.
class post_session : public std::enable_shared_from_this<post_session> {
public:
  // TLS when `tls` is given (https://).
  post_session(net::io_context& io, ssl::context* tls, const webhook_endpoint& endpoint,
               bool verify, std::chrono::milliseconds timeout,
               http::request<http::string_body> request, webhook_sender::completion done)
      : tls_(tls), stream_(beast::tcp_stream(io)), resolver_(io), endpoint_(endpoint),
        verify_(verify), timeout_(timeout), request_(std::move(request)), done_(std::move(done)) {}

  void run() {
    tcp().expires_after(timeout_);
    resolver_.async_resolve(
        endpoint_.host, endpoint_.port,
        [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type results) {
          self->on_resolve(ec, std::move(results));
        });
  }

private:
  beast::tcp_stream& tcp() { return stream_.tcp(); }

  void on_resolve(beast::error_code ec, tcp::resolver::results_type results) {
    if (ec)
      return fail(ec, "resolve");
    tcp().async_connect(results,
                        [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) {
                          if (ec)
                            return self->fail(ec, "connect");
                          self->secure();
                        });
  }

  void secure() {
    if (!tls_)
      return send();
    stream_.start_tls(*tls_);
    prepare_tls_connection(stream_.tls()->native_handle(), endpoint_.host, verify_);
    stream_.tls()->async_handshake(ssl::stream_base::client, [self = shared_from_this()](
                                                                 beast::error_code ec) {
      if (ec)
        return self->finish(
            {0, "handshake: " + describe_tls_failure(self->stream_.tls()->native_handle(), ec)});
      self->send();
    });
  }

  void send() {
    http::async_write(
        stream_, request_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(beast::error_code ec) {
    if (ec)
      return fail(ec, "write");
    http::async_read(stream_, buffer_, response_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec)
                         return self->fail(ec, "read");
                       // Connection: close was asked for; no TLS close_notify round trip.
                       beast::error_code ignored;
                       self->tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
                       self->finish({static_cast<int>(self->response_.result_int()), {}});
                     });
  }

  void fail(beast::error_code ec, const char* what) {
    finish({0, std::string(what) + ": " + ec.message()});
  }

  void finish(post_outcome outcome) {
    if (done_)
      std::exchange(done_, nullptr)(std::move(outcome));
  }

  ssl::context* tls_; // the sender's, which outlives its sessions
  byte_stream stream_;
  tcp::resolver resolver_;
  webhook_endpoint endpoint_;
  bool verify_;
  std::chrono::milliseconds timeout_;
  http::request<http::string_body> request_;
  beast::flat_buffer buffer_;
  http::response<http::string_body> response_;
  webhook_sender::completion done_;
};

} // namespace

struct webhook_sender::impl {
  webhook_endpoint endpoint;
  std::chrono::milliseconds timeout;
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<ssl::context> tls; // https:// only
  bool verify = true;
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> work{io.get_executor()};
  std::thread thread;
};

result<std::unique_ptr<webhook_sender>>
webhook_sender::create(webhook_endpoint endpoint, std::chrono::milliseconds timeout,
                       std::vector<std::pair<std::string, std::string>> headers,
                       tls_client_settings tls) {
  auto state = std::make_unique<impl>();
  if (endpoint.tls) {
    state->tls.emplace(ssl::context::tls_client);
    if (auto configured = configure_tls_client(*state->tls, tls); !configured)
      return configured.err();
    state->verify = !tls.insecure_skip_verify;
  }
  state->endpoint = std::move(endpoint);
  state->timeout = timeout;
  state->headers = std::move(headers);
  return std::unique_ptr<webhook_sender>(new webhook_sender(std::move(state)));
}

webhook_sender::webhook_sender(std::unique_ptr<impl> state) : impl_(std::move(state)) {
  // The thread shares the state: when the last owner of the sender lets go from a completion
  // on this very thread, the thread cannot be joined, and must not outlive its io_context.
  impl_->thread = std::thread([state = impl_] { state->io.run(); });
}

webhook_sender::~webhook_sender() {
  impl_->work.reset();
  // Pending completions are dropped: the owner is going away and cannot take them.
  impl_->io.stop();
  if (impl_->thread.get_id() == std::this_thread::get_id())
    impl_->thread.detach(); // run() returns after this handler; the thread frees the state
  else
    impl_->thread.join();
}

void webhook_sender::post(std::string body, completion done) {
  http::request<http::string_body> request{http::verb::post, impl_->endpoint.target, 11};
  const auto& host = impl_->endpoint.host;
  const bool ipv6 = host.find(':') != std::string::npos;
  request.set(http::field::host, (ipv6 ? "[" + host + "]" : host) + ":" + impl_->endpoint.port);
  request.set(http::field::user_agent, "kinformerd-webhook");
  request.set(http::field::content_type, "application/json");
  request.set(http::field::connection, "close");
  for (const auto& [name, value] : impl_->headers)
    request.set(name, value);
  request.body() = std::move(body);
  request.prepare_payload();
  auto session = std::make_shared<post_session>(impl_->io, impl_->tls ? &*impl_->tls : nullptr,
                                                impl_->endpoint, impl_->verify, impl_->timeout,
                                                std::move(request), std::move(done));
  net::post(impl_->io, [session] { session->run(); });
}

} // namespace kinformer
