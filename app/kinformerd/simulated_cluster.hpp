#pragma once
// The embedded cluster `kinformerd --simulate` runs against: the simulator, preloaded with pods
// and churning. The service reaches it only through `cluster_simulator`, which main() passes in,
// so the service library does not link the simulator; only the kinformerd program does.

#include "app/kinformerd/config.hpp"
#include "protocol/result.hpp"

#include <functional>
#include <memory>
#include <string>

namespace kinformer::service {

class service_log;

// A running simulated cluster; destroying it stops it.
class simulated_cluster {
public:
  virtual ~simulated_cluster() = default;
  // Where clients reach it: "http://127.0.0.1:PORT".
  virtual std::string url() const = 0;
  // Stops the churn, so that the service's handlers drain a quiet cluster when it stops.
  virtual void stop_churn() = 0;
};

// Starts a simulated cluster with the load `options` asks for (and logs where it listens).
using cluster_simulator = std::function<result<std::unique_ptr<simulated_cluster>>(
    const simulate_options& options, service_log& log)>;

// The simulator (app/kubesim) as a cluster_simulator.
result<std::unique_ptr<simulated_cluster>> start_simulated_cluster(const simulate_options& options,
                                                                   service_log& log);

} // namespace kinformer::service
