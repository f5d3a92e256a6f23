// The simulator's transport: the storage served through the project's one API-server front end
// (app/apiserver/api_frontend.hpp, with storage_backend.hpp as its backend) and its one HTTP
// server (app/apiserver/http_server.hpp), whose connection faults are the simulator's; the /sim/
// control routes and the health probes beside them. No Beast here.

#include "app/kubesim/simulator.hpp"

#include "app/apiserver/api_frontend.hpp"
#include "app/apiserver/api_status.hpp"
#include "app/apiserver/http_server.hpp"
#include "app/apiserver/request_path.hpp"
#include "app/apiserver/resource_answer.hpp"
#include "app/kubesim/control_routes.hpp"
#include "app/kubesim/self_signed_cert.hpp"
#include "app/kubesim/storage.hpp"
#include "app/kubesim/storage_backend.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <stop_token>
#include <thread>

namespace kinformer::sim {
namespace {

constexpr std::size_t max_request_body = 64ull << 20;

} // namespace

struct simulator::impl {
  explicit impl(simulator_options opts)
      : options(std::move(opts)), store(storage_options{options.history_limit, true}),
        backend(store, options), front(backend) {}

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
    auto target = apiserver::parse_target(request.target);
    if (target) {
      auto kind = apiserver::classify(target->segments).kind;
      if (kind == apiserver::route_kind::control)
        return serve_control(request, *target, exchange);
      if (kind == apiserver::route_kind::health)
        return serve_health(request, exchange);
    }
    front.handle(request, exchange);
  }

  // /sim/...: the handler of the longest registered prefix.
  void serve_control(const apiserver::http_request& request,
                     const apiserver::request_target& target,
                     const std::shared_ptr<apiserver::http_exchange>& exchange) {
    control_handler handler;
    {
      std::lock_guard lock(routes_mutex);
      std::size_t best = 0;
      for (const auto& [prefix, h] : routes) {
        if (target.path.compare(0, prefix.size(), prefix) == 0 && prefix.size() > best) {
          best = prefix.size();
          handler = h;
        }
      }
    }
    if (!handler)
      return exchange->respond(apiserver::failure_response(apiserver::resource_not_found()));
    control_response answer =
        handler(control_request{request.method, target.path, target.query, request.body});
    apiserver::http_response response;
    response.status = answer.status;
    response.content_type = std::move(answer.content_type);
    response.body = std::move(answer.body);
    exchange->respond(std::move(response));
  }

  static void serve_health(const apiserver::http_request& request,
                           const std::shared_ptr<apiserver::http_exchange>& exchange) {
    if (request.method != "GET")
      return exchange->respond(apiserver::failure_response(apiserver::method_not_allowed()));
    apiserver::http_response ok;
    ok.content_type = "text/plain; charset=utf-8";
    ok.body = "ok";
    exchange->respond(std::move(ok));
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
  storage_backend backend;
  apiserver::api_frontend front;
  std::mutex routes_mutex;
  std::map<std::string, control_handler> routes; // guarded by routes_mutex
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
  return impl_->backend.live_watches();
}

bool simulator::wait_for_open_watches(std::size_t count, std::chrono::milliseconds timeout) const {
  return impl_->backend.wait_for_live_watches(count, timeout);
}

void simulator::add_control_route(std::string prefix, control_handler handler) {
  std::lock_guard lock(impl_->routes_mutex);
  impl_->routes[std::move(prefix)] = std::move(handler);
}

} // namespace kinformer::sim
