// The service's HTTP/1.1 server on Beast: one session per connection, on its own strand.
//
// A session reads a request, hands it to its route with an exchange, and waits. The exchange
// (held by the route, possibly on another thread) posts the answer back to the session's strand:
// a plain response (then the session reads the next request, keep-alive) or a stream. A stream's
// writers queue chunks under a mutex and post a "drain" to the strand, which writes everything
// queued as one HTTP chunk at a time. While streaming, the session keeps a read pending on the
// socket only to learn when the client goes away. Streams always end their connection.

#include "app/apiserver/http_server.hpp"

#include "app/apiserver/api_status.hpp"
#include "protocol/stream/byte_stream.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <atomic>
#include <deque>
#include <iterator>
#include <map>
#include <mutex>
#include <pthread.h>
#include <thread>

namespace kinformer::apiserver {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

std::optional<std::string_view> http_request::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name)
      return std::string_view(value);
  return std::nullopt;
}

http_response status_response(int code, std::string_view reason, std::string_view message) {
  http_response response;
  response.status = code;
  response.body = status_json(make_failure(code, std::string(reason), std::string(message)));
  return response;
}

const char* to_string(stream_end end) noexcept {
  switch (end) {
  case stream_end::finished:
    return "finished";
  case stream_end::client_gone:
    return "client_gone";
  case stream_end::overflow:
    return "overflow";
  case stream_end::write_timeout:
    return "write_timeout";
  case stream_end::stopping:
    return "stopping";
  case stream_end::dropped:
    return "dropped";
  }
  return "unknown";
}

namespace {

// "127.0.0.1:80", "[::1]:0", "localhost:8080" (names are not resolved: literals only).
result<tcp::endpoint> parse_listen(const std::string& listen) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos)
    return make_error(errc::invalid_argument, "listen address \"" + listen + "\" has no port");
  std::string host = listen.substr(0, colon);
  std::string port_text = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty() || host == "localhost")
    host = "127.0.0.1";
  unsigned long port = 0;
  try {
    std::size_t used = 0;
    port = std::stoul(port_text, &used);
    if (used != port_text.size() || port > 65535)
      throw std::out_of_range("port");
  } catch (const std::exception&) {
    return make_error(errc::invalid_argument,
                      "listen address \"" + listen + "\" has a bad port \"" + port_text + "\"");
  }
  boost::system::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (ec)
    return make_error(errc::invalid_argument,
                      "listen address \"" + listen + "\": \"" + host + "\" is not an IP address");
  return tcp::endpoint(address, static_cast<std::uint16_t>(port));
}

// Compares without an early exit, so the time taken says nothing about the token.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

std::string chunk_size_line(std::size_t size) {
  char line[32];
  int n = std::snprintf(line, sizeof line, "%zx\r\n", size);
  return std::string(line, static_cast<std::size_t>(n));
}

constexpr std::string_view last_chunk = "0\r\n\r\n";

// A TLS server context for a certificate chain and key (PEM text or files), asking for client
// certificates when a client CA is given.
result<std::shared_ptr<net::ssl::context>> make_tls_context(const http_server_options& options,
                                                            const std::string& certificate_pem,
                                                            const std::string& key_pem) {
  auto context = std::make_shared<net::ssl::context>(net::ssl::context::tls_server);
  context->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                       net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                       net::ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  std::string what;
  if (!certificate_pem.empty() || !key_pem.empty()) {
    what = "the TLS certificate";
    context->use_certificate_chain(net::buffer(certificate_pem), ec);
    if (!ec)
      context->use_private_key(net::buffer(key_pem), net::ssl::context::pem, ec);
  } else {
    what = "TLS certificate " + options.tls_certificate_file + " / key " + options.tls_key_file;
    context->use_certificate_chain_file(options.tls_certificate_file, ec);
    if (!ec)
      context->use_private_key_file(options.tls_key_file, net::ssl::context::pem, ec);
  }
  if (ec)
    return make_error(errc::invalid_argument, what + ": " + ec.message());
  if (!options.tls_client_ca_pem.empty()) {
    context->add_certificate_authority(net::buffer(options.tls_client_ca_pem), ec);
    if (ec)
      return make_error(errc::invalid_argument, "the TLS client CA: " + ec.message());
    // Optional: a client without a certificate is still served (and authenticates otherwise).
    context->set_verify_mode(net::ssl::verify_peer);
  }
  return context;
}

} // namespace

class session;
namespace {
class stream_state;

// What `registered` still reaches, taken under `mutex`.
template <class T>
std::vector<std::shared_ptr<T>> still_alive(std::mutex& mutex,
                                            const std::vector<std::weak_ptr<T>>& registered) {
  std::vector<std::shared_ptr<T>> live;
  std::lock_guard lock(mutex);
  for (auto& w : registered)
    if (auto p = w.lock())
      live.push_back(std::move(p));
  return live;
}
} // namespace

struct http_server::impl {
  explicit impl(http_server_options o)
      : options(std::move(o)), ioc(static_cast<int>(std::max<std::size_t>(1, options.io_threads))) {
  }

  http_server_options options;
  net::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  // The TLS context new connections get (null: plain HTTP); replaced whole by
  // replace_certificate(). Each session holds the one it was opened with.
  mutable std::mutex tls_mutex;
  std::shared_ptr<net::ssl::context> tls;
  std::atomic<std::int64_t> latency_ms{0};
  std::vector<std::thread> threads;
  std::map<std::string, route_handler> routes; // by prefix
  std::string endpoint_text;
  std::uint16_t bound_port = 0;
  bool running = false;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> open_streams{0};
  std::atomic<std::uint64_t> connections_refused{0};
  std::atomic<std::uint64_t> slow_streams_dropped{0};
  std::atomic<std::uint64_t> bytes_written{0};

  std::mutex sessions_mutex;
  std::vector<std::weak_ptr<session>> sessions;
  std::atomic<std::size_t> live_sessions{0};
  // Every stream begun, so that a stall takes hold before stall_streams() returns.
  std::mutex streams_mutex;
  std::vector<std::weak_ptr<stream_state>> streams;
  // stop()'s bound on the last writes; touched only on `control`.
  net::strand<net::io_context::executor_type> control{ioc.get_executor()};
  std::optional<net::steady_timer> stop_deadline;

  std::shared_ptr<net::ssl::context> current_tls() const {
    std::lock_guard lock(tls_mutex);
    return tls;
  }

  // Posts (or dispatches) `fn` to `executor`, unless stop() has run its I/O context for the last
  // time: then `fn` is left to its caller, who frees it and what it holds. Queued where no thread
  // runs, a handler that holds a session would keep the server (and the queue itself) forever.
  // Returns whether `fn` was queued (or run). No lock: stop() sets io_closed, then waits until no
  // post that began before it saw the flag is still under way, then polls what they queued.
  template <class Executor, class Fn>
  bool post_while_open(const Executor& executor, Fn&& fn, bool dispatch = false) {
    ++posting;
    if (io_closed) {
      --posting;
      return false;
    }
    if (dispatch)
      net::dispatch(executor, std::forward<Fn>(fn));
    else
      net::post(executor, std::forward<Fn>(fn));
    --posting;
    return true;
  }
  std::atomic<bool> io_closed{false};
  std::atomic<int> posting{0};

  // Every session still open.
  std::vector<std::shared_ptr<session>> live_sessions_now() {
    return still_alive(sessions_mutex, sessions);
  }

  // Every stream still referenced.
  std::vector<std::shared_ptr<stream_state>> live_streams_now() {
    return still_alive(streams_mutex, streams);
  }

  // Cancels the stop deadline once no session is left, so that the I/O threads end at once.
  void release_deadline_if_idle() {
    if (live_sessions == 0 && stop_deadline)
      stop_deadline->cancel();
  }

  const route_handler* find_route(std::string_view path) const {
    const route_handler* best = nullptr;
    std::size_t best_length = 0;
    for (const auto& [prefix, handler] : routes)
      if (path.starts_with(prefix) && (best == nullptr || prefix.size() > best_length)) {
        best = &handler;
        best_length = prefix.size();
      }
    return best;
  }
};

namespace {

// Shared between a stream's writers (any thread) and its session (the strand).
class stream_state final : public http_stream {
public:
  stream_state(std::shared_ptr<http_server::impl> server, std::weak_ptr<session> owner,
               net::any_io_executor strand)
      : server_(std::move(server)), owner_(std::move(owner)), strand_(std::move(strand)) {}

  using http_stream::write;
  bool write(byte_pieces pieces) override;
  void limit_queue(std::size_t writes) override {
    std::lock_guard lock(mutex_);
    queue_limit_ = writes;
  }
  void close_after(std::chrono::milliseconds duration) override;
  void close() override;
  bool closed() const override {
    std::lock_guard lock(mutex_);
    return ended_ || close_requested_ || overflowed_ || queue_full_;
  }
  void set_overflow_message(std::string message) override {
    std::lock_guard lock(mutex_);
    overflow_message_ = std::move(message);
  }
  void on_end(std::function<void(stream_end)> callback) override {
    std::unique_lock lock(mutex_);
    if (end_reason_) {
      auto reason = *end_reason_;
      lock.unlock();
      callback(reason);
      return;
    }
    callbacks_.push_back(std::move(callback));
  }
  std::size_t buffered_bytes() const override {
    std::lock_guard lock(mutex_);
    return bytes_;
  }
  std::size_t buffer_limit() const override { return server_->options.stream_buffer_limit; }

  // What the session writes next (on the strand): `head`, then `pieces`, then `tail`, gathered.
  struct next_write {
    std::string head;               // a chunk's size line
    std::vector<byte_piece> pieces; // the chunk's data
    std::string tail;               // CRLF, and the last chunk when last
    bool last = false;
    std::optional<stream_end> reason; // set with last
    std::string copied; // the session's: the head, the short pieces and the tail, gathered
    bool empty() const { return head.empty() && tail.empty(); }
  };
  next_write take() {
    std::lock_guard lock(mutex_);
    next_write out;
    if (ended_ || stalled_)
      return out;
    if (overflowed_) {
      if (!overflow_message_.empty()) {
        out.head = chunk_size_line(overflow_message_.size());
        auto message = std::make_shared<const std::string>(overflow_message_);
        const std::string_view bytes = *message;
        out.pieces.push_back({std::move(message), bytes});
        out.tail = "\r\n";
      }
      out.tail += last_chunk;
      out.last = true;
      out.reason = stream_end::overflow;
      ended_ = true;
      return out;
    }
    if (!queue_.empty()) {
      out.head = chunk_size_line(bytes_);
      out.pieces.assign(std::make_move_iterator(queue_.begin()),
                        std::make_move_iterator(queue_.end()));
      out.tail = "\r\n";
      queue_.clear();
      bytes_ = 0;
      writes_ = 0;
    }
    if (close_requested_ || queue_full_) {
      out.tail += last_chunk;
      out.last = true;
      out.reason = queue_full_ ? stream_end::overflow : stream_end::finished;
      ended_ = true;
    }
    drain_posted_ = false;
    return out;
  }
  // Stalled, the stream writes nothing; what is written meanwhile queues (bounds still apply).
  void stall() {
    std::lock_guard lock(mutex_);
    stalled_ = true;
  }
  // Writes what queued up while stalled.
  void resume() {
    {
      std::lock_guard lock(mutex_);
      if (!stalled_)
        return;
      stalled_ = false;
      drain_posted_ = false; // a drain that ran while stalled took nothing
      if (!claim_drain_locked())
        return;
    }
    post_drain();
  }
  // The stream ends without anything more being written (client gone, server stopping).
  void abandon() {
    std::lock_guard lock(mutex_);
    ended_ = true;
    queue_.clear();
    bytes_ = 0;
    writes_ = 0;
  }
  // Runs the end callbacks once.
  void finish(stream_end reason) {
    std::vector<std::function<void(stream_end)>> callbacks;
    {
      std::lock_guard lock(mutex_);
      if (end_reason_)
        return;
      end_reason_ = reason;
      ended_ = true;
      callbacks.swap(callbacks_);
    }
    for (auto& callback : callbacks)
      callback(reason);
  }

private:
  // True when the caller must post a drain, once it has let go of the mutex: posted under it,
  // the I/O thread woke, ran the drain into the held mutex and slept again until the writer let
  // go (a switch more on each side for most writes from another thread).
  bool claim_drain_locked();
  void post_drain();

  std::shared_ptr<http_server::impl> server_;
  std::weak_ptr<session> owner_;
  net::any_io_executor strand_;
  mutable std::mutex mutex_;
  std::vector<byte_piece> queue_;
  std::size_t bytes_ = 0;
  std::size_t writes_ = 0;      // the writes queue_ holds the pieces of
  std::size_t queue_limit_ = 0; // writes; 0: none
  bool queue_full_ = false;     // past queue_limit_: ends once the queue is written
  bool close_requested_ = false;
  bool overflowed_ = false; // past the server's byte bound: the queue is discarded
  bool ended_ = false;
  bool stalled_ = false;
  bool drain_posted_ = false;
  std::string overflow_message_;
  std::optional<stream_end> end_reason_;
  std::vector<std::function<void(stream_end)>> callbacks_;
};

// Pieces shorter than this are copied together with their neighbours: a watch event's literal
// head and tail, small objects. Longer ones (stored objects) are written from where they are.
constexpr std::size_t copy_pieces_below = 1024;

// The buffers that write `out`: its head, pieces and tail, with each run of short ones copied
// into `out.copied` as one buffer. Over TLS every buffer is a record of its own, and without
// this a watch event would be three.
void gather(stream_state::next_write& out, std::vector<net::const_buffer>& buffers) {
  std::size_t copied_bytes = out.head.size() + out.tail.size();
  for (const auto& piece : out.pieces)
    if (piece.bytes.size() < copy_pieces_below)
      copied_bytes += piece.bytes.size();
  out.copied.clear();
  out.copied.reserve(copied_bytes); // never grows below: the buffers point into it
  buffers.clear();
  std::size_t run_start = 0;
  bool in_run = false;
  auto copy = [&](std::string_view bytes) {
    if (bytes.empty())
      return;
    if (!in_run)
      run_start = out.copied.size();
    in_run = true;
    out.copied.append(bytes);
  };
  auto end_run = [&] {
    if (in_run)
      buffers.push_back(net::buffer(out.copied.data() + run_start, out.copied.size() - run_start));
    in_run = false;
  };
  copy(out.head);
  for (const auto& piece : out.pieces) {
    if (piece.bytes.size() < copy_pieces_below) {
      copy(piece.bytes);
    } else {
      end_run();
      buffers.push_back(net::buffer(piece.bytes.data(), piece.bytes.size()));
    }
  }
  copy(out.tail);
  end_run();
}

} // namespace

class session : public std::enable_shared_from_this<session> {
public:
  session(std::shared_ptr<http_server::impl> server, tcp::socket socket,
          std::shared_ptr<net::ssl::context> tls)
      : server_(std::move(server)), tls_(std::move(tls)),
        stream_(beast::tcp_stream(std::move(socket))), latency_timer_(strand()) {
    ++server_->live_sessions;
  }

  ~session() {
    if (--server_->live_sessions == 0 && server_->stopping)
      server_->post_while_open(server_->control,
                               [server = server_] { server->release_deadline_if_idle(); });
  }

  // Reads the first request; with TLS, after the handshake.
  void start();

  net::any_io_executor strand() { return tcp().get_executor(); }

  // Answers the current request (on the strand).
  void send(http_response response);
  // Starts the chunked response (on the strand).
  void begin_stream(std::shared_ptr<stream_state> body, int status, std::string content_type,
                    http_headers headers);
  // Writes what the stream has queued (on the strand).
  void drain();
  // Graceful stop: end a stream with its terminating chunk, close anything else.
  void shutdown();
  // Ends the stream as its close() does after `duration` (on the strand).
  void close_stream_after(std::chrono::milliseconds duration);
  // A fault (on the strand): the stream ends abruptly.
  void drop_stream();
  // Closes the connection: a stream abruptly, a response once written, an idle one now.
  void disconnect();
  // Closes the connection now, whatever is in flight: only once no I/O thread runs.
  void abandon() { close_connection(); }

private:
  // TLS: the handshake over what detect_ssl read, or Go's 400 for a client speaking plain HTTP.
  void handshake();
  void refuse_plain_http();
  void read_request();
  void on_request(beast::error_code ec);
  void dispatch();
  void write_response(bool keep_alive);
  void write_pieces(bool keep_alive);
  void after_response(beast::error_code ec, bool keep_alive);
  void watch_for_disconnect();
  void write_last_chunk();
  // Counts the stream as closed, then tells its writers why it ended.
  void end_stream(stream_end reason);
  // Why a failed stream write ended the stream: the write timeout, or the client went away.
  stream_end reason_for(beast::error_code ec) const;
  void close_connection();

  // Timeouts are set on the TCP layer.
  beast::tcp_stream& tcp() { return stream_.tcp(); }

  std::shared_ptr<http_server::impl> server_;
  std::shared_ptr<net::ssl::context> tls_; // outlives stream_, whose SSL object is made from it
  byte_stream stream_;                     // plain until a TLS client's first bytes arrive
  net::steady_timer latency_timer_;
  bool client_certificate_ = false; // TLS: the client CA signed the client's certificate
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  // A response whose body is gathered from pieces: its header, then the pieces.
  std::optional<http::response<http::empty_body>> pieces_header_;
  std::vector<net::const_buffer> pieces_;
  std::shared_ptr<const void> pieces_owner_;
  bool keep_alive_ = false;
  bool awaiting_answer_ = false;
  bool responding_ = false;           // from a request's arrival until its response is written
  bool close_after_response_ = false; // disconnect() came while responding
  bool closed_ = false;

  // Streaming.
  std::shared_ptr<stream_state> body_;
  bool streaming_ = false;
  bool writing_ = false;
  bool ending_for_stop_ = false; // stop() came while a write was in flight
  bool probe_failed_ = false;    // the disconnect probe failed while a write was in flight
  std::optional<net::steady_timer> stream_deadline_; // close_after()
  std::string out_;
  stream_state::next_write out_stream_;
  std::vector<net::const_buffer> out_buffers_;
  char probe_[512];
};

namespace {

// Keeps its session alive until it answers: while a route works, no I/O is pending on the
// connection, so nothing else holds it.
class exchange final : public http_exchange {
public:
  exchange(std::shared_ptr<http_server::impl> server, std::shared_ptr<session> owner,
           net::any_io_executor strand)
      : server_(std::move(server)), owner_(std::move(owner)), strand_(std::move(strand)) {}

  ~exchange() override {
    if (!answered_.exchange(true))
      post_response(status_response(500, "InternalError", "the request got no response"));
  }

  void respond(http_response response) override {
    if (answered_.exchange(true))
      return;
    post_response(std::move(response));
  }

  std::shared_ptr<http_stream> stream(int status, std::string content_type,
                                      http_headers headers) override {
    if (answered_.exchange(true)) {
      auto body = std::make_shared<stream_state>(server_, std::weak_ptr<session>(), strand_);
      body->abandon();
      body->finish(stream_end::finished);
      return body;
    }
    auto body = std::make_shared<stream_state>(server_, owner_, strand_);
    {
      std::lock_guard lock(server_->streams_mutex);
      std::erase_if(server_->streams, [](const auto& w) { return w.expired(); });
      server_->streams.push_back(body);
    }
    // A route that answers at once (on the session's strand, as the simulator's do) starts its
    // stream now: a fault injected as soon as the request is seen (a drop, a stall) finds it.
    const bool queued = server_->post_while_open(
        strand_,
        [owner = std::move(owner_), body, status, content_type = std::move(content_type),
         headers = std::move(headers)]() mutable {
          owner->begin_stream(body, status, std::move(content_type), std::move(headers));
        },
        true);
    if (!queued) { // the server has stopped: the stream ends before it starts
      body->abandon();
      body->finish(stream_end::finished);
    }
    return body;
  }

private:
  // Only the one caller that set answered_ gets here: owner_ is moved out once.
  void post_response(http_response response) {
    server_->post_while_open(
        strand_,
        [owner = std::move(owner_), response = std::move(response)]() mutable {
          owner->send(std::move(response));
        },
        true);
  }

  std::shared_ptr<http_server::impl> server_;
  std::shared_ptr<session> owner_;
  net::any_io_executor strand_;
  std::atomic<bool> answered_{false};
};

bool stream_state::write(byte_pieces pieces) {
  std::unique_lock lock(mutex_);
  if (ended_ || close_requested_ || overflowed_ || queue_full_)
    return false;
  if (pieces.empty()) // an empty HTTP chunk would end the stream
    return true;
  bool taken = true;
  if (bytes_ + pieces.size() > server_->options.stream_buffer_limit) {
    overflowed_ = true;
    queue_.clear();
    bytes_ = 0;
    writes_ = 0;
    taken = false;
  } else if (queue_limit_ > 0 && writes_ >= queue_limit_) {
    queue_full_ = true;
    taken = false;
  } else {
    bytes_ += pieces.size();
    ++writes_;
    if (queue_.empty()) {
      queue_ = pieces.release();
    } else {
      auto released = pieces.release();
      queue_.insert(queue_.end(), std::make_move_iterator(released.begin()),
                    std::make_move_iterator(released.end()));
    }
  }
  const bool post = claim_drain_locked();
  lock.unlock();
  if (post)
    post_drain();
  return taken;
}

void stream_state::close() {
  {
    std::lock_guard lock(mutex_);
    if (ended_ || close_requested_ || overflowed_)
      return;
    close_requested_ = true;
    if (!claim_drain_locked())
      return;
  }
  post_drain();
}

void stream_state::close_after(std::chrono::milliseconds duration) {
  net::post(strand_, [owner = owner_, duration] {
    if (auto s = owner.lock())
      s->close_stream_after(duration);
  });
}

bool stream_state::claim_drain_locked() {
  if (drain_posted_ && !overflowed_ && !close_requested_ && !queue_full_)
    return false;
  drain_posted_ = true;
  return true;
}

void stream_state::post_drain() {
  net::post(strand_, [owner = owner_] {
    if (auto s = owner.lock())
      s->drain();
  });
}

} // namespace

void session::start() {
  if (!tls_) {
    read_request();
    return;
  }
  tcp().expires_after(server_->options.idle_timeout);
  // The first bytes tell a TLS client from one speaking plain HTTP, which gets Go's answer (as
  // from the API server) and fails at once instead of retrying a closed connection.
  beast::async_detect_ssl(stream_, buffer_,
                          [self = shared_from_this()](beast::error_code ec, bool is_tls) {
                            if (ec) {
                              self->close_connection();
                              return;
                            }
                            if (!is_tls) {
                              self->refuse_plain_http();
                              return;
                            }
                            self->handshake();
                          });
}

void session::refuse_plain_http() {
  static constexpr std::string_view answer =
      "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
  net::async_write(
      stream_, net::buffer(answer.data(), answer.size()),
      [self = shared_from_this()](beast::error_code, std::size_t) { self->close_connection(); });
}

void session::handshake() {
  stream_.start_tls(*tls_);
  auto& tls = *stream_.tls();
  // The bytes detect_ssl read are the start of the handshake. (The default argument satisfies
  // Boost 1.81's check of this overload's handler, written for the one-argument signature.)
  tls.async_handshake(net::ssl::stream_base::server, buffer_.cdata(),
                      [self = shared_from_this()](beast::error_code ec, std::size_t used = 0) {
                        if (ec) { // a certificate the client refused, or not TLS after all
                          self->close_connection();
                          return;
                        }
                        self->buffer_.consume(used);
                        // Verified in the handshake against the client CA: its presence is
                        // the proof.
                        self->client_certificate_ =
                            SSL_get0_peer_certificate(self->stream_.tls()->native_handle()) !=
                            nullptr;
                        self->read_request();
                      });
}

void session::read_request() {
  parser_.emplace();
  parser_->body_limit(server_->options.max_request_body);
  parser_->header_limit(64 * 1024);
  tcp().expires_after(server_->options.idle_timeout);
  http::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
}

void session::on_request(beast::error_code ec) {
  if (closed_)
    return;
  if (ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
      ec == beast::error::timeout || ec == net::error::eof || ec == net::error::connection_reset) {
    close_connection();
    return;
  }
  responding_ = true;
  if (ec == http::error::body_limit || ec == http::error::header_limit) {
    keep_alive_ = false;
    awaiting_answer_ = true;
    send(status_response(413, "RequestEntityTooLarge", "request too large: " + ec.message()));
    return;
  }
  if (ec) {
    if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
      keep_alive_ = false;
      awaiting_answer_ = true;
      send(status_response(400, "BadRequest", "malformed HTTP request: " + ec.message()));
    } else {
      close_connection();
    }
    return;
  }
  auto delay = server_->latency_ms.load();
  if (delay <= 0) {
    dispatch();
    return;
  }
  latency_timer_.expires_after(std::chrono::milliseconds(delay));
  latency_timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
    if (!wait_ec && !self->closed_)
      self->dispatch();
  });
}

void session::dispatch() {
  auto& message = parser_->get();
  keep_alive_ = message.keep_alive() && !server_->stopping;
  http_request request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.path = request.target.substr(0, request.target.find('?'));
  for (const auto& field : message) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    request.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  request.body = std::move(message.body());
  request.client_certificate = client_certificate_;
  parser_.reset();
  awaiting_answer_ = true;
  tcp().expires_never();

  if (request.path.empty() || request.path.front() != '/') {
    send(status_response(400, "BadRequest", "the request target must be an absolute path"));
    return;
  }
  const auto& token = server_->options.bearer_token;
  if (!token.empty()) {
    auto authorization = request.header("authorization");
    constexpr std::string_view scheme = "Bearer ";
    if (!authorization || !authorization->starts_with(scheme)) {
      send(status_response(401, "Unauthorized", "Unauthorized"));
      return;
    }
    if (!same_secret(authorization->substr(scheme.size()), token)) {
      send(status_response(403, "Forbidden", "the bearer token is not accepted"));
      return;
    }
  }
  const route_handler* route = server_->find_route(request.path);
  if (route == nullptr) {
    send(status_response(404, "NotFound", "the server could not find the requested resource"));
    return;
  }
  auto answer = std::make_shared<exchange>(server_, shared_from_this(), strand());
  try {
    (*route)(request, answer);
  } catch (const std::exception& e) {
    answer->respond(status_response(500, "InternalError", e.what()));
  }
}

void session::send(http_response response) {
  if (closed_ || !awaiting_answer_)
    return;
  awaiting_answer_ = false;
  if (!response.body_pieces.empty()) {
    pieces_header_.emplace(static_cast<http::status>(response.status), 11);
    pieces_header_->set(http::field::server, server_->options.server_name);
    pieces_header_->set(http::field::content_type, response.content_type);
    for (auto& [name, value] : response.headers)
      pieces_header_->set(name, value);
    std::size_t total = 0;
    pieces_.clear();
    pieces_.reserve(response.body_pieces.size());
    for (std::string_view piece : response.body_pieces) {
      total += piece.size();
      pieces_.emplace_back(piece.data(), piece.size());
    }
    pieces_owner_ = std::move(response.pieces_owner);
    pieces_header_->keep_alive(keep_alive_);
    pieces_header_->content_length(total);
    write_pieces(keep_alive_);
    return;
  }
  response_.emplace(static_cast<http::status>(response.status), 11);
  response_->set(http::field::server, server_->options.server_name);
  response_->set(http::field::content_type, response.content_type);
  for (auto& [name, value] : response.headers)
    response_->set(name, value);
  response_->body() = std::move(response.body);
  response_->keep_alive(keep_alive_);
  response_->prepare_payload();
  write_response(keep_alive_);
}

void session::write_response(bool keep_alive) {
  tcp().expires_after(server_->options.idle_timeout);
  http::async_write(stream_, *response_,
                    [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t n) {
                      self->server_->bytes_written += n;
                      self->response_.reset();
                      self->after_response(ec, keep_alive);
                    });
}

void session::write_pieces(bool keep_alive) {
  tcp().expires_after(server_->options.idle_timeout);
  // The header (its Content-Length counts the pieces), then the pieces in one gathered write.
  http::async_write(stream_, *pieces_header_,
                    [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t n) {
                      self->server_->bytes_written += n;
                      if (ec) {
                        self->after_response(ec, keep_alive);
                        return;
                      }
                      net::async_write(self->stream_, self->pieces_,
                                       [self, keep_alive](beast::error_code ec, std::size_t n) {
                                         self->server_->bytes_written += n;
                                         self->after_response(ec, keep_alive);
                                       });
                    });
}

void session::after_response(beast::error_code ec, bool keep_alive) {
  pieces_header_.reset();
  pieces_.clear();
  pieces_owner_.reset();
  responding_ = false;
  if (ec || !keep_alive || server_->stopping || close_after_response_)
    close_connection();
  else
    read_request();
}

void session::begin_stream(std::shared_ptr<stream_state> body, int status, std::string content_type,
                           http_headers headers) {
  if (closed_ || !awaiting_answer_) {
    body->abandon();
    body->finish(stream_end::client_gone);
    return;
  }
  if (close_after_response_) { // disconnect() came while the route worked: no stream starts
    body->abandon();
    body->finish(stream_end::dropped);
    close_connection();
    return;
  }
  awaiting_answer_ = false;
  responding_ = false; // the stream is the response now: disconnect() drops it
  body_ = std::move(body);
  streaming_ = true;
  ++server_->open_streams;
  auto code = static_cast<http::status>(status);
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " +
                     std::string(http::obsolete_reason(code)) +
                     "\r\nServer: " + server_->options.server_name + "\r\n" +
                     "Content-Type: " + content_type + "\r\n";
  for (auto& [name, value] : headers)
    head += name + ": " + value + "\r\n";
  head += "Cache-Control: no-cache, private\r\nTransfer-Encoding: chunked\r\n\r\n";
  out_ = std::move(head);
  writing_ = true;
  tcp().expires_after(server_->options.stream_write_timeout);
  net::async_write(stream_, net::buffer(out_),
                   [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                     self->writing_ = false;
                     self->server_->bytes_written += n;
                     if (ec) {
                       self->end_stream(self->reason_for(ec));
                       self->close_connection();
                       return;
                     }
                     // Between writes nothing times out: the disconnect probe waits freely.
                     self->tcp().expires_never();
                     if (self->ending_for_stop_) {
                       self->write_last_chunk();
                       return;
                     }
                     self->watch_for_disconnect();
                     self->drain();
                   });
}

void session::drain() {
  if (closed_ || !body_ || writing_)
    return;
  out_stream_ = body_->take();
  if (out_stream_.empty())
    return;
  bool last = out_stream_.last;
  if (last) // over before its terminating chunk is on the wire: a client that read the end
    end_stream(out_stream_.reason.value_or(stream_end::finished)); // never finds it open
  gather(out_stream_, out_buffers_);
  writing_ = true;
  // A client that stops reading is dropped after the write timeout; the last words wait less.
  tcp().expires_after(last ? std::min<std::chrono::milliseconds>(
                                 std::chrono::seconds(2), server_->options.stream_write_timeout)
                           : server_->options.stream_write_timeout);
  net::async_write(stream_, out_buffers_,
                   [self = shared_from_this(), last](beast::error_code ec, std::size_t n) {
                     self->writing_ = false;
                     self->server_->bytes_written += n;
                     self->out_stream_ = {};
                     self->out_buffers_.clear();
                     if (!ec)
                       self->tcp().expires_never();
                     if (!ec && self->probe_failed_) { // the client went away meanwhile
                       self->end_stream(stream_end::client_gone);
                       self->close_connection();
                     } else if (ec) {
                       self->end_stream(self->reason_for(ec));
                       self->close_connection();
                     } else if (last) {
                       self->close_connection();
                     } else if (self->ending_for_stop_) {
                       self->write_last_chunk();
                     } else {
                       self->drain();
                     }
                   });
}

void session::close_stream_after(std::chrono::milliseconds duration) {
  if (closed_ || !body_)
    return;
  stream_deadline_.emplace(strand(), duration);
  stream_deadline_->async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec && self->body_)
      self->body_->close();
  });
}

void session::drop_stream() {
  if (!streaming_)
    return;
  end_stream(stream_end::dropped);
  close_connection();
}

void session::disconnect() {
  if (closed_)
    return;
  if (streaming_)
    return drop_stream();
  if (responding_) {
    close_after_response_ = true; // the response being made or written goes out first
    return;
  }
  close_connection();
}

void session::watch_for_disconnect() {
  // Anything the client sends while we stream is ignored; its end of the connection is not.
  stream_.async_read_some(net::buffer(probe_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            if (self->closed_)
                              return;
                            if (!ec) {
                              self->watch_for_disconnect();
                              return;
                            }
                            // A write in flight fails too (or times out) and says why; should it
                            // succeed, its completion ends the stream.
                            if (self->writing_) {
                              self->probe_failed_ = true;
                              return;
                            }
                            self->end_stream(stream_end::client_gone);
                            self->close_connection();
                          });
}

void session::shutdown() {
  if (closed_)
    return;
  if (!streaming_ && body_ && writing_)
    return; // the stream's last words are being written; their completion closes
  if (streaming_ && body_) {
    // The terminating chunk tells the client the stream ended cleanly (a watch client re-watches
    // elsewhere); whatever was queued is dropped.
    end_stream(stream_end::stopping);
    ending_for_stop_ = true;
    if (!writing_)
      write_last_chunk();
    return;
  }
  close_connection();
}

void session::write_last_chunk() {
  out_ = std::string(last_chunk);
  writing_ = true;
  tcp().expires_after(std::chrono::seconds(1));
  net::async_write(stream_, net::buffer(out_),
                   [self = shared_from_this()](beast::error_code, std::size_t) {
                     self->writing_ = false;
                     self->close_connection();
                   });
}

stream_end session::reason_for(beast::error_code ec) const {
  return ec == beast::error::timeout ? stream_end::write_timeout : stream_end::client_gone;
}

void session::end_stream(stream_end reason) {
  if (streaming_) {
    streaming_ = false;
    --server_->open_streams;
    if (reason == stream_end::overflow || reason == stream_end::write_timeout)
      ++server_->slow_streams_dropped;
  }
  if (body_) {
    body_->abandon();
    body_->finish(reason);
  }
}

void session::close_connection() {
  if (closed_)
    return;
  closed_ = true;
  end_stream(stream_end::client_gone);
  latency_timer_.cancel();
  if (stream_deadline_)
    stream_deadline_->cancel();
  beast::error_code ignored;
  tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
  tcp().close();
}

namespace {

// Past max_connections: a 429 with Retry-After, written without reading the request, then the
// connection is closed.
void refuse_connection(const std::shared_ptr<http_server::impl>& server, tcp::socket socket) {
  ++server->connections_refused;
  if (server->current_tls()) { // no handshake for a refusal: the connection is just closed
    beast::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
    return;
  }
  auto body = status_json(
      make_failure(429, "TooManyRequests", "too many connections to the server; retry later"));
  auto text = std::make_shared<std::string>(
      "HTTP/1.1 429 Too Many Requests\r\nServer: " + server->options.server_name +
      "\r\nContent-Type: application/json\r\nRetry-After: " +
      std::to_string(server->options.retry_after_seconds) +
      "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
      body);
  auto held = std::make_shared<tcp::socket>(std::move(socket));
  net::async_write(*held, net::buffer(*text), [held, text](beast::error_code, std::size_t) {
    beast::error_code ignored;
    held->shutdown(tcp::socket::shutdown_both, ignored);
    held->close(ignored);
  });
}

void accept_next(const std::shared_ptr<http_server::impl>& server) {
  server->acceptor->async_accept(
      net::make_strand(server->ioc), [server](beast::error_code ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted || server->stopping || !server->acceptor->is_open())
          return;
        if (!ec && server->options.max_connections > 0 &&
            server->live_sessions >= server->options.max_connections) {
          refuse_connection(server, std::move(socket));
        } else if (!ec) {
          socket.set_option(tcp::no_delay(true), ec); // watch events leave as they are written
          auto s = std::make_shared<session>(server, std::move(socket), server->current_tls());
          {
            std::lock_guard lock(server->sessions_mutex);
            std::erase_if(server->sessions, [](const auto& w) { return w.expired(); });
            server->sessions.push_back(s);
          }
          s->start();
        }
        accept_next(server);
      });
}

} // namespace

http_server::http_server(http_server_options options)
    : impl_(std::make_shared<impl>(std::move(options))) {}

http_server::~http_server() {
  stop();
}

void http_server::add_route(std::string prefix, route_handler handler) {
  impl_->routes[std::move(prefix)] = std::move(handler);
}

status_result http_server::start() {
  auto& s = *impl_;
  if (s.running)
    return ok_v;
  auto endpoint = parse_listen(s.options.listen);
  if (!endpoint)
    return std::move(endpoint).err();
  if (!s.options.tls_certificate_file.empty() || !s.options.tls_key_file.empty() ||
      !s.options.tls_certificate_pem.empty() || !s.options.tls_key_pem.empty()) {
    auto context =
        make_tls_context(s.options, s.options.tls_certificate_pem, s.options.tls_key_pem);
    if (!context)
      return std::move(context).err();
    std::lock_guard lock(s.tls_mutex);
    s.tls = std::move(context).value();
  }
  boost::system::error_code ec;
  // On the control strand: accept completions and stop()'s close never touch it at once.
  s.acceptor.emplace(s.control);
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
  s.bound_port = bound.port();
  s.endpoint_text = host + ":" + std::to_string(s.bound_port);
  s.running = true;
  s.stopping = false;
  s.ioc.restart(); // a stop() before leaves it stopped: run() would return at once
  s.io_closed = false;
  accept_next(impl_);
  for (std::size_t i = 0; i < std::max<std::size_t>(1, s.options.io_threads); ++i)
    s.threads.emplace_back([&s] {
      pthread_setname_np(pthread_self(), s.options.thread_name.substr(0, 15).c_str());
      s.ioc.run();
    });
  return ok_v;
}

void http_server::stop() {
  auto& s = *impl_;
  if (!s.running)
    return;
  s.running = false;
  s.stopping = true;
  std::vector<std::shared_ptr<session>> live;
  std::vector<std::weak_ptr<session>> all;
  {
    std::lock_guard lock(s.sessions_mutex);
    all.swap(s.sessions);
  }
  for (auto& w : all)
    if (auto p = w.lock())
      live.push_back(std::move(p));
  net::post(s.control, [server = impl_] {
    beast::error_code ignored;
    server->acceptor->close(ignored);
    // Should a client never take its last chunk, the I/O threads still end.
    server->stop_deadline.emplace(server->control, std::chrono::seconds(3));
    server->stop_deadline->async_wait([server](beast::error_code ec) {
      if (!ec)
        server->ioc.stop();
    });
    server->release_deadline_if_idle();
  });
  for (auto& p : live)
    net::post(p->strand(), [p] { p->shutdown(); });
  live.clear();
  for (auto& t : s.threads)
    t.join();
  s.threads.clear();
  s.acceptor.reset();
  s.stop_deadline.reset();
  // When the deadline stopped the threads, work was still queued (a write to a client that
  // stopped reading): its handlers hold their sessions, which hold the server, so none of it
  // would ever be freed. No thread runs the I/O context now: close what is left here, and let
  // the aborted operations complete and release what they hold.
  {
    // And any an accept registered while stop() began.
    std::lock_guard lock(s.sessions_mutex);
    all.insert(all.end(), s.sessions.begin(), s.sessions.end());
    s.sessions.clear();
  }
  for (auto& w : all)
    if (auto p = w.lock())
      p->abandon();
  s.ioc.restart();
  for (int round = 0; round < 100 && s.ioc.poll() > 0; ++round)
    ;
  // From now on nothing is queued (an answer a route gives later is dropped where it is given);
  // what was queued before this runs now, for the last time. (Only other threads post now, so
  // none of them is waiting on this one.)
  s.io_closed = true;
  while (s.posting > 0)
    std::this_thread::yield();
  s.ioc.restart();
  for (int round = 0; round < 100 && s.ioc.poll() > 0; ++round)
    ;
}

std::string http_server::local_endpoint() const {
  return impl_->endpoint_text;
}

std::uint16_t http_server::port() const {
  return impl_->bound_port;
}

std::size_t http_server::open_streams() const {
  return impl_->open_streams;
}

http_server_stats http_server::stats() const {
  return {impl_->connections_refused, impl_->slow_streams_dropped, impl_->bytes_written};
}

status_result http_server::replace_certificate(std::string certificate_pem, std::string key_pem) {
  auto& s = *impl_;
  if (!s.current_tls())
    return make_error(errc::invalid_argument, "the server serves plain HTTP: no certificate");
  auto context = make_tls_context(s.options, certificate_pem, key_pem);
  if (!context)
    return std::move(context).err();
  {
    std::lock_guard lock(s.tls_mutex);
    s.tls = std::move(context).value();
  }
  for (auto& p : s.live_sessions_now())
    impl_->post_while_open(p->strand(), [p] { p->disconnect(); });
  return ok_v;
}

void http_server::drop_streams() {
  for (auto& p : impl_->live_sessions_now())
    impl_->post_while_open(p->strand(), [p] { p->drop_stream(); });
}

// Directly on each stream, not posted to its session: once this returns, nothing written to a
// stream goes out until resume_streams().
void http_server::stall_streams() {
  for (auto& stream : impl_->live_streams_now())
    stream->stall();
}

void http_server::resume_streams() {
  for (auto& stream : impl_->live_streams_now())
    stream->resume();
}

void http_server::set_latency(std::chrono::milliseconds delay) {
  impl_->latency_ms.store(delay.count());
}

} // namespace kinformer::apiserver
