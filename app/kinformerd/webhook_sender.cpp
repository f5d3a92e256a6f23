#include "app/kinformerd/webhook_sender.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <charconv>
#include <thread>

namespace kinformer {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

result<webhook_endpoint> parse_webhook_url(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  if (url.substr(0, scheme.size()) != scheme)
    return make_error(errc::invalid_argument,
                      "webhook URL must start with http:// (got \"" + std::string(url) + "\")");
  auto rest = url.substr(scheme.size());
  auto slash = rest.find_first_of("/?");
  auto authority = rest.substr(0, slash);
  webhook_endpoint e;
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
    e.port = "80";
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

// One POST: resolve, connect, write, read; every step under the one deadline.
class post_session : public std::enable_shared_from_this<post_session> {
public:
  post_session(net::io_context& io, const webhook_endpoint& endpoint,
               std::chrono::milliseconds timeout, http::request<http::string_body> request,
               webhook_sender::completion done)
      : resolver_(io), stream_(io), endpoint_(endpoint), timeout_(timeout),
        request_(std::move(request)), done_(std::move(done)) {}

  void run() {
    stream_.expires_after(timeout_);
    resolver_.async_resolve(
        endpoint_.host, endpoint_.port,
        [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type results) {
          self->on_resolve(ec, std::move(results));
        });
  }

private:
  void on_resolve(beast::error_code ec, tcp::resolver::results_type results) {
    if (ec)
      return fail(ec, "resolve");
    stream_.async_connect(
        results, [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) {
          if (ec)
            return self->fail(ec, "connect");
          http::async_write(self->stream_, self->request_,
                            [self](beast::error_code ec, std::size_t) { self->on_write(ec); });
        });
  }

  void on_write(beast::error_code ec) {
    if (ec)
      return fail(ec, "write");
    http::async_read(stream_, buffer_, response_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec)
                         return self->fail(ec, "read");
                       beast::error_code ignored;
                       self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
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

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  webhook_endpoint endpoint_;
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
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> work{io.get_executor()};
  std::thread thread;
};

webhook_sender::webhook_sender(webhook_endpoint endpoint, std::chrono::milliseconds timeout,
                               std::vector<std::pair<std::string, std::string>> headers)
    : impl_(std::make_unique<impl>()) {
  impl_->endpoint = std::move(endpoint);
  impl_->timeout = timeout;
  impl_->headers = std::move(headers);
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
}

webhook_sender::~webhook_sender() {
  impl_->work.reset();
  // Pending completions are dropped: the owner is going away and cannot take them.
  impl_->io.stop();
  impl_->thread.join();
}

void webhook_sender::post(std::string body, completion done) {
  http::request<http::string_body> request{http::verb::post, impl_->endpoint.target, 11};
  request.set(http::field::host, impl_->endpoint.host + ":" + impl_->endpoint.port);
  request.set(http::field::user_agent, "kinformerd-webhook");
  request.set(http::field::content_type, "application/json");
  request.set(http::field::connection, "close");
  for (const auto& [name, value] : impl_->headers)
    request.set(name, value);
  request.body() = std::move(body);
  request.prepare_payload();
  auto session = std::make_shared<post_session>(impl_->io, impl_->endpoint, impl_->timeout,
                                                std::move(request), std::move(done));
  net::post(impl_->io, [session] { session->run(); });
}

} // namespace kinformer
