// The controller toolkit end to end: the example controller (examples/config-map-per-deployment:
// one ConfigMap "<deployment>-info" per Deployment, owned by it, and an Event per change),
// against the simulator while Deployments churn and the ConfigMaps are tampered with.

#include "config_map_reconciler.hpp"

#include "app/kubesim/storage.hpp"
#include "protocol/resource_writer.hpp"
#include "tests/support/controller_fixture.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <random>

using namespace kinformer;
using namespace example;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const group_version_resource deployments_gvr{"apps", "v1", "deployments"};
const group_version_resource configmaps_gvr{"", "v1", "configmaps"};
const group_version_resource events_gvr{"events.k8s.io", "v1", "events"};

std::string deployment(const std::string& ns, const std::string& name, int replicas,
                       const std::string& image) {
  json::object labels{{"app", name}};
  json::object container{{"name", "app"}, {"image", image}};
  return json::serialize(json::object{{"apiVersion", "apps/v1"},
                                      {"kind", "Deployment"},
                                      {"metadata", {{"name", name}, {"namespace", ns}}},
                                      {"spec",
                                       {{"replicas", replicas},
                                        {"selector", {{"matchLabels", labels}}},
                                        {"template",
                                         {{"metadata", {{"labels", labels}}},
                                          {"spec", {{"containers", json::array{container}}}}}}}}});
}

const std::string reporter = "kinformer.example/config-map-per-deployment";

struct fixture : kinformer::testing::controller_fixture {
  std::optional<resource_writer> writer;
  std::optional<event_recorder> events;
  std::mutex mutex;
  std::condition_variable reconciled;

  fixture() {
    writer.emplace(client);
    events.emplace(spawn_event_recorder(*system, client, {reporter, "test"}));
  }
  // The reconciler uses `writer` and `events`: it must have stopped before they go.
  ~fixture() {
    stop_controller();
    caf::anon_send_exit(events->actor(), caf::exit_reason::user_shutdown);
  }

  void start() {
    config_map_reconciler inner{*reader, *writer, &*events};
    auto spec = config_map_controller(
        [this, inner](const reconcile_request& req) {
          auto out = inner(req);
          std::lock_guard lock(mutex);
          reconciled.notify_all();
          return out;
        },
        3);
    spec.options.rate_limits.base_delay = 1ms;
    spec.options.rate_limits.max_delay = 100ms;
    controller = spawn_controller(*system, cache, std::move(spec));
  }

  // How often an Event happened: a series says, a single Event once.
  static int occurrences(const json::object& event) {
    if (auto* series = event.if_contains("series"))
      return static_cast<int>(series->at("count").to_number<std::int64_t>());
    return 1;
  }

  // How often the controller recorded each reason about `name`, once no write is pending.
  std::map<std::string, int> events_about(const std::string& ns, const std::string& name) {
    caf::scoped_actor self{*system};
    self->request(events->actor(), 10s, atoms::wait_sync_atom::value)
        .receive([](bool) {}, [&](caf::error& err) { FAIL(system->render(err)); });
    std::map<std::string, int> reasons;
    for (const auto& v : server.store().truth(events_gvr)) {
      auto slash = v.key.find('/');
      auto event = server.store().get(events_gvr, v.key.substr(0, slash), v.key.substr(slash + 1));
      REQUIRE(event.ok());
      auto tree = event->object->tree().as_object();
      const auto& regarding = tree.at("regarding").as_object();
      if (regarding.at("name").as_string() == name && regarding.at("namespace").as_string() == ns &&
          tree.at("reportingController").as_string() == reporter && tree.at("type") == "Normal" &&
          v.key.starts_with(ns + "/" + name + "."))
        reasons[std::string(tree.at("reason").as_string())] += occurrences(tree);
    }
    return reasons;
  }

  // The server's state is what the controller is for: every Deployment has its ConfigMap with
  // the right data and owner, and no ConfigMap of this controller is left without one.
  bool converged() {
    auto& store = server.store();
    std::map<std::string, bool> expected; // configmap key -> seen
    for (const auto& v : store.truth(deployments_gvr)) {
      auto slash = v.key.find('/');
      std::string ns = v.key.substr(0, slash), name = v.key.substr(slash + 1);
      auto deploy = store.get(deployments_gvr, ns, name);
      auto cm = store.get(configmaps_gvr, ns, info_name(name));
      if (!deploy.ok() || !cm.ok())
        return false;
      const auto& owners = cm->object->meta().owner_references;
      if (data_of(*cm->object) != desired_data(*deploy->object) || owners.size() != 1 ||
          owners[0].uid != deploy->object->meta().uid)
        return false;
      expected[ns + "/" + info_name(name)] = true;
    }
    for (const auto& v : store.truth(configmaps_gvr))
      if (v.key.ends_with("-info") && !expected.count(v.key))
        return false;
    return true;
  }

  bool wait_converged() {
    std::unique_lock lock(mutex);
    return reconciled.wait_for(lock, 30s, [&] { return converged(); });
  }

  void create(const std::string& ns, const std::string& name, int replicas, std::string image) {
    REQUIRE(server.store().create(deployments_gvr, ns, deployment(ns, name, replicas, image)).ok());
  }
  void update(const std::string& ns, const std::string& name, int replicas, std::string image) {
    REQUIRE(server.store()
                .update(deployments_gvr, ns, name, deployment(ns, name, replicas, image))
                .ok());
  }
};

} // namespace

TEST_CASE_METHOD(fixture, "controller toolkit: a ConfigMap per Deployment converges through "
                          "churn, tampering and deletions") {
  std::vector<std::pair<std::string, std::string>> live;
  for (int i = 0; i < 10; ++i) {
    std::string ns = i % 2 ? "red" : "blue", name = "web-" + std::to_string(i);
    create(ns, name, 1, "nginx:1");
    live.emplace_back(ns, name);
  }
  start();
  REQUIRE(wait_converged());

  std::mt19937 rng(7);
  for (int step = 0; step < 60; ++step) {
    auto& [ns, name] = live[rng() % live.size()];
    update(ns, name, static_cast<int>(rng() % 5), "nginx:" + std::to_string(rng() % 9));
  }
  for (int i = 0; i < 3; ++i) {
    auto [ns, name] = live.back();
    live.pop_back();
    REQUIRE(server.store().remove(deployments_gvr, ns, name).ok());
  }
  create("blue", "api", 2, "api:1");
  // Someone edits one ConfigMap by hand and deletes another: the controller puts them back.
  auto [ns0, name0] = live.front();
  auto tampered =
      json::serialize(json::object{{"apiVersion", "v1"},
                                   {"kind", "ConfigMap"},
                                   {"metadata", {{"name", info_name(name0)}, {"namespace", ns0}}},
                                   {"data", {{"replicas", "999"}}}});
  REQUIRE(server.store().update(configmaps_gvr, ns0, info_name(name0), tampered).ok());
  auto [ns1, name1] = live[1];
  REQUIRE(server.store().remove(configmaps_gvr, ns1, info_name(name1)).ok());
  REQUIRE(wait_converged());

  caf::scoped_actor self{*system};
  self->request(*controller, 10s, atoms::stats_atom::value)
      .receive(
          [&](const controller_stats& s) {
            CHECK(s.sources_synced);
            CHECK(s.reconciles_succeeded >= 10);
          },
          [&](caf::error& err) { FAIL(system->render(err)); });

  // Events: every ConfigMap made is recorded on its Deployment (in the Deployment's namespace,
  // named after it), and the hand-edited one's repair as an update.
  CHECK(events_about("blue", "api")["ConfigMapCreated"] == 1);
  CHECK(events_about(ns1, name1)["ConfigMapCreated"] == 2); // once at first, once after deletion
  CHECK(events_about(ns0, name0)["ConfigMapUpdated"] >= 1);
  self->request(events->actor(), 10s, atoms::stats_atom::value)
      .receive(
          [&](const event_recorder_stats& s) {
            CHECK(s.failed == 0);
            CHECK(s.dropped == 0);
            CHECK(s.created >= 13);
          },
          [&](caf::error& err) { FAIL(system->render(err)); });
}
