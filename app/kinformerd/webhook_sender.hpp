#pragma once
// The webhook handler's HTTP client: POSTs JSON bodies to one URL from its own I/O thread (one
// Asio io_context), so no CAF scheduler thread ever waits on the network. A new connection per
// POST: batches are few and large, and a fresh connection needs no stale-connection handling.
// https:// endpoints are verified against the configured CA (else the system trust store), by
// host name or IP address, and may be sent a client certificate.

#include "protocol/http/tls_settings.hpp"
#include "protocol/result.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kinformer {

struct webhook_endpoint {
  std::string host;
  std::string port;   // "80" (http) or "443" (https) when the URL names none
  std::string target; // path and query, "/" at least
  bool tls = false;   // https://
};

// Accepts http(s)://host[:port][/path][?query], host may be a bracketed IPv6 address.
result<webhook_endpoint> parse_webhook_url(std::string_view url);

struct post_outcome {
  int status = 0;    // the HTTP status; 0 when no response arrived
  std::string error; // why no response arrived (connect, timeout, reset)
  bool ok() const noexcept { return status >= 200 && status < 300; }
  // Worth retrying: no response, a timeout (408), throttling (429) or a server error (5xx).
  bool retryable() const noexcept {
    return status == 0 || status == 408 || status == 429 || status >= 500;
  }
};

class webhook_sender {
public:
  // Called once per post, on the sender's I/O thread: it must not block.
  using completion = std::function<void(post_outcome)>;

  // Fails (errc::tls) when the TLS material of an https:// endpoint cannot be loaded.
  static result<std::unique_ptr<webhook_sender>>
  create(webhook_endpoint endpoint, std::chrono::milliseconds timeout,
         std::vector<std::pair<std::string, std::string>> headers = {},
         tls_client_settings tls = {});
  // Cancels what is in flight (its completion is not called) and joins the I/O thread.
  ~webhook_sender();
  webhook_sender(const webhook_sender&) = delete;
  webhook_sender& operator=(const webhook_sender&) = delete;

  // Starts one POST of `body` (Content-Type: application/json); thread-safe.
  void post(std::string body, completion done);

private:
  struct impl;
  explicit webhook_sender(std::unique_ptr<impl> state);
  std::shared_ptr<impl> impl_; // shared with its I/O thread (see the destructor)
};

} // namespace kinformer
