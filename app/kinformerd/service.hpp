#pragma once
// kinformerd as one object: connects to the cluster (or starts the embedded simulator), runs the
// cache with the configured informers and handlers, and serves /metrics, /healthz, /readyz, the
// read API and remote subscriptions. main() only parses flags and waits for a signal; tests can
// run the same service in a child process.

#include "app/kinformerd/config.hpp"
#include "app/kinformerd/simulated_cluster.hpp"
#include "protocol/result.hpp"

#include <cstdint>
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

  // Brings everything up and logs where it listens. Fails (and leaves nothing running) when the
  // cluster cannot be reached, a kind is unknown, or an address cannot be bound.
  status_result start();
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
