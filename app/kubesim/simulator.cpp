// The simulator's transport: the only Beast translation unit of the simulator.
//
// Sessions read requests, hand them to the REST half (rest_handler, which calls the storage and
// does no I/O), write the replies with scatter-gather writes over the shared JSON strings, and
// stream watches as chunked bodies from a per-watch queue that the storage's writer thread fills
// and the session's strand drains.

#include "app/kubesim/simulator.hpp"

#include "app/apiserver/api_status.hpp"
#include "app/kubesim/control_routes.hpp"
#include "app/kubesim/rest_handler.hpp"
#include "app/kubesim/self_signed_cert.hpp"
#include "app/kubesim/storage.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <thread>
#include <variant>

namespace kinformer::sim {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

constexpr std::uint64_t max_request_body = 64ull << 20;

class connection;

// Everything the sessions share. Networking members come last so that they are destroyed
// first, while the storage and the REST handler their handlers touch still exist.
struct server_state {
  explicit server_state(simulator_options opts)
      : options(std::move(opts)), store(storage_options{options.history_limit, true}),
        rest(store, options) {}

  simulator_options options;
  storage store;
  rest_handler rest;
  std::string server_address; // host:port as clients reach it
  std::uint16_t port = 0;
  std::atomic<std::int64_t> latency_ms{0};
  std::atomic<std::size_t> open_watches{0};

  std::mutex connections_mutex;
  std::vector<std::weak_ptr<connection>> connections;

  // The TLS context new connections get, and its CA; replaced whole by rotate_tls(). Sessions
  // hold their own reference to the context they were opened with.
  mutable std::mutex tls_mutex;
  std::shared_ptr<ssl::context> tls;
  std::string ca_pem;
  net::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::steady_timer> bookmark_timer;
  std::vector<std::thread> threads;
  bool running = false;
};

// What the simulator's fault controls and stop() reach on every connection.
class connection : public std::enable_shared_from_this<connection> {
public:
  virtual ~connection() = default;
  // Closes the connection abruptly if it is serving a watch (from any thread).
  virtual void drop_watch() = 0;
  // Stops writing the watch this connection serves, if any, keeping the socket open: a stalled
  // stream (from any thread). Watches opened later are not affected.
  virtual void stall_watch() = 0;
  // Writes what queued up while the watch was stalled (from any thread).
  virtual void resume_watch() = 0;
  // Closes the connection (from any thread); a response being written goes out first.
  virtual void disconnect() = 0;
  // Stops the watch and closes the socket; only once the I/O threads have stopped.
  virtual void close_now() = 0;
};

// Lines the storage's writer queued for one watch and the session has not written yet.
struct watch_queue {
  explicit watch_queue(std::size_t max_lines) : limit(max_lines) {}
  std::mutex mutex;
  std::vector<std::shared_ptr<const std::string>> lines;
  const std::size_t limit;
  bool scheduled = false; // a flush is posted or running
  bool accepting = true;  // false once the watch ends or falls hopelessly behind
  bool live = false;      // the replay inside storage::watch() is over; the limit applies
};

std::string chunk_size_line(std::size_t size) {
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%zx\r\n", size);
  return std::string(buf, static_cast<std::size_t>(n));
}

const std::string comma = ",";
const std::string crlf = "\r\n";
const std::string last_chunk = "0\r\n\r\n";

std::string response_head(unsigned code, std::string_view content_type, bool keep_alive) {
  std::string head = "HTTP/1.1 " + std::to_string(code) + " " +
                     std::string(http::obsolete_reason(static_cast<http::status>(code))) + "\r\n";
  head += "Content-Type: ";
  head.append(content_type);
  head += "\r\nCache-Control: no-cache, private\r\n";
  if (!keep_alive)
    head += "Connection: close\r\n";
  return head;
}

template <class Stream>
class session final : public connection {
public:
  session(server_state& server, Stream stream, std::shared_ptr<ssl::context> tls = nullptr)
      : server_(server), tls_(std::move(tls)), stream_(std::move(stream)),
        latency_timer_(stream_.get_executor()), watch_timer_(stream_.get_executor()) {}

  ~session() override {
    if (watching_)
      server_.open_watches.fetch_sub(1);
  }

  void start() {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      net::dispatch(stream_.get_executor(), [self = self()] { self->read_request(); });
    } else {
      stream_.async_handshake(ssl::stream_base::server, [self = self()](beast::error_code ec) {
        if (ec)
          return self->close();
        // Verified during the handshake against the client CA: its presence is the proof.
        self->client_certificate_ =
            SSL_get0_peer_certificate(self->stream_.native_handle()) != nullptr;
        self->read_request();
      });
    }
  }

  void drop_watch() override {
    net::post(stream_.get_executor(), [self = self()] {
      if (self->watching_)
        self->abort_watch();
    });
  }

  void stall_watch() override { stalled_.store(true); }

  void resume_watch() override {
    stalled_.store(false);
    net::post(stream_.get_executor(), [self = self()] { self->flush_watch(); });
  }

  void disconnect() override {
    net::post(stream_.get_executor(), [self = self()] {
      if (self->watching_)
        return self->abort_watch();
      if (self->responding_)
        self->keep_alive_ = false; // closes once the response is written
      else
        self->close();
    });
  }

  void close_now() override {
    watch_.stop();
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
  }

private:
  std::shared_ptr<session> self() {
    return std::static_pointer_cast<session>(this->shared_from_this());
  }

  void read_request() {
    parser_.emplace();
    parser_->body_limit(max_request_body);
    http::async_read(stream_, buffer_, *parser_,
                     [self = self()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) {
      // The client went away (or sent garbage): a watch in progress ends with it.
      if (watching_)
        return abort_watch();
      return close();
    }
    if (watching_) {
      // Pipelined behind a watch: served once the watch ends.
      pending_request_ = parser_->release();
      return;
    }
    request_ = parser_->release();
    responding_ = true;
    auto delay = server_.latency_ms.load();
    if (delay <= 0)
      return serve();
    latency_timer_.expires_after(std::chrono::milliseconds(delay));
    latency_timer_.async_wait([self = self()](beast::error_code wait_ec) {
      if (!wait_ec)
        self->serve();
    });
  }

  void serve() {
    const auto& req = request_;
    keep_alive_ = req.keep_alive();
    api_request api{req.method_string(),
                    req.target(),
                    req[http::field::accept],
                    req[http::field::content_type],
                    req[http::field::authorization],
                    client_certificate_,
                    req.body()};
    reply r = server_.rest.handle(api);
    std::visit([this](auto& reply) { this->send(std::move(reply)); }, r);
  }

  void send(simple_reply r) {
    auto head = response_head(r.code, r.content_type, keep_alive_);
    for (const auto& h : r.headers)
      head += h.name + ": " + h.value + "\r\n";
    head += "Content-Length: " + std::to_string(r.body.size()) + "\r\n\r\n";
    out_head_ = std::move(head);
    out_body_ = std::move(r.body);
    out_buffers_ = {net::buffer(out_head_), net::buffer(out_body_)};
    write_response();
  }

  void send(list_reply r) {
    std::size_t length = r.head.size() + r.tail.size();
    for (const auto& item : r.items)
      length += item->size();
    if (!r.items.empty())
      length += r.items.size() - 1;
    out_head_ = response_head(200, "application/json", keep_alive_) +
                "Content-Length: " + std::to_string(length) + "\r\n\r\n" + r.head;
    out_body_ = std::move(r.tail);
    out_items_ = std::move(r.items);
    out_buffers_.clear();
    out_buffers_.reserve(out_items_.size() * 2 + 2);
    out_buffers_.push_back(net::buffer(out_head_));
    for (std::size_t i = 0; i < out_items_.size(); ++i) {
      if (i > 0)
        out_buffers_.push_back(net::buffer(comma));
      out_buffers_.push_back(net::buffer(*out_items_[i]));
    }
    out_buffers_.push_back(net::buffer(out_body_));
    write_response();
  }

  void write_response() {
    net::async_write(stream_, out_buffers_, [self = self()](beast::error_code ec, std::size_t) {
      self->out_items_.clear();
      self->out_buffers_.clear();
      self->after_response(ec);
    });
  }

  void after_response(beast::error_code ec) {
    responding_ = false;
    if (ec || !keep_alive_)
      return close();
    if (pending_request_) {
      responding_ = true;
      request_ = std::move(*pending_request_);
      pending_request_.reset();
      return serve();
    }
    read_request();
  }

  // --- Watches ---------------------------------------------------------------------------------

  void send(watch_reply w) {
    auto queue = std::make_shared<watch_queue>(server_.options.watch_queue_limit);
    std::weak_ptr<session> weak = self();
    auto executor = stream_.get_executor();
    // Runs on the storage's writer thread, under its lock: queue the shared line, post a flush.
    watch_sink sink = [queue, weak, executor](const watch_message& message) {
      std::unique_lock lock(queue->mutex);
      if (!queue->accepting)
        return;
      if (queue->live && queue->lines.size() >= queue->limit) {
        queue->accepting = false;
        lock.unlock();
        net::post(executor, [weak] {
          if (auto s = weak.lock())
            s->end_watch();
        });
        return;
      }
      queue->lines.push_back(message.line);
      if (queue->scheduled)
        return;
      queue->scheduled = true;
      lock.unlock();
      net::post(executor, [weak] {
        if (auto s = weak.lock())
          s->flush_watch();
      });
    };

    auto handle = server_.store.watch(w.request, std::move(sink));
    if (!handle) {
      const status& failure = handle.failure();
      if (failure.code != 410)
        return send(status_reply(failure));
      // Too old: 200, then the ERROR event, then the end of the stream (as the real server).
      out_head_ = response_head(200, "application/json", keep_alive_) +
                  "Transfer-Encoding: chunked\r\n\r\n";
      std::string line =
          "{\"type\":\"ERROR\",\"object\":" + apiserver::status_json(failure) + "}\n";
      out_body_ = chunk_size_line(line.size()) + line + crlf + last_chunk;
      out_buffers_ = {net::buffer(out_head_), net::buffer(out_body_)};
      return write_response();
    }
    {
      std::lock_guard lock(queue->mutex);
      queue->live = true;
    }
    watch_ = std::move(handle.value());
    queue_ = std::move(queue);
    watching_ = true;
    responding_ = false;   // the stream is the response now: disconnect() aborts it
    stalled_.store(false); // a stall applies to the watches open when it was injected
    finishing_ = false;
    server_.open_watches.fetch_add(1);

    watch_timer_.expires_after(w.timeout);
    watch_timer_.async_wait([self = self()](beast::error_code ec) {
      if (!ec)
        self->end_watch();
    });
    out_head_ =
        response_head(200, "application/json", keep_alive_) + "Transfer-Encoding: chunked\r\n\r\n";
    writing_ = true;
    net::async_write(stream_, net::buffer(out_head_),
                     [self = self()](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       if (ec)
                         return self->abort_watch();
                       self->flush_watch();
                     });
    // Reading on detects a client that hangs up (and holds a pipelined request).
    read_request();
  }

  // Writes everything queued as one chunk; called on the strand whenever lines may be waiting.
  void flush_watch() {
    if (!watching_ || writing_)
      return;
    bool stalled = stalled_.load();
    {
      std::lock_guard lock(queue_->mutex);
      if (!stalled)
        writing_lines_.swap(queue_->lines);
      if (writing_lines_.empty())
        queue_->scheduled = false;
    }
    if (writing_lines_.empty()) {
      if (finishing_ && !stalled)
        write_last_chunk();
      return;
    }
    std::size_t size = 0;
    for (const auto& line : writing_lines_)
      size += line->size();
    chunk_head_ = chunk_size_line(size);
    out_buffers_.clear();
    out_buffers_.reserve(writing_lines_.size() + 2);
    out_buffers_.push_back(net::buffer(chunk_head_));
    for (const auto& line : writing_lines_)
      out_buffers_.push_back(net::buffer(*line));
    out_buffers_.push_back(net::buffer(crlf));
    writing_ = true;
    net::async_write(stream_, out_buffers_, [self = self()](beast::error_code ec, std::size_t) {
      self->writing_ = false;
      self->writing_lines_.clear();
      if (ec)
        return self->abort_watch();
      self->flush_watch();
    });
  }

  // The clean end (timeout, or a watcher hopelessly behind): stop receiving, write what is
  // queued, then the terminating chunk.
  void end_watch() {
    if (!watching_ || finishing_)
      return;
    finishing_ = true;
    watch_.stop();
    {
      std::lock_guard lock(queue_->mutex);
      queue_->accepting = false;
    }
    flush_watch();
  }

  void write_last_chunk() {
    // The watch is over before its terminating chunk is on the wire, so a client that has read
    // the end never finds it still counted as open.
    leave_watch();
    writing_ = true;
    net::async_write(stream_, net::buffer(last_chunk),
                     [self = self()](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       if (ec || !self->keep_alive_)
                         return self->close();
                       if (self->pending_request_) {
                         self->request_ = std::move(*self->pending_request_);
                         self->pending_request_.reset();
                         self->responding_ = true;
                         self->serve();
                       }
                       // Otherwise the read started with the watch is still waiting.
                     });
  }

  // The abrupt end: the socket closes without a terminating chunk.
  void abort_watch() {
    leave_watch();
    close();
  }

  void leave_watch() {
    if (!watching_)
      return;
    watching_ = false;
    watch_.stop();
    {
      std::lock_guard lock(queue_->mutex);
      queue_->accepting = false;
      queue_->lines.clear();
    }
    queue_.reset();
    watch_timer_.cancel();
    server_.open_watches.fetch_sub(1);
  }

  void close() {
    if (closed_)
      return;
    closed_ = true;
    leave_watch();
    latency_timer_.cancel();
    beast::error_code ignored;
    auto& socket = beast::get_lowest_layer(stream_).socket();
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  server_state& server_;
  std::shared_ptr<ssl::context> tls_; // outlives stream_, whose SSL object was made from it
  Stream stream_;
  bool client_certificate_ = false; // TLS: the client presented a certificate the CA signed
  bool responding_ = false;         // a request is being served and its response written
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  std::optional<http::request<http::string_body>> pending_request_;
  net::steady_timer latency_timer_;
  bool keep_alive_ = true;
  bool closed_ = false;

  // What the write in flight points into.
  std::string out_head_;
  std::string out_body_;
  std::vector<std::shared_ptr<const std::string>> out_items_;
  std::vector<net::const_buffer> out_buffers_;

  watch_handle watch_;
  std::shared_ptr<watch_queue> queue_;
  std::vector<std::shared_ptr<const std::string>> writing_lines_;
  std::string chunk_head_;
  net::steady_timer watch_timer_;
  bool watching_ = false;
  std::atomic<bool> stalled_{false};
  bool finishing_ = false;
  bool writing_ = false;
};

void remember(server_state& server, const std::shared_ptr<connection>& c) {
  std::lock_guard lock(server.connections_mutex);
  std::erase_if(server.connections, [](const auto& weak) { return weak.expired(); });
  server.connections.push_back(c);
}

template <class F>
void for_each_connection(server_state& server, F&& f) {
  std::vector<std::shared_ptr<connection>> live;
  {
    std::lock_guard lock(server.connections_mutex);
    for (const auto& weak : server.connections)
      if (auto c = weak.lock())
        live.push_back(std::move(c));
  }
  for (auto& c : live)
    f(*c);
}

void accept_next(server_state& server) {
  server.acceptor->async_accept(
      net::make_strand(server.ioc), [&server](beast::error_code ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted || !server.acceptor->is_open())
          return;
        if (!ec) {
          socket.set_option(tcp::no_delay(true), ec);
          beast::tcp_stream stream(std::move(socket));
          std::shared_ptr<ssl::context> tls;
          {
            std::lock_guard lock(server.tls_mutex);
            tls = server.tls;
          }
          if (tls) {
            auto s = std::make_shared<session<beast::ssl_stream<beast::tcp_stream>>>(
                server, beast::ssl_stream<beast::tcp_stream>(std::move(stream), *tls), tls);
            remember(server, s);
            s->start();
          } else {
            auto s = std::make_shared<session<beast::tcp_stream>>(server, std::move(stream));
            remember(server, s);
            s->start();
          }
        }
        accept_next(server);
      });
}

void schedule_bookmarks(server_state& server) {
  server.bookmark_timer->expires_after(server.options.bookmark_interval);
  server.bookmark_timer->async_wait([&server](beast::error_code ec) {
    if (ec)
      return;
    server.store.send_bookmarks();
    schedule_bookmarks(server);
  });
}

result<tcp::endpoint> parse_listen(const std::string& listen) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos)
    return make_error(errc::invalid_argument, "listen address must be host:port: " + listen);
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host == "localhost")
    host = "127.0.0.1";
  boost::system::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (ec)
    return make_error(errc::invalid_argument, "not an IP address: \"" + host + "\"");
  unsigned long port = 0;
  try {
    std::size_t used = 0;
    port = std::stoul(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1 || port > 65535)
      throw std::out_of_range("port");
  } catch (const std::exception&) {
    return make_error(errc::invalid_argument, "bad port in listen address: " + listen);
  }
  return tcp::endpoint(address, static_cast<unsigned short>(port));
}

// A TLS server context for a freshly generated CA and server certificate, asking for client
// certificates when a client CA is configured.
result<std::shared_ptr<ssl::context>> make_tls_context(const tls_material& material,
                                                       const std::string& client_ca_pem) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  context->use_certificate_chain(net::buffer(material.server_cert_pem), ec);
  if (!ec)
    context->use_private_key(net::buffer(material.server_key_pem), ssl::context::pem, ec);
  if (ec)
    return make_error(errc::tls, "loading the server certificate: " + ec.message());
  if (!client_ca_pem.empty()) {
    context->add_certificate_authority(net::buffer(client_ca_pem), ec);
    if (ec)
      return make_error(errc::tls, "loading the client CA: " + ec.message());
    // Optional: clients may still authenticate with a token instead.
    context->set_verify_mode(ssl::verify_peer);
  }
  return context;
}

// Generates a CA and server certificate and makes them the ones new connections get.
result<std::string> install_new_certificate(server_state& s) {
  auto material = make_self_signed_tls();
  if (!material)
    return std::move(material).err();
  auto context = make_tls_context(*material, s.options.client_ca_pem);
  if (!context)
    return std::move(context).err();
  std::lock_guard lock(s.tls_mutex);
  s.tls = std::move(context).value();
  s.ca_pem = material->ca_cert_pem;
  return s.ca_pem;
}

} // namespace

struct simulator::impl : server_state {
  using server_state::server_state;
};

simulator::simulator(simulator_options options)
    : impl_(std::make_unique<impl>(std::move(options))) {
  add_builtin_control_routes(*this);
}

simulator::~simulator() {
  stop();
}

status_result simulator::start() {
  auto& s = *impl_;
  if (s.running)
    return ok_v;
  auto endpoint = parse_listen(s.options.listen);
  if (!endpoint)
    return std::move(endpoint).err();

  if (s.options.tls) {
    auto installed = install_new_certificate(s);
    if (!installed)
      return std::move(installed).err();
  }

  boost::system::error_code ec;
  s.acceptor.emplace(s.ioc);
  s.acceptor->open(endpoint->protocol(), ec);
  if (!ec)
    s.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec)
    s.acceptor->bind(*endpoint, ec);
  if (!ec)
    s.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    s.acceptor.reset();
    return make_error(errc::io, "cannot listen on " + s.options.listen + ": " + ec.message());
  }
  auto bound = s.acceptor->local_endpoint();
  std::string host = bound.address().to_string();
  if (bound.address().is_v6())
    host = "[" + host + "]";
  s.server_address = host + ":" + std::to_string(bound.port());
  s.port = bound.port();
  s.rest.set_server_address(s.server_address);

  accept_next(s);
  s.bookmark_timer.emplace(s.ioc);
  schedule_bookmarks(s);
  s.running = true;
  for (std::size_t i = 0; i < std::max<std::size_t>(1, s.options.io_threads); ++i)
    s.threads.emplace_back([&s] {
      // Named so that per-thread CPU (top -H, the benchmarks) tells the server from its clients.
      pthread_setname_np(pthread_self(), "kubesim-io");
      s.ioc.run();
    });
  return ok_v;
}

void simulator::stop() {
  auto& s = *impl_;
  if (!s.running)
    return;
  s.running = false;
  s.ioc.stop();
  for (auto& t : s.threads)
    t.join();
  s.threads.clear();
  // The I/O threads are gone: touching sockets and watches from here is safe.
  boost::system::error_code ignored;
  s.acceptor->close(ignored);
  s.bookmark_timer->cancel();
  for_each_connection(s, [](connection& c) { c.close_now(); });
}

std::uint16_t simulator::port() const {
  return impl_->port;
}

std::string simulator::url() const {
  return std::string(impl_->options.tls ? "https://" : "http://") + impl_->server_address;
}

std::string simulator::ca_pem() const {
  std::lock_guard lock(impl_->tls_mutex);
  return impl_->ca_pem;
}

result<std::string> simulator::rotate_tls() {
  auto& s = *impl_;
  if (!s.options.tls)
    return make_error(errc::invalid_argument, "the simulator serves plain HTTP: nothing to rotate");
  auto ca = install_new_certificate(s);
  if (ca)
    for_each_connection(s, [](connection& c) { c.disconnect(); });
  return ca;
}
const simulator_options& simulator::options() const {
  return impl_->options;
}
storage& simulator::store() {
  return impl_->store;
}

void simulator::drop_watches() {
  for_each_connection(*impl_, [](connection& c) { c.drop_watch(); });
}

void simulator::stall_watches() {
  for_each_connection(*impl_, [](connection& c) { c.stall_watch(); });
}

void simulator::resume_watches() {
  for_each_connection(*impl_, [](connection& c) { c.resume_watch(); });
}

void simulator::set_latency(std::chrono::milliseconds delay) {
  impl_->latency_ms.store(delay.count());
}

std::size_t simulator::open_watches() const {
  return impl_->open_watches.load();
}

void simulator::add_control_route(std::string prefix, control_handler handler) {
  impl_->rest.add_control_route(std::move(prefix), std::move(handler));
}

} // namespace kinformer::sim
