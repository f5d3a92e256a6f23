#pragma once
// Test support for controllers: a cache over the simulator, a blocking reader on it, and the
// controller under test. Reconcilers run on worker threads and use what the test owns (the
// reader, a writer, a journal): a derived fixture's destructor calls stop_controller() first,
// which returns once no reconcile runs any more, before its own members go.

#include "actors/cache.hpp"
#include "actors/cache_client.hpp"
#include "actors/controller/controller.hpp"
#include "tests/support/sim_actor_fixture.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <optional>

namespace kinformer::testing {

struct controller_fixture : sim_actor_fixture {
  cache_actor cache;
  std::optional<cache_client> reader;
  std::optional<controller_actor> controller;

  controller_fixture() {
    cache_options o;
    o.watch.min_watch_timeout = std::chrono::seconds(300);
    o.watch.max_watch_timeout = std::chrono::seconds(600);
    cache = spawn_cache(*system, client, o);
    reader.emplace(*system, caf::actor_cast<caf::actor>(cache));
  }
  ~controller_fixture() {
    stop_controller();
    caf::anon_send_exit(cache, caf::exit_reason::user_shutdown);
    reader.reset();
  }

  // Stops the controller and returns once it is down: its workers have all stopped.
  void stop_controller() {
    if (!controller)
      return;
    caf::scoped_actor self{*system};
    self->monitor(*controller);
    self->send_exit(*controller, caf::exit_reason::user_shutdown);
    self->receive([](const caf::down_msg&) {});
    controller.reset();
  }
};

} // namespace kinformer::testing
