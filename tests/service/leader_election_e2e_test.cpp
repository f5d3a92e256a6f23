// Two kinformerd replicas (child processes) against one simulator, with leader election on and
// a webhook each: only the leader's webhook delivers; when the leader is killed (SIGKILL, no
// chance to release) the other takes the Lease once it expires and its webhook delivers the
// whole state and what follows; a leader stopped with SIGTERM hands the Lease on (releases it).
// Short timings (lease 2 s) keep it quick; every wait is for a log line or a POST.

#include "actors/controller/leader_election.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "tests/service/http_receiver.hpp"
#include "tests/support/child_process.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using kinformer::testing::child_process;
using kinformer::testing::http_receiver;
using namespace kinformer;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const group_version_resource configmaps{"", "v1", "configmaps"};
const group_version_resource leases{"coordination.k8s.io", "v1", "leases"};

std::string config_map(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","namespace":"default"},"data":{"k":"v"}})";
}

// A replica's config: the simulator, configmaps, a webhook to `hook_url`, election on.
std::string replica_config(const std::string& server, const std::string& identity,
                           const std::string& hook_url) {
  return "cluster:\n"
         "  mode: server\n"
         "  server: " +
         server +
         "\n"
         "informers:\n"
         "  - resource: configmaps\n"
         "handlers:\n"
         "  webhooks:\n"
         "    - name: hook\n"
         "      url: " +
         hook_url +
         "\n"
         "      flush_interval: 20ms\n"
         "leader_election:\n"
         "  enabled: true\n"
         "  lease_namespace: kube-system\n"
         "  identity: " +
         identity +
         "\n"
         "  lease_duration: 2s\n"
         "  renew_deadline: 1500ms\n"
         "  retry_period: 100ms\n"
         "listen:\n"
         "  metrics: 127.0.0.1:0\n"
         "  api: \"\"\n";
}

// Whether any POST the receiver got names `name`.
bool delivered(const std::vector<http_receiver::request>& requests, const std::string& name) {
  for (const auto& r : requests)
    if (r.body.find("\"" + name + "\"") != std::string::npos)
      return true;
  return false;
}

struct replica {
  http_receiver hooks;
  std::string config_file;
  std::unique_ptr<child_process> process;

  replica(const sim::simulator& server, const std::string& identity) {
    config_file = (fs::temp_directory_path() /
                   ("kinformerd-election-" + identity + "-" + std::to_string(::getpid()) + ".yaml"))
                      .string();
    std::ofstream(config_file) << replica_config(server.url(), identity, hooks.url());
    process = std::make_unique<child_process>(
        std::vector<std::string>{KINFORMERD_PATH, "--config", config_file});
    INFO(process->stderr_text());
    REQUIRE(process->wait_stderr_contains("event=leader_election_started", 20s));
    REQUIRE(process->wait_stderr_contains("event=started", 20s));
  }
  ~replica() { fs::remove(config_file); }

  bool wait_leading() { return process->wait_stderr_contains("event=leading ", 20s); }
};

std::optional<observed_lease> lease_on(sim::simulator& server) {
  auto stored = server.store().get(leases, "kube-system", "kinformerd");
  if (!stored.ok())
    return std::nullopt;
  return parse_lease(stored->object->to_json());
}

} // namespace

TEST_CASE("kinformerd replicas: only the leader's webhook delivers, a killed leader's Lease "
          "expires and the other takes over, a stopped one hands it on",
          "[service_e2e]") {
  sim::simulator server;
  REQUIRE(server.start().ok());
  for (auto name : {"first", "second", "third"})
    REQUIRE(server.store().create(configmaps, "default", config_map(name)).ok());

  replica a(server, "replica-a");
  REQUIRE(a.wait_leading());
  REQUIRE(a.hooks.wait_for([](auto& r) { return delivered(r, "third"); }));

  replica b(server, "replica-b");
  // b has started, synced its informer and campaigned: it follows, its webhook is silent.
  REQUIRE(server.store().create(configmaps, "default", config_map("while-a-leads")).ok());
  REQUIRE(a.hooks.wait_for([](auto& r) { return delivered(r, "while-a-leads"); }));
  CHECK(b.hooks.requests().empty());
  CHECK(b.process->stderr_text().find("event=leading ") == std::string::npos);
  CHECK(lease_on(server)->spec.holder_identity == "replica-a");

  a.process->kill_now();
  REQUIRE(a.process->wait_exit(10s));
  auto requests_from_a = a.hooks.requests().size();
  REQUIRE(b.wait_leading());
  // The new leader's webhook starts with the whole state, then follows changes.
  REQUIRE(b.hooks.wait_for([](auto& r) {
    return delivered(r, "first") && delivered(r, "third") && delivered(r, "while-a-leads");
  }));
  REQUIRE(server.store().create(configmaps, "default", config_map("after-hand-over")).ok());
  REQUIRE(b.hooks.wait_for([](auto& r) { return delivered(r, "after-hand-over"); }));
  CHECK(a.hooks.requests().size() == requests_from_a);
  auto held = lease_on(server);
  REQUIRE(held);
  CHECK(held->spec.holder_identity == "replica-b");
  CHECK(held->spec.lease_transitions == 1);

  // A clean stop releases the Lease: no holder, a 1 s duration, for whoever comes next.
  b.process->terminate();
  auto code = b.process->wait_exit(20s);
  INFO(b.process->stderr_text());
  REQUIRE(code);
  CHECK(*code == 0);
  CHECK(b.process->stderr_text().find("event=lease_released") != std::string::npos);
  auto released = lease_on(server);
  REQUIRE(released);
  CHECK(released->spec.holder_identity.empty());
  CHECK(released->spec.lease_duration_seconds == 1);
}
