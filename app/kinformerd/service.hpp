#pragma once
// kinformerd as one object: connects to the cluster (or starts the embedded simulator), runs the
// cache with the configured informers and handlers, and serves /metrics, /healthz, /readyz, the
// read API and remote subscriptions. main() only parses flags and waits for a signal; tests can
// run the same service in a child process.

#include "app/kinformerd/config.hpp"
#include "app/kinformerd/simulated_cluster.hpp"
#include "protocol/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

namespace kinformer::service {

class kinformerd {
public:
  // Log lines go to `log` (stderr in main); deltas of log handlers to stdout. `simulate`
  // starts the cluster of connection_mode::simulate (main passes start_simulated_cluster).
  kinformerd(service_config config, std::ostream& log, cluster_simulator simulate = {});
  ~kinformerd(); // stop()s
  kinformerd(const kinformerd&) = delete;
  kinformerd& operator=(const kinformerd&) = delete;

  // Waits the given time between attempts to reach the API server; true when it was cut short by
  // a request to stop (main: SIGTERM). Unset: sleeps the whole time.
  using retry_wait = std::function<bool(std::chrono::milliseconds)>;

  // Brings everything up and logs where it listens. While the API server cannot be reached (not
  // listening, timing out, 429 or 5xx) it serves /healthz and a /readyz that says why it is not
  // ready, and retries with client-go's backoff until the server answers. Fails (and leaves
  // nothing running) when a kind is unknown, the server refuses kinformerd's credentials, an
  // address cannot be bound, or a stop was asked for while waiting (errc::cancelled).
  status_result start(retry_wait wait = {});
  // Graceful: stops serving, drains handler queues (webhooks flush), stops the informers.
  // Idempotent.
  void stop();

  // Bound addresses, "host:port" ("" when not serving).
  std::string metrics_address() const;
  std::string api_address() const;
  std::uint16_t remote_port() const; // 0 when remote subscriptions are off

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace kinformer::service
