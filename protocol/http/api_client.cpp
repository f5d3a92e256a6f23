// The only translation unit with Beast, Asio and OpenSSL for the client: everything network
// lives here, behind api_client's pimpl. Each request is one C++20 coroutine on the I/O thread.

#include "protocol/http/api_client.hpp"

#include "protocol/exec_credential.hpp"
#include "protocol/percent_encode.hpp"
#include "protocol/proxy.hpp"
#include "protocol/refusal.hpp"

#include "protocol/http/decode_worker.hpp"
#include "protocol/http/tls_client.hpp"
#include "protocol/line_splitter.hpp"
#include "protocol/list_decoder.hpp"
#include "protocol/prefault.hpp"
#include "protocol/retry_after.hpp"
#include "protocol/stream/byte_stream.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <sstream>
#include <sys/socket.h>
#include <thread>
#include <unordered_map>
#include <utility>

namespace kinformer {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;
template <class T>
using awaitable = asio::awaitable<T>;

namespace {

// Awaits without throwing: every operation yields (error_code, values...).
constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

// Lists, gets and watches read the socket in large pieces: at ~3.5 KB an object, one read serves
// dozens of objects (small reads cost a recvmsg and a coroutine resumption each).
constexpr std::size_t stream_read_bytes = 256 * 1024;
// Room a watch asks of its line buffer before each read (it takes what is there, often more).
constexpr std::size_t min_line_room = 64 * 1024;
constexpr std::size_t max_error_body_bytes = 1 << 20;
constexpr const char* accept_json = "application/json";
constexpr const char* accept_metadata_list =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
constexpr const char* accept_metadata =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

// Builds "path?a=b&c=d", skipping empty values.
class query_builder {
public:
  explicit query_builder(std::string path) : target_(std::move(path)) {
    separator_ = target_.find('?') == std::string::npos ? '?' : '&';
  }
  query_builder& add(std::string_view key, std::string_view value) {
    if (value.empty())
      return *this;
    target_.push_back(separator_);
    separator_ = '&';
    target_.append(key);
    target_.push_back('=');
    target_.append(percent_encode(value));
    return *this;
  }
  std::string str() && { return std::move(target_); }

private:
  std::string target_;
  char separator_;
};

std::string build_list_target(const list_request& r) {
  query_builder q(r.path);
  q.add("labelSelector", r.label_selector).add("fieldSelector", r.field_selector);
  q.add("resourceVersion", r.resource_version);
  q.add("resourceVersionMatch", r.resource_version_match);
  q.add("limit", r.limit > 0 ? std::to_string(r.limit) : "");
  q.add("continue", r.continue_token);
  return std::move(q).str();
}

std::string build_watch_target(const watch_request& r) {
  query_builder q(r.path);
  q.add("watch", "1");
  q.add("labelSelector", r.label_selector).add("fieldSelector", r.field_selector);
  q.add("resourceVersion", r.resource_version);
  q.add("resourceVersionMatch", r.resource_version_match);
  q.add("allowWatchBookmarks", r.allow_watch_bookmarks ? "true" : "");
  q.add("sendInitialEvents", r.send_initial_events ? "true" : "");
  q.add("timeoutSeconds", r.timeout_seconds > 0 ? std::to_string(r.timeout_seconds) : "");
  return std::move(q).str();
}

watch_close_reason close_reason_for(errc code) {
  switch (code) {
  case errc::cancelled:
    return watch_close_reason::cancelled;
  case errc::tls:
    return watch_close_reason::tls_error;
  case errc::timeout:
    return watch_close_reason::timeout;
  default:
    return watch_close_reason::io_error;
  }
}

// The Retry-After header in seconds; a date is measured against the wall clock.
std::optional<int> retry_after_header(std::string_view value) {
  const auto wait = parse_retry_after(value, std::chrono::system_clock::now());
  if (!wait)
    return std::nullopt;
  return static_cast<int>(wait->count());
}

// details.retryAfterSeconds, held to the same bounds as the header.
int bounded_retry_after(int seconds) {
  return static_cast<int>(std::clamp<std::int64_t>(seconds, 0, max_retry_after.count()));
}

// The bearer token, from a literal or a file that rotates. Used on the I/O thread only.
class token_source {
public:
  token_source(std::string token, std::string file, std::chrono::milliseconds interval)
      : token_(std::move(token)), file_(std::move(file)), interval_(interval) {}

  // The token to send now; re-reads the file when the recheck interval has passed.
  const std::string& current() {
    if (!file_.empty() && (!checked_ || clock_type::now() - last_check_ >= interval_))
      reload();
    return token_;
  }

  // Re-reads the file now (after a 401); true when the token changed.
  bool refresh() {
    if (file_.empty())
      return false;
    const std::string before = token_;
    reload();
    return token_ != before;
  }

private:
  void reload() {
    checked_ = true;
    last_check_ = clock_type::now();
    std::error_code ec;
    const auto mtime = std::filesystem::last_write_time(file_, ec);
    if (ec || (loaded_ && mtime == mtime_))
      return; // unchanged, or briefly missing: keep the last good token
    std::ifstream in(file_, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string token = text.str();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
      token.pop_back();
    if (token.empty())
      return;
    token_ = std::move(token);
    mtime_ = mtime;
    loaded_ = true;
  }

  std::string token_;
  std::string file_;
  std::chrono::milliseconds interval_;
  bool checked_ = false;
  clock_type::time_point last_check_{};
  std::filesystem::file_time_type mtime_{};
  bool loaded_ = false;
};

// One TCP connection, plain or TLS. Exposes just the operations requests need.
class connection {
public:
  // TLS (over the proxy's tunnel, if any) when `tls_context` is given.
  connection(asio::io_context& ioc, ssl::context* tls_context)
      : tls_context_(tls_context), stream_(beast::tcp_stream(ioc)) {}

  beast::tcp_stream& tcp() { return stream_.tcp(); }

  // Whether a kept-alive connection is still open and quiet: the server has neither closed it
  // (kube-apiserver closes idle ones) nor sent anything since the last response. As Go's
  // transport does, such a connection is dropped before a request goes out on it, so that a
  // request that may not be sent twice (a POST) does not fail for being sent to a closed socket.
  bool open_and_quiet() {
    char byte = 0;
    const ssize_t n = ::recv(tcp().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  // Human-readable TLS failure, with the certificate verification result when there is one.
  std::string describe_tls_failure(const error_code& ec) {
    auto* tls = stream_.tls();
    return kinformer::describe_tls_failure(tls ? tls->native_handle() : nullptr, ec);
  }

  // Connects to `endpoints`: the server's, or the proxy's when `tunnel_to` names the server
  // ("host:port") to open a CONNECT tunnel to first.
  awaitable<error_code> connect(const tcp::resolver::results_type& endpoints,
                                const std::string& verify_name, bool verify,
                                clock_type::time_point deadline, const std::string& tunnel_to = {},
                                const std::string& proxy_authorization = {}) {
    tcp().expires_at(deadline);
    auto [ec, endpoint] = co_await tcp().async_connect(endpoints, nothrow);
    if (ec)
      co_return ec;
    tcp().socket().set_option(tcp::no_delay(true), ec);
    if (!tunnel_to.empty()) {
      if (auto tunnel_ec = co_await open_tunnel(tunnel_to, proxy_authorization); tunnel_ec)
        co_return tunnel_ec;
    }
    if (!tls_context_)
      co_return error_code{};
    stream_.start_tls(*tls_context_);
    auto& tls = *stream_.tls();
    prepare_tls_connection(tls.native_handle(), verify_name, verify);
    tcp().expires_at(deadline);
    auto [hs_ec] = co_await tls.async_handshake(ssl::stream_base::client, nothrow);
    co_return hs_ec;
  }

  // Why the proxy refused the tunnel ("407 Proxy Authentication Required"); empty otherwise.
  const std::string& proxy_refusal() const noexcept { return proxy_refusal_; }

  awaitable<error_code> write(bhttp::request<bhttp::string_body>& request,
                              clock_type::time_point deadline) {
    tcp().expires_at(deadline);
    auto [ec, n] = co_await bhttp::async_write(stream_, request, nothrow);
    co_return ec;
  }

  awaitable<error_code> read_header(bhttp::response_parser<bhttp::buffer_body>& parser,
                                    clock_type::time_point deadline) {
    tcp().expires_at(deadline);
    auto [ec, n] = co_await bhttp::async_read_header(stream_, buffer_, parser, nothrow);
    co_return ec;
  }

  // Reads whatever body bytes arrive next into `out` (at most `size`); returns how many.
  // Without a deadline the read waits for as long as it takes.
  awaitable<std::pair<error_code, std::size_t>>
  read_body_some(bhttp::response_parser<bhttp::buffer_body>& parser, char* out, std::size_t size,
                 std::optional<clock_type::time_point> deadline) {
    auto& body = parser.get().body();
    body.data = out;
    body.size = size;
    if (deadline)
      tcp().expires_at(*deadline);
    else
      tcp().expires_never();
    auto [ec, n] = co_await bhttp::async_read_some(stream_, buffer_, parser, nothrow);
    if (ec == bhttp::error::need_buffer)
      ec = {};
    co_return std::pair{ec, size - body.size};
  }

  // Moves the body bytes that follow into `out` (at most `size`, at least one unless the body
  // ended): first whatever this connection has already received, parsed without waiting, and
  // only when that gives nothing, one socket read of up to stream_read_bytes. Chunk framing is
  // removed on the way, so one call gathers many chunks. No timer is armed per read: callers
  // that need one watch the connection themselves.
  awaitable<std::pair<error_code, std::size_t>>
  read_body_into(bhttp::response_parser<bhttp::buffer_body>& parser, char* out, std::size_t size) {
    auto& body = parser.get().body();
    body.data = out;
    body.size = size;
    parser.eager(true); // parse on past each chunk while input remains
    for (;;) {
      if (buffer_.size() != 0) {
        error_code ec;
        const std::size_t used = parser.put(buffer_.data(), ec);
        buffer_.consume(used);
        const std::size_t produced = size - body.size;
        if (ec == bhttp::error::need_more || ec == bhttp::error::need_buffer)
          ec = {};
        if (ec || produced != 0 || parser.is_done())
          co_return std::pair{ec, produced};
        if (used != 0)
          continue; // a chunk header without data yet: parse on
      }
      tcp().expires_never();
      auto [ec, n] = co_await stream_.async_read_some(buffer_.prepare(stream_read_bytes), nothrow);
      buffer_.commit(n);
      if (ec == asio::error::eof) {
        // A body delimited by the connection's end completes here; a chunked one is cut short.
        parser.put_eof(ec);
        co_return std::pair{ec, std::size_t{0}};
      }
      if (ec)
        co_return std::pair{ec, std::size_t{0}};
    }
  }

  void close() {
    error_code ignored;
    tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    tcp().close();
  }

private:
  // CONNECT target HTTP/1.1 through the proxy this socket reached; anything but 200 fails.
  awaitable<error_code> open_tunnel(const std::string& target, const std::string& authorization) {
    bhttp::request<bhttp::empty_body> request{bhttp::verb::connect, target, 11};
    request.set(bhttp::field::host, target);
    if (!authorization.empty())
      request.set(bhttp::field::proxy_authorization, authorization);
    auto [wec, written] = co_await bhttp::async_write(stream_, request, nothrow);
    if (wec)
      co_return wec;
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::empty_body> parser;
    parser.skip(true); // a CONNECT answer has no body: the tunnel follows the header
    auto [rec, read] = co_await bhttp::async_read_header(stream_, buffer, parser, nothrow);
    if (rec)
      co_return rec;
    if (parser.get().result_int() != 200) {
      proxy_refusal_ =
          std::to_string(parser.get().result_int()) + " " + std::string(parser.get().reason());
      co_return asio::error::connection_refused;
    }
    co_return error_code{};
  }

  ssl::context* tls_context_; // null: plain HTTP
  byte_stream stream_;
  std::string proxy_refusal_;
  beast::flat_buffer buffer_;
};

// A running request: what shutdown and cancel() need to stop it.
struct operation {
  explicit operation(asio::io_context& ioc) : wake(ioc, clock_type::time_point::max()) {}
  virtual ~operation() = default;

  void abort() {
    aborted = true;
    if (conn)
      conn->close();
    wake.cancel();
  }

  std::uint64_t id = 0;
  bool aborted = false; // set on the I/O thread
  // What the last socket failure was, for the caller's retry decision.
  transport_failure transport = transport_failure::none;
  std::shared_ptr<connection> conn; // the connection in use, closed on abort
  asio::steady_timer wake;          // a paused watch waits on it for credit
};

// Lets handles post to the I/O thread for as long as the client exists.
struct client_liveness {
  std::mutex mutex;
  asio::io_context* ioc = nullptr;

  template <class F>
  void post(F&& f) {
    std::lock_guard lock(mutex);
    if (ioc)
      asio::post(*ioc, std::forward<F>(f));
  }
};

struct watch_session;

} // namespace

struct watch_control {
  std::uint64_t id = 0;
  std::shared_ptr<client_liveness> liveness;
  std::atomic<bool> cancel_requested{false};
  std::atomic<bool> closed{false};
  std::atomic<std::uint64_t> bytes_received{0};
  std::atomic<clock_type::rep> last_activity{0};
  std::weak_ptr<watch_session> session; // touched on the I/O thread only
};

namespace {

struct watch_session : operation {
  using operation::operation;

  watch_request request;
  watch_callbacks callbacks;
  std::shared_ptr<watch_control> control;
  std::size_t credit = 0;
  std::uint64_t events_delivered = 0;

  // The idle timeout is checked by one coarse timer rather than re-armed on every read: reads
  // only note the time, and the watchdog wakes about once per timeout period.
  asio::steady_timer idle_watchdog{wake.get_executor()};
  clock_type::time_point last_progress{}; // last read, or the end of the last pause
  bool reading = false;                   // false while paused for credit
  bool idle_expired = false;              // the watchdog closed the connection

  static void watch_idle(const std::shared_ptr<watch_session>& self) {
    self->idle_watchdog.expires_at(self->last_progress + self->request.idle_timeout);
    self->idle_watchdog.async_wait([weak = std::weak_ptr(self)](error_code ec) {
      auto s = weak.lock();
      if (ec || !s || s->control->closed)
        return;
      const auto now = clock_type::now();
      if (!s->reading)
        s->last_progress = now; // a paused watch never times out
      if (now - s->last_progress < s->request.idle_timeout) {
        watch_idle(s);
        return;
      }
      s->idle_expired = true;
      if (s->conn)
        s->conn->close(); // the pending read fails; the stream sees idle_expired
    });
  }

  void add_credit(std::size_t n) {
    credit = (credit > unlimited_credit - n) ? unlimited_credit : credit + n;
    wake.cancel();
  }
  bool stopping() const { return aborted || control->cancel_requested.load(); }
  void touch(std::size_t bytes) {
    control->bytes_received += bytes;
    control->last_activity = clock_type::now().time_since_epoch().count();
  }
};

// One request as it goes out: its verb (for the method and metrics), target, Accept, and a body.
struct outgoing_request {
  api_verb verb = api_verb::get;
  std::string target;
  std::string accept;
  std::string content_type;
  std::string body;
};

bhttp::verb method_of(api_verb verb) {
  switch (verb) {
  case api_verb::create:
    return bhttp::verb::post;
  case api_verb::update:
    return bhttp::verb::put;
  case api_verb::patch:
    return bhttp::verb::patch;
  case api_verb::delete_:
    return bhttp::verb::delete_;
  case api_verb::list:
  case api_verb::watch:
  case api_verb::get:
    break;
  }
  return bhttp::verb::get;
}

// Whether sending the request twice does no more than sending it once: safe to send again on a
// fresh connection when a kept-alive one failed after the request went out.
bool idempotent(api_verb verb) {
  return verb != api_verb::create && verb != api_verb::patch;
}

// The outcome of one HTTP exchange for lists, gets and writes.
struct raw_response {
  int status_code = 0;
  std::string content_type;
  std::optional<int> retry_after_seconds;
  std::string body; // empty when a body_sink took a 2xx body
};

// A piece of a 2xx body as read: `size` bytes at the start of `buffer`, which holds
// stream_read_bytes. A sink that keeps the bytes past its call may take the buffer (the reader
// then reads into a new one) instead of copying them.
struct body_piece {
  std::unique_ptr<char[]>& buffer;
  std::size_t size;

  std::string_view bytes() const noexcept { return {buffer.get(), size}; }
};

// Takes a 2xx body piece by piece as it arrives (a list's items are decoded as they come);
// an error stops the exchange and closes the connection.
using body_sink = std::function<status_result(body_piece)>;

// One deadline for a whole exchange: when it passes, the connection is closed, which fails
// whatever read is pending. Reads arm no timer of their own.
struct exchange_deadline {
  bool finished = false; // the exchange is over: a late expiry must not touch the connection
  bool expired = false;
};

std::shared_ptr<exchange_deadline> arm_deadline(asio::steady_timer& timer,
                                                clock_type::time_point deadline,
                                                std::shared_ptr<connection> conn) {
  auto state = std::make_shared<exchange_deadline>();
  timer.expires_at(deadline);
  timer.async_wait([state, conn = std::move(conn)](error_code ec) {
    if (ec || state->finished)
      return;
    state->expired = true;
    conn->close();
  });
  return state;
}

// "GET /api/v1/pods", for error messages.
std::string describe(const outgoing_request& out) {
  return std::string(bhttp::to_string(method_of(out.verb))) + " " + out.target;
}

// The failure of a non-2xx answer, with the decoded Status when the body is one.
std::pair<error, response_info> describe_failure(const raw_response& response) {
  response_info info;
  info.http_status = response.status_code;
  info.server_status = decode_status(response.body);
  info.retry_after_seconds = response.retry_after_seconds;
  // Bounded where it enters: the reflector also reads details.retryAfterSeconds itself.
  if (info.server_status && info.server_status->retry_after_seconds)
    info.server_status->retry_after_seconds =
        bounded_retry_after(*info.server_status->retry_after_seconds);
  if (!info.retry_after_seconds && info.server_status)
    info.retry_after_seconds = info.server_status->retry_after_seconds;
  auto message = describe_refusal(response.status_code, info.server_status, response.body);
  return {make_error(errc::status, std::move(message)), std::move(info)};
}

} // namespace

namespace {

// Notices that a file (the CA bundle) was replaced: by its modification time, looked at no more
// often than `interval`, or at once after check_now().
class file_change_watch {
public:
  file_change_watch(std::string path, std::chrono::milliseconds interval)
      : path_(std::move(path)), interval_(interval) {
    std::error_code ec;
    mtime_ = std::filesystem::last_write_time(path_, ec);
    last_check_ = clock_type::now();
  }

  // True when the file changed since the last time this returned true (or since creation).
  bool changed() {
    if (path_.empty() || (!forced_ && clock_type::now() - last_check_ < interval_))
      return false;
    forced_ = false;
    last_check_ = clock_type::now();
    std::error_code ec;
    const auto mtime = std::filesystem::last_write_time(path_, ec);
    if (ec || mtime == mtime_)
      return false; // unchanged, or briefly missing while being replaced
    mtime_ = mtime;
    return true;
  }
  void check_now() noexcept { forced_ = true; }

private:
  std::string path_;
  std::chrono::milliseconds interval_;
  clock_type::time_point last_check_{};
  std::filesystem::file_time_type mtime_{};
  bool forced_ = false;
};

// What an exec plugin with provideClusterInfo is told about the cluster.
exec_cluster_info exec_cluster_of(const connection_config& config) {
  exec_cluster_info info;
  info.server = config.server;
  info.tls_server_name = config.tls_server_name;
  info.insecure_skip_tls_verify = config.insecure_skip_tls_verify;
  info.certificate_authority_data = config.ca_data;
  if (info.certificate_authority_data.empty() && !config.ca_file.empty()) {
    std::ifstream in(config.ca_file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    info.certificate_authority_data = text.str();
  }
  return info;
}

} // namespace

struct api_client::impl {
  impl(connection_config config_in, server_endpoint endpoint_in, client_options options_in)
      : config(std::move(config_in)), endpoint(std::move(endpoint_in)),
        options(std::move(options_in)),
        tokens(config.token, config.token_file, options.token_recheck_interval),
        ca_file_watch(config.ca_data.empty() ? config.ca_file : std::string(),
                      options.token_recheck_interval),
        work(asio::make_work_guard(ioc)), liveness(std::make_shared<client_liveness>()) {
    liveness->ioc = &ioc;
    if (config.exec)
      exec_credentials.emplace(*config.exec, exec_cluster_of(config));
  }

  const connection_config config;
  const server_endpoint endpoint;
  const client_options options;
  token_source tokens;
  // With a kubeconfig `exec` user: the plugin's credential, which replaces token and file.
  std::optional<exec_credential_cache> exec_credentials;
  exec_credential exec_current;
  // A CA file given as a file (not as data) is reloaded when it changes: CAs rotate.
  file_change_watch ca_file_watch;
  // Set when requests go through an HTTP proxy (a CONNECT tunnel to the server).
  std::optional<proxy_endpoint> proxy;
  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  std::optional<ssl::context> tls_context;
  std::shared_ptr<client_liveness> liveness;
  std::thread thread;
  // Decodes list bodies while the I/O thread receives them; runs each list's callback.
  decode_worker decoder_thread;
  std::atomic<std::uint64_t> next_id{1};

  // Everything below is touched on the I/O thread only.
  bool stopping = false;
  std::unordered_map<std::uint64_t, std::weak_ptr<operation>> active;
  std::vector<std::shared_ptr<connection>> idle;
  // The most recently used idle connection still open, or null; closed ones are dropped.
  std::shared_ptr<connection> take_idle() {
    while (!idle.empty()) {
      auto conn = std::move(idle.back());
      idle.pop_back();
      if (conn->open_and_quiet())
        return conn;
    }
    return nullptr;
  }

  status_result configure_tls();
  // Runs the exec plugin when its credential is missing or expired (on this I/O thread: it
  // blocks the client's other requests while it runs, as it does only every token lifetime).
  // A new client certificate from it replaces the TLS context and drops idle connections.
  status_result refresh_exec_credential();
  // After a 401: the exec credential or the token file is read again; true when a retry may
  // succeed.
  bool renew_credentials() {
    if (!exec_credentials)
      return tokens.refresh();
    exec_credentials->invalidate();
    return true;
  }
  std::string host_header() const;
  std::string verify_name() const {
    return config.tls_server_name.empty() ? endpoint.host : config.tls_server_name;
  }
  bhttp::request<bhttp::string_body> make_request(const outgoing_request& out);
  error failure(const error_code& ec, operation& op, connection* conn, std::string_view what);
  void stop_all();
  // Reports a finished request to options.on_request.
  void observe(api_verb verb, clock_type::time_point started, int http_status) const {
    if (options.on_request)
      options.on_request(request_record{verb, http_status, clock_type::now() - started});
  }

  // Registers a running operation so shutdown can abort it; one that starts after shutdown
  // began is aborted at once.
  void track(const std::shared_ptr<operation>& op) {
    active[op->id] = op;
    if (stopping)
      op->abort();
  }
  void untrack(const operation& op) { active.erase(op.id); }

  awaitable<result<std::shared_ptr<connection>>> open_connection(operation& op);
  awaitable<result<raw_response>> exchange_once(operation& op, const outgoing_request& out,
                                                const body_sink& sink);
  awaitable<std::optional<error>> read_body(operation& op, connection& conn,
                                            bhttp::response_parser<bhttp::buffer_body>& parser,
                                            raw_response& response, const body_sink& sink,
                                            exchange_deadline& deadline,
                                            const outgoing_request& out);
  awaitable<result<raw_response>> exchange(operation& op, const outgoing_request& out,
                                           const body_sink& sink = {});
  awaitable<void> run_list(std::shared_ptr<operation> op, list_request request,
                           list_callback callback);
  awaitable<void> run_get(std::shared_ptr<operation> op, outgoing_request out,
                          get_callback callback);
  void post_exchange(outgoing_request out, get_callback callback);
  awaitable<void> run_watch(std::shared_ptr<watch_session> session);
  awaitable<std::optional<watch_closed_info>>
  stream_events(const std::shared_ptr<watch_session>& session, connection& conn,
                bhttp::response_parser<bhttp::buffer_body>& parser);
  void close_watch(watch_session& s, watch_closed_info closed);
};

status_result api_client::impl::configure_tls() {
  tls_context.emplace(ssl::context::tls_client);
  tls_client_settings settings;
  settings.insecure_skip_verify = config.insecure_skip_tls_verify;
  settings.ca_data = config.ca_data;
  settings.ca_file = config.ca_file;
  settings.client_cert_data = config.client_cert_data;
  settings.client_cert_file = config.client_cert_file;
  settings.client_key_data = config.client_key_data;
  settings.client_key_file = config.client_key_file;
  if (!exec_current.client_certificate_data.empty()) {
    settings.client_cert_data = exec_current.client_certificate_data;
    settings.client_cert_file.clear();
    settings.client_key_data = exec_current.client_key_data;
    settings.client_key_file.clear();
  }
  return configure_tls_client(*tls_context, settings);
}

status_result api_client::impl::refresh_exec_credential() {
  if (!exec_credentials)
    return ok_v;
  bool changed = false;
  auto credential = exec_credentials->current(changed);
  if (!credential)
    return std::move(credential).err();
  const bool new_certificate =
      credential->client_certificate_data != exec_current.client_certificate_data ||
      credential->client_key_data != exec_current.client_key_data;
  exec_current = std::move(*credential);
  if (new_certificate && endpoint.tls) {
    // Connections made with the old certificate keep their own reference to the old context.
    if (auto tls = configure_tls(); !tls)
      return tls;
    idle.clear();
  }
  return ok_v;
}

std::string api_client::impl::host_header() const {
  const bool ipv6 = endpoint.host.find(':') != std::string::npos;
  return (ipv6 ? "[" + endpoint.host + "]" : endpoint.host) + ":" + endpoint.port;
}

bhttp::request<bhttp::string_body> api_client::impl::make_request(const outgoing_request& out) {
  bhttp::request<bhttp::string_body> request{method_of(out.verb), endpoint.base_path + out.target,
                                             11};
  request.set(bhttp::field::host, host_header());
  request.set(bhttp::field::user_agent, options.user_agent);
  request.set(bhttp::field::accept, out.accept);
  if (request.method() != bhttp::verb::get) {
    if (!out.body.empty())
      request.set(bhttp::field::content_type,
                  out.content_type.empty() ? std::string("application/json") : out.content_type);
    request.body() = out.body;
    request.prepare_payload();
  }
  const std::string& token = exec_credentials ? exec_current.token : tokens.current();
  if (!token.empty())
    request.set(bhttp::field::authorization, "Bearer " + token);
  request.keep_alive(true);
  return request;
}

namespace {

transport_failure transport_of(const error_code& ec) {
  if (ec == asio::error::connection_refused)
    return transport_failure::refused;
  if (ec == asio::error::connection_reset || ec == asio::error::eof ||
      ec == asio::error::broken_pipe || ec == asio::error::connection_aborted ||
      ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
      ec == ssl::error::stream_truncated)
    return transport_failure::reset;
  return transport_failure::none;
}

} // namespace

error api_client::impl::failure(const error_code& ec, operation& op, connection* conn,
                                std::string_view what) {
  op.transport = transport_of(ec);
  if (op.aborted || stopping)
    return make_error(errc::cancelled, "request cancelled");
  if (ec == beast::error::timeout)
    return make_error(errc::timeout, std::string(what) + " timed out");
  if (is_tls_error(ec))
    return make_error(errc::tls, conn ? conn->describe_tls_failure(ec) : ec.message());
  return make_error(errc::io, std::string(what) + ": " + ec.message());
}

void api_client::impl::stop_all() {
  stopping = true;
  // Copy first: aborted operations complete and untrack themselves.
  std::vector<std::shared_ptr<operation>> running;
  for (auto& [id, weak] : active)
    if (auto op = weak.lock())
      running.push_back(std::move(op));
  for (auto& op : running)
    op->abort();
  idle.clear();
}

awaitable<result<std::shared_ptr<connection>>> api_client::impl::open_connection(operation& op) {
  if (op.aborted)
    co_return make_error(errc::cancelled, "request cancelled");
  const auto deadline = clock_type::now() + options.connect_timeout;
  tcp::resolver resolver(ioc);
  const std::string& dial_host = proxy ? proxy->host : endpoint.host;
  auto [rec, endpoints] =
      co_await resolver.async_resolve(dial_host, proxy ? proxy->port : endpoint.port, nothrow);
  if (rec)
    co_return failure(rec, op, nullptr, "resolving " + dial_host);
  if (op.aborted)
    co_return make_error(errc::cancelled, "request cancelled");
  if (tls_context && ca_file_watch.changed()) {
    // A rotated CA: new connections trust the new bundle; kept-alive ones are let go.
    if (auto reloaded = configure_tls(); !reloaded)
      co_return std::move(reloaded).err();
    idle.clear();
  }
  auto conn = std::make_shared<connection>(ioc, tls_context ? &*tls_context : nullptr);
  op.conn = conn;
  // Named, not temporaries of a conditional inside the co_await: g++ 12 frees those twice.
  std::string tunnel_to, proxy_authorization;
  if (proxy) {
    tunnel_to = host_header();
    proxy_authorization = proxy->authorization;
  }
  const std::string name = verify_name();
  const error_code ec = co_await conn->connect(endpoints, name, !config.insecure_skip_tls_verify,
                                               deadline, tunnel_to, proxy_authorization);
  if (ec) {
    if (is_tls_error(ec))
      ca_file_watch.check_now(); // the server may present a certificate of a new CA already
    if (!conn->proxy_refusal().empty())
      co_return make_error(errc::io, "proxy " + proxy->host + ":" + proxy->port +
                                         " refused the tunnel to " + host_header() + ": " +
                                         conn->proxy_refusal());
    co_return failure(ec, op, conn.get(),
                      "connecting to " + host_header() +
                          (proxy ? " through proxy " + proxy->host + ":" + proxy->port : ""));
  }
  if (op.aborted)
    co_return make_error(errc::cancelled, "request cancelled");
  co_return conn;
}

awaitable<result<raw_response>>
api_client::impl::exchange_once(operation& op, const outgoing_request& out, const body_sink& sink) {
  const auto what = [&out] { return describe(out); };
  if (auto credentials = refresh_exec_credential(); !credentials)
    co_return std::move(credentials).err();
  // A kept-alive connection may have been closed by the server meanwhile: when a reused one
  // fails before the response header, the request is sent again on a fresh connection.
  for (int attempt = 0;; ++attempt) {
    std::shared_ptr<connection> conn = attempt == 0 ? take_idle() : nullptr;
    const bool reused = conn != nullptr;
    if (reused) {
      op.conn = conn;
    } else {
      auto opened = co_await open_connection(op);
      if (!opened)
        co_return std::move(opened).err();
      conn = std::move(*opened);
    }
    const auto deadline = clock_type::now() + options.request_timeout;
    auto request = make_request(out);
    bhttp::response_parser<bhttp::buffer_body> parser;
    parser.body_limit(boost::none); // max_body_bytes is enforced below
    error_code ec = co_await conn->write(request, deadline);
    // A write refused by a closed connection never reached the server; once written, only an
    // idempotent request may go out again.
    const bool sent = !ec;
    if (!ec)
      ec = co_await conn->read_header(parser, deadline);
    if (ec) {
      if (reused && !op.aborted && !stopping && ec != beast::error::timeout &&
          (!sent || idempotent(out.verb)))
        continue;
      co_return failure(ec, op, conn.get(), what());
    }
    raw_response response;
    const auto& header = parser.get();
    response.status_code = static_cast<int>(header.result_int());
    response.content_type = std::string(header[bhttp::field::content_type]);
    response.retry_after_seconds = retry_after_header(header[bhttp::field::retry_after]);
    asio::steady_timer timer(ioc);
    auto guard = arm_deadline(timer, deadline, conn);
    if (auto failed = co_await read_body(op, *conn, parser, response, sink, *guard, out)) {
      guard->finished = true;
      co_return std::move(*failed);
    }
    guard->finished = true;
    timer.cancel();
    op.conn.reset();
    if (parser.keep_alive() && !stopping && idle.size() < options.max_idle_connections)
      idle.push_back(std::move(conn));
    co_return response;
  }
}

// Reads the body after the header into `response.body`, or hands each piece of a 2xx body to
// `sink`: nothing once it is read, else why not (the connection is closed when part is unread).
awaitable<std::optional<error>>
api_client::impl::read_body(operation& op, connection& conn,
                            bhttp::response_parser<bhttp::buffer_body>& parser,
                            raw_response& response, const body_sink& sink,
                            exchange_deadline& deadline, const outgoing_request& out) {
  const bool streamed = sink && response.status_code / 100 == 2;
  // Read buffers come and go with the exchange: a connection kept alive holds none.
  std::unique_ptr<char[]> chunk;
  while (!parser.is_done()) {
    if (!chunk) { // the first read, or the sink took the last buffer
      chunk.reset(new char[stream_read_bytes]);
      // A list or watch fills buffer after buffer; a short answer would map in pages it never
      // writes.
      if (streamed)
        prefault_for_write(chunk.get(), stream_read_bytes);
    }
    auto [rec, n] = co_await conn.read_body_into(parser, chunk.get(), stream_read_bytes);
    if (rec == asio::error::eof && parser.is_done())
      rec = {};
    if (rec || (n == 0 && !parser.is_done())) {
      deadline.finished = true;
      if (deadline.expired)
        co_return make_error(errc::timeout, describe(out) + " timed out");
      if (!rec)
        rec = asio::error::eof;
      co_return failure(rec, op, &conn, "reading the response to " + describe(out));
    }
    if (streamed) {
      if (auto taken = sink(body_piece{chunk, n}); !taken) {
        conn.close(); // the rest of the body is unread: the connection cannot be reused
        co_return std::move(taken).err();
      }
      continue;
    }
    if (response.body.size() + n > options.max_body_bytes) {
      conn.close();
      co_return make_error(errc::too_large, "the response to " + describe(out) +
                                                " is larger than " +
                                                std::to_string(options.max_body_bytes) + " bytes");
    }
    response.body.append(chunk.get(), n);
  }
  co_return std::nullopt;
}

awaitable<result<raw_response>>
api_client::impl::exchange(operation& op, const outgoing_request& out, const body_sink& sink) {
  auto started = clock_type::now();
  auto response = co_await exchange_once(op, out, sink);
  observe(out.verb, started, response ? response->status_code : 0);
  // A rotated token shows up as a 401: re-read it (or run the exec plugin again) and try once
  // more if that may help.
  if (response && response->status_code == 401 && renew_credentials() && !op.aborted) {
    started = clock_type::now();
    response = co_await exchange_once(op, out, sink);
    observe(out.verb, started, response ? response->status_code : 0);
  }
  co_return response;
}

namespace {

// One list response's decoding, done on the decode thread in the order its bytes came.
struct list_decoding {
  list_decoding(const list_request& request, std::size_t max_item_bytes)
      : decoder(decode_options{request.transform, request.expect, request.held.get(),
                               request.packer.get()},
                max_item_bytes),
        held(request.held), packer(request.packer), on_items(request.on_items),
        on_items_batch(std::max<std::size_t>(request.on_items_batch, 1)),
        on_continue(request.on_continue), into_fresh_memory(request.into_fresh_memory) {}

  list_decoder decoder;
  std::shared_ptr<const held_objects_slot> held; // the decoder's, kept alive with it
  std::shared_ptr<object_packer> packer;         // likewise
  std::vector<object_ptr> items;
  std::function<void(std::vector<object_ptr>&&)> on_items;
  std::size_t on_items_batch;
  std::function<void(const std::string&)> on_continue; // null once called
  bool into_fresh_memory;
  // Set by the decode thread; the I/O thread reads `failed` to stop receiving. `failure` is read
  // only on the decode thread (by the list's last job).
  std::atomic<bool> failed{false};
  std::optional<error> failure;

  void feed(std::string_view bytes) {
    if (failed)
      return;
    const bulk_allocation_scope objects_in_bulk(into_fresh_memory);
    if (auto fed = decoder.feed(bytes, items); !fed) {
      failure = std::move(fed).err();
      failed = true;
      return;
    }
    if (on_continue && decoder.items_begun()) {
      if (!decoder.continue_before_items().empty())
        on_continue(decoder.continue_before_items());
      on_continue = nullptr;
    }
    if (on_items && items.size() >= on_items_batch && decoder.types_known())
      on_items(std::exchange(items, {})); // the batch itself, not a copy of it
  }
};

// Bytes of list bodies received and not yet decoded before the I/O thread waits: a list the
// decode thread cannot keep up with is never held whole.
constexpr std::size_t max_undecoded_list_bytes = std::size_t{8} << 20;

} // namespace

awaitable<void> api_client::impl::run_list(std::shared_ptr<operation> op, list_request request,
                                           list_callback callback) {
  track(op);
  // Items are decoded as the body arrives, on the decode thread (decode_worker.hpp); the body
  // itself is never held. Only a 2xx body reaches the sink, so a 401 retried with renewed
  // credentials never feeds this decoding.
  std::shared_ptr<list_decoding> decoding;
  std::string head; // the body's first bytes: a Status in a 2xx body is read from them
  constexpr std::size_t head_bytes = 64 * 1024;
  body_sink sink = [&](body_piece piece) -> status_result {
    if (!decoding) {
      // A list's limit is on each item, not on the body, which is never held.
      decoding = std::make_shared<list_decoding>(request, options.max_body_bytes);
      head.clear();
    }
    if (decoding->failed) // the decode thread's error is what the callback reports
      return make_error(errc::invalid_json, "the list body could not be decoded");
    const std::string_view bytes = piece.bytes();
    if (head.size() < head_bytes)
      head.append(bytes.substr(0, head_bytes - head.size()));
    // A large read's buffer itself goes to the decode thread; a short read is copied, so that a
    // queued job never holds a whole buffer for a few bytes. A job counts what it holds.
    std::shared_ptr<char[]> held;
    std::size_t held_bytes = stream_read_bytes;
    if (bytes.size() >= stream_read_bytes / 4) {
      held.reset(piece.buffer.release());
    } else {
      held.reset(new char[bytes.size()]);
      std::memcpy(held.get(), bytes.data(), bytes.size());
      held_bytes = bytes.size();
    }
    decoder_thread.post(
        [decoding, held, size = bytes.size()] {
          decoding->feed({held.get(), size});
        },
        held_bytes);
    decoder_thread.wait_until_at_most(max_undecoded_list_bytes);
    return ok_v;
  };
  outgoing_request out;
  out.verb = api_verb::list;
  out.target = build_list_target(request);
  out.accept = request.metadata_only ? accept_metadata_list : accept_json;
  auto response = co_await exchange(*op, out, sink);
  untrack(*op);
  if (!decoding) { // nothing was decoded, so nothing is on the decode thread to wait for
    if (!response) {
      response_info info;
      info.transport = op->transport;
      callback(std::move(response).err(), info);
    } else if (response->status_code / 100 != 2) {
      auto [err, info] = describe_failure(*response);
      callback(std::move(err), info);
    } else { // a 2xx with an empty body
      list_decoder empty(decode_options{request.transform, request.expect});
      std::vector<object_ptr> none;
      response_info info;
      info.http_status = response->status_code;
      callback(empty.finish(none), info);
    }
    co_return;
  }
  // After the body's last bytes are decoded (and their items handed on), on the same thread.
  response_info info;
  info.transport = op->transport;
  info.http_status = response ? response->status_code : 200; // a body came: the answer was 2xx
  std::optional<error> transfer_failure;
  if (!response)
    transfer_failure = std::move(response).err();
  decoder_thread.post([decoding, info, transfer_failure = std::move(transfer_failure),
                       head = std::move(head), callback = std::move(callback)]() mutable {
    if (decoding->failed) {
      if (decoding->failure->code == errc::status)
        info.server_status = decode_status(head); // a Status in a 2xx body
      callback(std::move(*decoding->failure), info);
      return;
    }
    if (transfer_failure) { // the body broke off: what was decoded of it stays with the items
      info.http_status = 0;
      callback(std::move(*transfer_failure), info);
      return;
    }
    auto page = decoding->decoder.finish(decoding->items);
    if (!page && page.err().code == errc::status)
      info.server_status = decode_status(head);
    if (page)
      page->items = std::move(decoding->items);
    callback(std::move(page), info);
  });
}

awaitable<void> api_client::impl::run_get(std::shared_ptr<operation> op, outgoing_request out,
                                          get_callback callback) {
  track(op);
  auto response = co_await exchange(*op, out);
  untrack(*op);
  if (!response) {
    callback(std::move(response).err());
    co_return;
  }
  http_response answer;
  answer.status_code = response->status_code;
  answer.content_type = std::move(response->content_type);
  answer.retry_after_seconds = response->retry_after_seconds;
  answer.body = std::move(response->body);
  callback(std::move(answer));
}

void api_client::impl::close_watch(watch_session& s, watch_closed_info closed) {
  untrack(s);
  s.idle_watchdog.cancel(); // a pending wait would hold up the I/O thread's shutdown
  s.conn.reset();
  closed.events_delivered = s.events_delivered;
  s.control->closed = true;
  if (s.callbacks.on_closed)
    s.callbacks.on_closed(closed);
}

awaitable<std::optional<watch_closed_info>>
api_client::impl::stream_events(const std::shared_ptr<watch_session>& session, connection& conn,
                                bhttp::response_parser<bhttp::buffer_body>& parser) {
  watch_session& s = *session;
  const auto closed = [](watch_close_reason reason, std::string message) {
    return std::optional<watch_closed_info>(watch_closed_info{reason, std::move(message), {}, 0});
  };
  // Body bytes go straight into `lines`; each complete line is decoded in place from there.
  line_buffer lines(s.request.max_line_bytes);
  const decode_options decode{s.request.transform, s.request.expect, nullptr,
                              s.request.packer.get()};
  const bool idle_checked = s.request.idle_timeout.count() > 0;
  s.last_progress = clock_type::now();
  s.reading = true;
  if (idle_checked)
    watch_session::watch_idle(session);
  std::vector<watch_event> batch; // for on_events: what one read brought
  // Hands on the batch; events decoded before a failure still arrive before the close.
  const auto flush = [&] {
    if (!batch.empty() && !s.stopping() && s.callbacks.on_events)
      s.callbacks.on_events(std::move(batch));
    batch.clear();
  };
  for (;;) {
    // Deliver the complete lines already received, one credit per event.
    while (s.credit > 0) {
      if (s.stopping())
        co_return std::nullopt;
      auto line = lines.next_line();
      if (!line) {
        flush();
        co_return closed(watch_close_reason::line_too_large, line.err().describe());
      }
      if (!*line)
        break;
      if ((*line)->empty())
        continue;
      auto event = decode_watch_event(**line, decode);
      if (!event) {
        flush();
        co_return closed(watch_close_reason::decode_error, event.err().describe());
      }
      if (s.credit != unlimited_credit)
        --s.credit;
      ++s.events_delivered;
      if (s.callbacks.on_events)
        batch.push_back(std::move(*event));
      else if (s.callbacks.on_event)
        s.callbacks.on_event(std::move(*event));
    }
    flush();
    if (s.stopping())
      co_return std::nullopt;
    if (s.credit == 0) {
      // Out of credit: stop reading (TCP pushes back on the server) until add_credit wakes us.
      s.reading = false;
      s.wake.expires_at(clock_type::time_point::max());
      co_await s.wake.async_wait(nothrow);
      s.reading = true;
      s.last_progress = clock_type::now();
      continue;
    }
    if (parser.is_done()) {
      if (auto end = lines.finish(); !end)
        co_return closed(watch_close_reason::io_error, end.err().describe());
      co_return closed(watch_close_reason::end_of_stream, "the server ended the watch");
    }
    auto room = lines.prepare(min_line_room);
    auto [ec, n] = co_await conn.read_body_into(parser, room.data(), room.size());
    if (s.stopping())
      co_return std::nullopt;
    if (s.idle_expired)
      co_return closed(watch_close_reason::idle_timeout,
                       "no data for " + std::to_string(s.request.idle_timeout.count()) + " ms");
    if (ec) {
      if (is_tls_error(ec) && ec != ssl::error::stream_truncated)
        co_return closed(watch_close_reason::tls_error, conn.describe_tls_failure(ec));
      co_return closed(watch_close_reason::io_error, "connection lost mid-stream: " + ec.message());
    }
    lines.commit(n);
    s.last_progress = clock_type::now();
    s.touch(n);
  }
}

awaitable<void> api_client::impl::run_watch(std::shared_ptr<watch_session> s) {
  track(s);
  const auto started = clock_type::now();
  const auto cancelled = [] {
    return watch_closed_info{watch_close_reason::cancelled, "watch cancelled", {}, 0};
  };
  if (s->stopping()) {
    observe(api_verb::watch, started, 0);
    close_watch(*s, cancelled());
    co_return;
  }
  const auto& r = s->request;
  const std::string target = build_watch_target(r);

  if (auto credentials = refresh_exec_credential(); !credentials) {
    observe(api_verb::watch, started, 0);
    close_watch(*s,
                watch_closed_info{
                    close_reason_for(credentials.err().code), credentials.err().describe(), {}, 0});
    co_return;
  }
  auto opened = co_await open_connection(*s);
  if (!opened) {
    observe(api_verb::watch, started, 0);
    const auto& err = opened.err();
    watch_closed_info closed{close_reason_for(err.code), err.describe(), {}, 0};
    closed.response.transport = s->transport;
    close_watch(*s, std::move(closed));
    co_return;
  }
  auto conn = std::move(*opened);
  outgoing_request out;
  out.verb = api_verb::watch;
  out.target = target;
  out.accept = r.metadata_only ? accept_metadata : accept_json;
  auto request = make_request(out);
  request.keep_alive(false); // a watch connection is never reused
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(boost::none); // a watch is unbounded; lines are bounded instead
  const auto header_deadline = clock_type::now() + options.request_timeout;
  error_code ec = co_await conn->write(request, header_deadline);
  if (!ec)
    ec = co_await conn->read_header(parser, header_deadline);
  if (ec) {
    observe(api_verb::watch, started, 0);
    const auto err = failure(ec, *s, conn.get(), "watch " + target);
    watch_closed_info closed{close_reason_for(err.code), err.describe(), {}, 0};
    closed.response.transport = s->transport;
    close_watch(*s, std::move(closed));
    co_return;
  }
  s->control->last_activity = clock_type::now().time_since_epoch().count();

  const int status_code = static_cast<int>(parser.get().result_int());
  observe(api_verb::watch, started, status_code);
  if (status_code != 200) {
    if (status_code == 401)
      renew_credentials(); // the next watch carries a rotated token or a new exec credential
    raw_response response;
    response.status_code = status_code;
    response.retry_after_seconds = retry_after_header(parser.get()[bhttp::field::retry_after]);
    std::vector<char> chunk(64 * 1024);
    while (!parser.is_done() && response.body.size() < max_error_body_bytes) {
      auto [rec, n] =
          co_await conn->read_body_some(parser, chunk.data(), chunk.size(), header_deadline);
      if (rec)
        break; // the status code alone still tells what happened
      response.body.append(chunk.data(), n);
    }
    auto [err, info] = describe_failure(response);
    close_watch(*s, watch_closed_info{s->stopping() ? watch_close_reason::cancelled
                                                    : watch_close_reason::http_error,
                                      err.message, std::move(info), 0});
    co_return;
  }

  auto closed = co_await stream_events(s, *conn, parser);
  close_watch(*s, closed ? std::move(*closed) : cancelled());
}

const char* to_string(watch_close_reason reason) noexcept {
  switch (reason) {
  case watch_close_reason::end_of_stream:
    return "end_of_stream";
  case watch_close_reason::http_error:
    return "http_error";
  case watch_close_reason::io_error:
    return "io_error";
  case watch_close_reason::tls_error:
    return "tls_error";
  case watch_close_reason::timeout:
    return "timeout";
  case watch_close_reason::idle_timeout:
    return "idle_timeout";
  case watch_close_reason::line_too_large:
    return "line_too_large";
  case watch_close_reason::decode_error:
    return "decode_error";
  case watch_close_reason::cancelled:
    return "cancelled";
  }
  return "unknown";
}

const char* to_string(api_verb verb) noexcept {
  switch (verb) {
  case api_verb::list:
    return "list";
  case api_verb::watch:
    return "watch";
  case api_verb::get:
    return "get";
  case api_verb::create:
    return "create";
  case api_verb::update:
    return "update";
  case api_verb::patch:
    return "patch";
  case api_verb::delete_:
    return "delete";
  }
  return "unknown";
}

// --- watch_handle ---

std::uint64_t watch_handle::id() const noexcept {
  return control_ ? control_->id : 0;
}

void watch_handle::cancel() const {
  if (!control_ || control_->closed)
    return;
  control_->cancel_requested = true;
  control_->liveness->post([control = control_] {
    if (auto session = control->session.lock())
      session->abort();
  });
}

void watch_handle::add_credit(std::size_t n) const {
  if (!control_ || control_->closed || n == 0)
    return;
  control_->liveness->post([control = control_, n] {
    if (auto session = control->session.lock())
      session->add_credit(n);
  });
}

std::uint64_t watch_handle::bytes_received() const noexcept {
  return control_ ? control_->bytes_received.load() : 0;
}

clock_type::time_point watch_handle::last_activity() const noexcept {
  return control_ ? clock_type::time_point(clock_type::duration(control_->last_activity.load()))
                  : clock_type::time_point{};
}

bool watch_handle::closed() const noexcept {
  return !control_ || control_->closed;
}

// --- api_client ---

result<std::unique_ptr<api_client>> api_client::create(const connection_config& config,
                                                       const client_options& options) {
  auto endpoint = parse_server_url(config.server);
  if (!endpoint)
    return std::move(endpoint).err();
  auto state = std::make_unique<impl>(config, std::move(*endpoint), options);
  const std::string proxy_url =
      !config.proxy_url.empty()
          ? config.proxy_url
          : proxy_url_from_environment(state->endpoint.tls, state->endpoint.host,
                                       state->endpoint.port);
  if (!proxy_url.empty()) {
    auto proxy = parse_proxy_url(proxy_url);
    if (!proxy)
      return std::move(proxy).err();
    state->proxy = std::move(*proxy);
  }
  if (state->endpoint.tls) {
    if (auto tls = state->configure_tls(); !tls)
      return std::move(tls).err();
  }
  state->thread = std::thread([ioc = &state->ioc] {
    pthread_setname_np(pthread_self(), "kinformer-http"); // tells it apart in top -H and perf
    ioc->run();
  });
  return std::unique_ptr<api_client>(new api_client(std::move(state)));
}

api_client::api_client(std::unique_ptr<impl> state) : impl_(std::move(state)) {}

api_client::~api_client() {
  {
    std::lock_guard lock(impl_->liveness->mutex);
    impl_->liveness->ioc = nullptr; // handles stop posting
  }
  asio::post(impl_->ioc, [state = impl_.get()] { state->stop_all(); });
  impl_->work.reset();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

std::string api_client::list_target(const list_request& request) const {
  return impl_->endpoint.base_path + build_list_target(request);
}

std::string api_client::watch_target(const watch_request& request) const {
  return impl_->endpoint.base_path + build_watch_target(request);
}

void api_client::list(const list_request& request, list_callback callback) {
  asio::post(impl_->ioc, [state = impl_.get(), request, callback = std::move(callback)] {
    if (state->stopping) {
      callback(make_error(errc::cancelled, "client shutting down"), response_info{});
      return;
    }
    auto op = std::make_shared<operation>(state->ioc);
    op->id = state->next_id++;
    asio::co_spawn(state->ioc, state->run_list(op, request, callback), asio::detached);
  });
}

// Runs one get or write on the client's I/O thread.
void api_client::impl::post_exchange(outgoing_request out, get_callback callback) {
  asio::post(ioc, [state = this, out = std::move(out), callback = std::move(callback)]() mutable {
    if (state->stopping) {
      callback(make_error(errc::cancelled, "client shutting down"));
      return;
    }
    auto op = std::make_shared<operation>(state->ioc);
    op->id = state->next_id++;
    asio::co_spawn(state->ioc, state->run_get(op, std::move(out), std::move(callback)),
                   asio::detached);
  });
}

void api_client::get(const std::string& path, const std::string& accept, get_callback callback) {
  outgoing_request out;
  out.verb = api_verb::get;
  out.target = path;
  out.accept = accept;
  impl_->post_exchange(std::move(out), std::move(callback));
}

void api_client::write(const write_request& request, get_callback callback) {
  outgoing_request out;
  out.verb = request.verb;
  out.target = request.target;
  out.content_type = request.content_type;
  out.body = request.body;
  out.accept = accept_json;
  impl_->post_exchange(std::move(out), std::move(callback));
}

result<http_response> api_client::write_sync(const write_request& request) {
  if (std::this_thread::get_id() == impl_->thread.get_id() || impl_->decoder_thread.is_current())
    return make_error(errc::invalid_argument, "write_sync called on one of the client's threads");
  std::promise<result<http_response>> done;
  auto answer = done.get_future();
  write(request, [&done](result<http_response> response) { done.set_value(std::move(response)); });
  return answer.get();
}

result<std::string> api_client::get_document_sync(const std::string& path) {
  auto response = get_sync(path);
  if (!response)
    return std::move(response).err();
  if (response->status_code != 200)
    return make_error(errc::status,
                      "GET " + path + ": HTTP " + std::to_string(response->status_code));
  return std::move(response->body);
}

result<http_response> api_client::get_sync(const std::string& path, const std::string& accept) {
  if (std::this_thread::get_id() == impl_->thread.get_id() || impl_->decoder_thread.is_current())
    return make_error(errc::invalid_argument, "get_sync called on one of the client's threads");
  std::promise<result<http_response>> done;
  auto answer = done.get_future();
  get(path, accept,
      [&done](result<http_response> response) { done.set_value(std::move(response)); });
  return answer.get();
}

watch_handle api_client::watch(const watch_request& request, watch_callbacks callbacks) {
  auto control = std::make_shared<watch_control>();
  control->id = impl_->next_id++;
  control->liveness = impl_->liveness;
  control->last_activity = clock_type::now().time_since_epoch().count();
  asio::post(impl_->ioc,
             [state = impl_.get(), control, request, callbacks = std::move(callbacks)]() mutable {
               auto session = std::make_shared<watch_session>(state->ioc);
               session->id = control->id;
               session->request = std::move(request);
               session->callbacks = std::move(callbacks);
               session->credit = session->request.initial_credit;
               session->control = control;
               control->session = session;
               asio::co_spawn(state->ioc, state->run_watch(std::move(session)), asio::detached);
             });
  return watch_handle(std::move(control));
}

} // namespace kinformer
