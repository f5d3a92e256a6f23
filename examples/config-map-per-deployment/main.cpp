// config-map-per-deployment: an example controller on kinformer's toolkit. For every Deployment
// it keeps a ConfigMap "<deployment>-info" with its replicas and image, owned by it, and records
// an Event on the Deployment for each change. Ctrl-C (or SIGTERM) stops it.
//
//   config-map-per-deployment [--kubeconfig F] [--context C] [-s URL] [--workers N]
//
// The connection follows kubectl: --kubeconfig, else KUBECONFIG, else ~/.kube/config, else the
// pod's service account; -s/--server alone needs no kubeconfig.

#include "config_map_reconciler.hpp"

#include "actors/actor_system_setup.hpp"
#include "actors/cache.hpp"
#include "app/common/allocator_tuning.hpp"
#include "app/common/client_flags.hpp"
#include "app/common/stop_signals.hpp"
#include "protocol/http/api_client.hpp"

#include <CLI/CLI.hpp>
#include <caf/all.hpp>

#include <iostream>
#include <unistd.h>

using namespace kinformer;

namespace {

int fail(const std::string& message) {
  std::cerr << "config-map-per-deployment: " << message << "\n";
  return 1;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0)
    return "unknown";
  return name;
}

} // namespace

int main(int argc, char** argv) {
  tune_allocator(); // before any thread starts: the cache keeps every Deployment and ConfigMap
  CLI::App app{"Keeps a ConfigMap <deployment>-info per Deployment (a kinformer example)."};
  client_flags flags;
  std::size_t workers = 2;
  add_connection_flags(app, flags);
  app.add_option("--workers", workers, "Reconciles at once")->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);

  auto config = resolve_connection(flags);
  if (!config)
    return fail(config.err().describe());

  stop_signals stop; // before any thread starts

  auto created = api_client::create(*config);
  if (!created)
    return fail(created.err().describe());
  std::shared_ptr<api_client> client = std::move(created).value();

  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system system{cfg};
  auto cache = spawn_cache(system, client, cache_options{});
  cache_client reader(system, caf::actor_cast<caf::actor>(cache));
  resource_writer writer(client);
  event_recorder events(spawn_event_recorder(
      system, client, {"kinformer.example/config-map-per-deployment", host_name()}));

  example::config_map_reconciler reconcile{reader, writer, &events};
  auto controller = spawn_controller(system, cache,
                                     example::config_map_controller(std::move(reconcile), workers));
  std::cerr << "config-map-per-deployment: running against " << config->server
            << " (Ctrl-C stops)\n";

  stop.wait();

  caf::scoped_actor self{system};
  self->request(controller, std::chrono::seconds(5), atoms::stats_atom::value)
      .receive(
          [](const controller_stats& s) {
            std::cerr << "config-map-per-deployment: " << s.reconciles_succeeded
                      << " reconciles succeeded, " << s.reconciles_failed << " failed\n";
          },
          [](const caf::error&) {});
  // The controller ends after its last reconcile; only then may the reader and writer go.
  self->monitor(controller);
  self->send_exit(controller, caf::exit_reason::user_shutdown);
  self->receive([](const caf::down_msg&) {});
  self->send_exit(events.actor(), caf::exit_reason::user_shutdown);
  self->send_exit(cache, caf::exit_reason::user_shutdown);
  return 0;
}
