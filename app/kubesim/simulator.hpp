#pragma once
// The Kubernetes API-server simulator: a `storage` behind an HTTP/1.1 (optionally TLS) server that
// speaks the API server's REST dialect (discovery, get/list/watch/create/update/patch/delete,
// Status errors) plus a control interface under /sim/ for fault injection and test tooling.
//
// Beast and Asio stay in the HTTP server (app/apiserver/http_server.cpp).

#include "app/kubesim/access_reviews.hpp"
#include "protocol/result.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace kinformer::sim {

class storage;

struct simulator_options {
  // host:port to listen on; port 0 picks a free one. Only this address is ever bound.
  std::string listen = "127.0.0.1:0";
  // Serve HTTPS with a self-signed CA and a server certificate for 127.0.0.1, ::1 and localhost,
  // generated at start (see ca_pem()).
  bool tls = false;
  // When not empty, every request must carry `Authorization: Bearer <token>` (else 401).
  std::string token;
  // With tls: client certificates signed by this CA (PEM) authenticate a request as the token
  // does (kube-apiserver's --client-ca-file). Clients without a certificate are still served.
  std::string client_ca_pem;
  // How often a watch with allowWatchBookmarks=true gets a BOOKMARK (the real server: ~1 min).
  std::chrono::milliseconds bookmark_interval{60000};
  // Events kept for watch resumption and continue tokens (storage's history window).
  std::size_t history_limit = 100000;
  // Event lines a single watch may have queued and unwritten before it is closed as hopelessly
  // behind (the real server closes slow watchers too).
  std::size_t watch_queue_limit = 100000;
  // Watch duration when the client sends no timeoutSeconds (the real server: 30-60 min).
  std::chrono::seconds default_watch_timeout{1800};
  // Threads running the network I/O.
  std::size_t io_threads = 1;
  // Reported by /version.
  std::string git_version = "v1.29.0-kubesim";
  // TokenReview and SubjectAccessReview answers (access_reviews.hpp): who each token is, and
  // what each user or group may do.
  std::vector<review_user> review_users;
  std::vector<review_grant> review_grants;
};

// A request to a control route, with Beast's types left out.
struct control_request {
  std::string method;                       // "GET", "POST", ...
  std::string path;                         // decoded path, "/sim/churn/start"
  std::map<std::string, std::string> query; // decoded query parameters
  std::string body;
};

struct control_response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using control_handler = std::function<control_response(const control_request&)>;

class simulator {
public:
  explicit simulator(simulator_options options = {});
  // Stops the server if it still runs.
  ~simulator();
  simulator(const simulator&) = delete;
  simulator& operator=(const simulator&) = delete;

  // Binds the listen address and starts serving on the I/O threads. Fails when the address is
  // malformed or taken, or certificate generation fails.
  status_result start();
  // Closes the listener and every connection, then joins the I/O threads. Idempotent.
  void stop();

  // The bound port (valid after start()).
  std::uint16_t port() const;
  // "http://127.0.0.1:PORT", or "https://..." with TLS ("[::1]" for IPv6).
  std::string url() const;
  // The PEM of the CA that signed the server certificate; empty without TLS.
  std::string ca_pem() const;
  // A server restarted with a new CA and certificate: connections opened from now on get the
  // new one, and every open connection is closed (a response being written first goes out).
  // Returns the new CA's PEM. Fails without TLS, or when generating the certificate does.
  result<std::string> rotate_tls();
  const simulator_options& options() const;

  storage& store();

  // Connection-level faults.
  // Closes every open watch connection abruptly (no terminating chunk), as a dying server would.
  void drop_watches();
  // Open watches stop writing but keep their sockets; resume_watches() writes what queued up.
  void stall_watches();
  void resume_watches();
  // Delays every request (API and control alike) by `delay` before it is served.
  void set_latency(std::chrono::milliseconds delay);
  // Watches being served right now, counted once set up: from then on their events queue within
  // watch_queue_limit.
  std::size_t open_watches() const;
  // Waits until open_watches() is `count`; false if `timeout` passed first.
  bool wait_for_open_watches(std::size_t count,
                             std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  // Registers a handler for every request whose path starts with `prefix` (which must start with
  // "/sim/"). Handlers run on an I/O thread: keep them short. Later registrations of the same
  // prefix replace earlier ones; the longest matching prefix wins.
  void add_control_route(std::string prefix, control_handler handler);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace kinformer::sim
