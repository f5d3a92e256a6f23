#pragma once
// Test support: one simulator on a free loopback port, one HTTP client to it, one actor system.
// The start of every actor test against the simulator; test files derive their own fixture from
// it. Actors put in `spawned` are shut down before the system, the system before the client,
// the client before the simulator.

#include "actors/actor_system_setup.hpp"
#include "app/kubesim/simulator.hpp"
#include "protocol/http/api_client.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <vector>

namespace kinformer::testing {

struct sim_actor_fixture {
  sim::simulator server;
  std::shared_ptr<api_client> client;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  std::vector<caf::actor> spawned;

  // Bookmarks every 200 ms, so that quiet watches still show progress quickly.
  static sim::simulator_options quiet() {
    sim::simulator_options o;
    o.bookmark_interval = std::chrono::milliseconds(200);
    return o;
  }

  explicit sim_actor_fixture(sim::simulator_options options = quiet())
      : server(std::move(options)) {
    REQUIRE(server.start().ok());
    auto created = api_client::create(*from_server_url(server.url()));
    REQUIRE(created.ok());
    client = std::move(created).value();
    configure_actor_system(cfg);
    system = std::make_unique<caf::actor_system>(cfg);
  }

  ~sim_actor_fixture() {
    for (auto& a : spawned)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    system.reset();
    client.reset();
    server.stop();
  }

  sim_actor_fixture(const sim_actor_fixture&) = delete;
  sim_actor_fixture& operator=(const sim_actor_fixture&) = delete;
};

} // namespace kinformer::testing
