// The controller toolkit end to end, as a user would write a controller: keep one ConfigMap
// "<deployment>-info" per Deployment (its replicas and image, owned by it), reading through the
// cache and writing through resource_writer, against the simulator while Deployments churn and
// the ConfigMaps are tampered with. The simulator has no garbage collector, so the reconciler
// deletes the ConfigMap of a Deployment that is gone.

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
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const group_version_resource deployments_gvr{"apps", "v1", "deployments"};
const group_version_resource configmaps_gvr{"", "v1", "configmaps"};

kind_request deployments() {
  kind_request k;
  k.kind = {"apps", "v1", "Deployment"};
  return k;
}
kind_request config_maps() {
  kind_request k;
  k.kind = {"", "v1", "ConfigMap"};
  return k;
}

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

// What the ConfigMap of a Deployment holds.
json::object desired_data(const object& deploy) {
  auto tree = deploy.tree();
  const auto& spec = tree.at("spec").as_object();
  std::string image(
      spec.at("template").at("spec").at("containers").as_array().at(0).at("image").as_string());
  return json::object{{"replicas", std::to_string(spec.at("replicas").to_number<std::int64_t>())},
                      {"image", image}};
}

std::optional<json::object> data_of(const object& cm) {
  auto tree = cm.tree();
  if (auto* data = tree.as_object().if_contains("data"); data && data->is_object())
    return data->as_object();
  return std::nullopt;
}

std::string info_name(std::string_view deployment_name) {
  return std::string(deployment_name) + "-info";
}

// The reconciler: from the Deployment in the cache to its ConfigMap on the server.
struct config_map_reconciler {
  cache_client& reader;
  resource_writer& writer;

  result<reconcile_result> operator()(const reconcile_request& req) const {
    resource_location where{configmaps_gvr, req.namespace_};
    auto deploy = reader.get(deployments(), req.namespace_, req.name);
    auto existing = reader.get(config_maps(), req.namespace_, info_name(req.name));
    if (!deploy) {
      if (deploy.err().code != errc::not_found)
        return deploy.err();
      if (!existing)
        return reconcile_result{};
      delete_options options;
      options.uid = std::string((*existing)->meta().uid);
      auto removed = writer.remove(where, info_name(req.name), options);
      if (!removed && removed.err().code != errc::not_found)
        return removed.err();
      return reconcile_result{};
    }
    json::object cm{{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata",
                     {{"name", info_name(req.name)},
                      {"namespace", req.namespace_},
                      {"ownerReferences", json::array{json::object{{"apiVersion", "apps/v1"},
                                                                   {"kind", "Deployment"},
                                                                   {"name", req.name},
                                                                   {"uid", (*deploy)->meta().uid},
                                                                   {"controller", true}}}}}},
                    {"data", desired_data(**deploy)}};
    if (!existing) {
      if (existing.err().code != errc::not_found)
        return existing.err();
      auto created = writer.create(where, json::serialize(cm));
      if (!created && created.err().code == errc::already_exists)
        return reconcile_result{true, {}}; // the cache lags: look again
      if (!created)
        return created.err();
      return reconcile_result{};
    }
    if (data_of(**existing) == cm.at("data").as_object())
      return reconcile_result{};
    cm["metadata"].as_object()["resourceVersion"] = (*existing)->meta().resource_version;
    auto updated = writer.update(where, info_name(req.name), json::serialize(cm));
    if (!updated)
      return updated.err(); // a conflict retries with backoff, as controller-runtime does
    return reconcile_result{};
  }
};

struct fixture : kinformer::testing::controller_fixture {
  std::optional<resource_writer> writer;
  std::mutex mutex;
  std::condition_variable reconciled;

  fixture() { writer.emplace(client); }
  // The reconciler uses `writer`: it must have stopped before it goes.
  ~fixture() { stop_controller(); }

  void start() {
    controller_spec spec;
    spec.options.name = "config-map-per-deployment";
    spec.options.workers = 3;
    spec.options.rate_limits.base_delay = 1ms;
    spec.options.rate_limits.max_delay = 100ms;
    spec.sources = {for_kind(deployments()), owns(config_maps(), "apps", "Deployment")};
    config_map_reconciler inner{*reader, *writer};
    spec.reconcile = [this, inner](const reconcile_request& req) {
      auto out = inner(req);
      std::lock_guard lock(mutex);
      reconciled.notify_all();
      return out;
    };
    controller = spawn_controller(*system, cache, std::move(spec));
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
}
