// The simulator's transport: the storage and its REST half (rest_handler) served through the
// project's one HTTP server (app/apiserver/http_server.hpp), whose connection faults are the
// simulator's. No Beast here.
//
// A request becomes an api_request for the REST half; its reply goes back as a plain response, a
// list gathered from the stored JSON strings (nothing copied), or a watch: the storage's writer
// thread queues each event's shared line on the HTTP stream, which writes it from where it is.

#include "app/kubesim/simulator.hpp"

#include "app/apiserver/api_status.hpp"
#include "app/apiserver/http_server.hpp"
#include "app/apiserver/watch_event.hpp"
#include "app/kubesim/control_routes.hpp"
#include "app/kubesim/rest_handler.hpp"
#include "app/kubesim/self_signed_cert.hpp"
#include "app/kubesim/storage.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <stop_token>
#include <thread>

namespace kinformer::sim {
namespace {

constexpr std::size_t max_request_body = 64ull << 20;

// What a watch's stream and the storage's writer share while storage::watch() replays: the lines
// wait here until the stream is opened (only a watch that starts gets its 200), then go straight
// to the stream, in order.
struct watch_pipe {
  std::mutex mutex;
  std::shared_ptr<apiserver::http_stream> stream;
  std::vector<std::shared_ptr<const std::string>> waiting;

  void deliver(const watch_message& message) {
    std::lock_guard lock(mutex);
    if (stream)
      stream->write(message.line);
    else
      waiting.push_back(message.line);
  }
  void open(std::shared_ptr<apiserver::http_stream> opened) {
    std::lock_guard lock(mutex);
    for (auto& line : waiting)
      opened->write(std::move(line));
    waiting.clear();
    stream = std::move(opened);
  }
};

apiserver::http_response plain_response(simple_reply r) {
  apiserver::http_response response;
  response.status = static_cast<int>(r.code);
  response.content_type = std::move(r.content_type);
  response.body = std::move(r.body);
  for (auto& h : r.headers)
    response.headers.emplace_back(std::move(h.name), std::move(h.value));
  return response;
}

// head, then the items joined by commas, then tail: pieces of the shared strings, never copied.
apiserver::http_response list_response(list_reply r) {
  auto owned = std::make_shared<list_reply>(std::move(r));
  static const std::string comma = ",";
  apiserver::http_response response;
  response.body_pieces.reserve(owned->items.size() * 2 + 2);
  response.body_pieces.emplace_back(owned->head);
  for (std::size_t i = 0; i < owned->items.size(); ++i) {
    if (i > 0)
      response.body_pieces.emplace_back(comma);
    response.body_pieces.emplace_back(*owned->items[i]);
  }
  response.body_pieces.emplace_back(owned->tail);
  response.pieces_owner = std::move(owned);
  return response;
}

} // namespace

struct simulator::impl {
  explicit impl(simulator_options opts)
      : options(std::move(opts)), store(storage_options{options.history_limit, true}),
        rest(store, options) {}

  apiserver::http_server_options server_options() const {
    apiserver::http_server_options o;
    o.listen = options.listen;
    o.io_threads = options.io_threads;
    // Named so that per-thread CPU (top -H, the benchmarks) tells the server from its clients.
    o.thread_name = "kubesim-io";
    o.server_name = "kubesim";
    o.max_request_body = max_request_body;
    // A watcher falls behind by lines (watch_queue_limit), as the watch cache counts them.
    o.stream_buffer_limit = std::numeric_limits<std::size_t>::max();
    o.tls_client_ca_pem = options.client_ca_pem;
    return o;
  }

  void serve(const apiserver::http_request& request,
             const std::shared_ptr<apiserver::http_exchange>& exchange) {
    api_request api{request.method,
                    request.target,
                    request.header("accept").value_or(""),
                    request.header("content-type").value_or(""),
                    request.header("authorization").value_or(""),
                    request.client_certificate,
                    request.body};
    auto reply = rest.handle(api);
    std::visit([&](auto& r) { answer(std::move(r), exchange); }, reply);
  }

  void answer(simple_reply r, const std::shared_ptr<apiserver::http_exchange>& exchange) {
    exchange->respond(plain_response(std::move(r)));
  }
  void answer(list_reply r, const std::shared_ptr<apiserver::http_exchange>& exchange) {
    exchange->respond(list_response(std::move(r)));
  }
  void answer(watch_reply w, const std::shared_ptr<apiserver::http_exchange>& exchange) {
    auto pipe = std::make_shared<watch_pipe>();
    auto handle =
        store.watch(w.request, [pipe](const watch_message& message) { pipe->deliver(message); });
    if (!handle) {
      const status& failure = handle.failure();
      if (failure.code != 410)
        return exchange->respond(plain_response(status_reply(failure)));
      // Too old: 200, then the ERROR event, then the end of the stream (as the real server).
      auto stream = exchange->stream(200, "application/json");
      stream->write(
          apiserver::watch_event_line(event_type::error, apiserver::status_json(failure)));
      stream->close();
      return;
    }
    auto stream = exchange->stream(200, "application/json");
    pipe->open(stream);
    // The replay is written whatever its length; from now on a watcher that falls behind ends.
    stream->limit_queue(options.watch_queue_limit);
    stream->close_after(w.timeout);
    auto watch = std::make_shared<watch_handle>(std::move(handle).value());
    stream->on_end([watch](apiserver::stream_end) { watch->stop(); });
  }

  // BOOKMARKs to the watches that asked, every bookmark_interval, until stopped.
  void send_bookmarks_until(std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any wake;
    std::unique_lock lock(mutex);
    // The predicate never holds: each wait ends by its timeout, or early when stop is requested.
    while (!wake.wait_for(lock, stop, options.bookmark_interval, [] { return false; }) &&
           !stop.stop_requested())
      store.send_bookmarks();
  }

  simulator_options options;
  storage store;
  rest_handler rest;
  mutable std::mutex tls_mutex;
  std::string ca_pem;                      // guarded by tls_mutex
  std::atomic<std::int64_t> latency_ms{0}; // set_latency() before start()
  // Made by start(), with its certificate. Declared last: it stops (and its sessions end) while
  // the storage it serves still exists.
  std::unique_ptr<apiserver::http_server> server;
  std::jthread bookmarks;
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
  if (s.server)
    return ok_v;
  auto options = s.server_options();
  if (s.options.tls) {
    auto material = make_self_signed_tls();
    if (!material)
      return std::move(material).err();
    options.tls_certificate_pem = material->server_cert_pem;
    options.tls_key_pem = material->server_key_pem;
    std::lock_guard lock(s.tls_mutex);
    s.ca_pem = material->ca_cert_pem;
  }
  auto server = std::make_unique<apiserver::http_server>(std::move(options));
  server->add_route("/", [&s](const apiserver::http_request& request,
                              std::shared_ptr<apiserver::http_exchange> exchange) {
    s.serve(request, exchange);
  });
  server->set_latency(std::chrono::milliseconds(s.latency_ms.load()));
  auto started = server->start();
  if (!started)
    return started;
  s.rest.set_server_address(server->local_endpoint());
  s.server = std::move(server);
  s.bookmarks = std::jthread([&s](std::stop_token stop) { s.send_bookmarks_until(stop); });
  return ok_v;
}

void simulator::stop() {
  auto& s = *impl_;
  if (!s.server)
    return;
  s.bookmarks = {}; // requests the stop and joins
  s.server->stop();
}

std::uint16_t simulator::port() const {
  return impl_->server ? impl_->server->port() : 0;
}

std::string simulator::url() const {
  return std::string(impl_->options.tls ? "https://" : "http://") +
         (impl_->server ? impl_->server->local_endpoint() : std::string());
}

std::string simulator::ca_pem() const {
  std::lock_guard lock(impl_->tls_mutex);
  return impl_->ca_pem;
}

result<std::string> simulator::rotate_tls() {
  auto& s = *impl_;
  if (!s.options.tls || !s.server)
    return make_error(errc::invalid_argument, "the simulator serves plain HTTP: nothing to rotate");
  auto material = make_self_signed_tls();
  if (!material)
    return std::move(material).err();
  // One lock over both: whoever reads ca_pem() once the rotation began gets the new CA.
  std::lock_guard lock(s.tls_mutex);
  auto replaced =
      s.server->replace_certificate(material->server_cert_pem, material->server_key_pem);
  if (!replaced)
    return std::move(replaced).err();
  s.ca_pem = material->ca_cert_pem;
  return s.ca_pem;
}

const simulator_options& simulator::options() const {
  return impl_->options;
}

storage& simulator::store() {
  return impl_->store;
}

void simulator::drop_watches() {
  if (impl_->server)
    impl_->server->drop_streams();
}

void simulator::stall_watches() {
  if (impl_->server)
    impl_->server->stall_streams();
}

void simulator::resume_watches() {
  if (impl_->server)
    impl_->server->resume_streams();
}

void simulator::set_latency(std::chrono::milliseconds delay) {
  impl_->latency_ms.store(delay.count());
  if (impl_->server)
    impl_->server->set_latency(delay);
}

std::size_t simulator::open_watches() const {
  return impl_->server ? impl_->server->open_streams() : 0;
}

void simulator::add_control_route(std::string prefix, control_handler handler) {
  impl_->rest.add_control_route(std::move(prefix), std::move(handler));
}

} // namespace kinformer::sim
