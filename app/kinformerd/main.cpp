// kinformerd: Kubernetes informers as a service. See `kinformerd --help` and
// deploy/kinformerd.yaml.
//
// main() parses the command line, starts the service (app/kinformerd/service.hpp) and waits for
// SIGTERM or SIGINT, then stops it gracefully: exit 0 after a clean stop, 1 when start-up
// fails, 2 for a bad command line or config.

#include "app/common/allocator_tuning.hpp"
#include "app/common/client_flags.hpp"
#include "app/common/heap_trimmer.hpp"
#include "app/common/stop_signals.hpp"
#include "app/kinformerd/config.hpp"
#include "app/kinformerd/service.hpp"
#include "app/kinformerd/simulated_cluster.hpp"

#include <iostream>
#include <pthread.h>

using namespace kinformer;

int main(int argc, char** argv) {
  tune_allocator({.max_arenas = 1}); // one arena: the smallest heap (allocator_tuning.hpp)
  auto config = service::parse_command_line(argc, argv);
  if (!config) {
    std::cerr << "kinformerd: " << config.err().describe() << "\n"
              << "run kinformerd --help for usage\n";
    return 2;
  }
  if (config->show_help) {
    std::cout << service::command_line_help();
    return 0;
  }
  if (config->show_version) {
    std::cout << "kinformerd " << kinformer_version() << "\n";
    return 0;
  }

  stop_signals stop; // before any thread starts
  heap_trimmer trimmer({});

  service::kinformerd daemon(std::move(config).value(), std::cerr,
                             service::start_simulated_cluster);
  // While the API server cannot be reached, start() retries; a stop signal ends the wait.
  std::optional<int> stopped_early;
  auto started = daemon.start([&](std::chrono::milliseconds delay) {
    stopped_early = stop.wait_for(delay);
    return stopped_early.has_value();
  });
  if (!started && stopped_early) {
    std::cerr << "kinformerd: " << stop_signals::name(*stopped_early)
              << " received before the API server answered, stopping\n";
    return 0;
  }
  if (!started) {
    std::cerr << "kinformerd: " << started.err().describe() << "\n";
    return 1;
  }
  std::cerr << "kinformerd: " << stop_signals::name(stop.wait()) << " received, stopping\n";
  daemon.stop();
  return 0;
}
