#include "app/kinformerd/simulated_cluster.hpp"

#include "app/kinformerd/service_log.hpp"
#include "app/kubesim/churn.hpp"
#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"

#include <chrono>

namespace kinformer::service {
namespace {

class simulator_cluster final : public simulated_cluster {
public:
  status_result start(const simulate_options& options, service_log& log) {
    sim::simulator_options server;
    server.bookmark_interval = std::chrono::seconds(30);
    simulator_ = std::make_unique<sim::simulator>(server);
    if (auto started = simulator_->start(); !started)
      return started;
    sim::generator_options generation;
    generation.seed = options.seed;
    generation.pod_bytes = options.pod_bytes;
    generation.clock_base = std::chrono::system_clock::now();
    sim::object_generator generator(generation);
    auto loaded = sim::load_pods(simulator_->store(), generator, options.pods, options.namespaces);
    if (!loaded)
      return std::move(loaded).err();
    log.info("simulator_started",
             {{"url", simulator_->url()},
              {"pods", std::to_string(loaded->pods)},
              {"namespaces", std::to_string(options.namespaces)},
              {"churn_per_second", std::to_string(static_cast<long>(options.churn_rate))}});
    if (options.churn_rate > 0) {
      sim::churn_options churning;
      churning.rate = options.churn_rate;
      churning.namespaces = options.namespaces;
      churning.generator = generation;
      churning.generator.seed = options.seed + 1000;
      churn_ = std::make_unique<sim::churn>(simulator_->store(), churning);
      churn_->start();
    }
    return ok_v;
  }

  ~simulator_cluster() override {
    if (churn_)
      churn_->stop();
    if (simulator_)
      simulator_->stop();
  }

  std::string url() const override { return simulator_->url(); }

  void stop_churn() override {
    if (churn_)
      churn_->stop();
  }

private:
  std::unique_ptr<sim::simulator> simulator_;
  std::unique_ptr<sim::churn> churn_; // writes into simulator_'s storage: stopped first
};

} // namespace

result<std::unique_ptr<simulated_cluster>> start_simulated_cluster(const simulate_options& options,
                                                                   service_log& log) {
  auto cluster = std::make_unique<simulator_cluster>();
  if (auto started = cluster->start(options, log); !started)
    return std::move(started).err();
  return std::unique_ptr<simulated_cluster>(std::move(cluster));
}

} // namespace kinformer::service
