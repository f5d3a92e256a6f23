// The simulator's tools: the realistic object generator, bulk loading and churn, against an
// in-process storage.

#include "app/kubesim/churn.hpp"
#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/storage.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

namespace json = boost::json;
using namespace kinformer;
using namespace kinformer::sim;

namespace {

std::size_t serialized_size(const json::value& v) {
  return json::serialize(v).size();
}

generator_options with_size(std::size_t bytes, std::uint64_t seed = 7) {
  generator_options o;
  o.seed = seed;
  o.pod_bytes = bytes;
  return o;
}

// Counts the events a watch delivers, and lets a test wait for a number of them.
struct event_counter {
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t added = 0, modified = 0, deleted = 0;

  watch_sink sink() {
    return [this](const watch_message& m) {
      std::lock_guard lock(mutex);
      if (m.type == event_type::added)
        ++added;
      else if (m.type == event_type::modified)
        ++modified;
      else if (m.type == event_type::deleted)
        ++deleted;
      changed.notify_all();
    };
  }
  std::size_t total() {
    std::lock_guard lock(mutex);
    return added + modified + deleted;
  }
  void wait_for(std::size_t events) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return added + modified + deleted >= events; });
  }
};

watch_handle watch_pods(storage& store, event_counter& counter) {
  watch_request request;
  request.gvr = pods_resource;
  request.resource_version = std::to_string(store.current_resource_version());
  auto handle = store.watch(request, counter.sink());
  REQUIRE(handle.ok());
  return std::move(handle).value();
}

} // namespace

TEST_CASE("generated pods are valid objects with a realistic shape") {
  // Probes, volumes and five conditions need room: real pods with all of them are ~6.5 KB.
  object_generator generator(with_size(7000));
  auto value = generator.pod("default");
  auto obj = object::from_json(value);
  REQUIRE(obj.ok());
  const object& pod = **obj;
  CHECK(pod.kind() == "Pod");
  CHECK(pod.api_version() == "v1");
  const auto& meta = pod.meta();
  CHECK(meta.namespace_ == "default");
  for (const char* label : {"app", "pod-template-hash", "tier", "version"})
    CHECK(meta.label(label).has_value());
  // generateName-style: "<deployment>-<pod-template-hash>-<5 chars>".
  const auto& generate_name = value.at("metadata").at("generateName").as_string();
  CHECK(meta.name.starts_with(std::string_view(generate_name)));
  CHECK(meta.name.size() == generate_name.size() + 5);
  CHECK(generate_name.find(std::string(*meta.label("pod-template-hash"))) != json::string::npos);
  REQUIRE(meta.owner_references.size() == 1);
  CHECK(meta.owner_references[0].kind == "ReplicaSet");
  CHECK(meta.owner_references[0].controller);

  const auto& managed = value.at("metadata").at("managedFields").as_array();
  REQUIRE(managed.size() == 2);
  CHECK(managed[0].at("manager") == "kube-controller-manager");
  CHECK(managed[1].at("manager") == "kubelet");
  CHECK(managed[1].at("subresource") == "status");
  CHECK(managed[0].at("fieldsV1").at("f:spec").as_object().contains("f:containers"));
  // managedFields are the larger part of a pod's metadata, as in real clusters.
  double share = double(serialized_size(value.at("metadata").at("managedFields"))) /
                 double(serialized_size(value.at("metadata")));
  CHECK(share > 0.4);
  CHECK(share < 0.9);

  const auto& spec = value.at("spec");
  CHECK_FALSE(spec.at("nodeName").as_string().empty());
  CHECK_FALSE(spec.at("serviceAccountName").as_string().empty());
  const auto& container = spec.at("containers").at(0);
  for (const char* field :
       {"image", "ports", "env", "resources", "volumeMounts", "livenessProbe", "readinessProbe"})
    CHECK(container.as_object().contains(field));
  CHECK(spec.as_object().contains("volumes"));
  CHECK(spec.as_object().contains("tolerations"));

  const auto& status = value.at("status");
  CHECK(status.at("phase") == "Running");
  CHECK(status.at("conditions").as_array().size() == 5);
  CHECK_FALSE(status.at("podIP").as_string().empty());
  CHECK_FALSE(status.at("hostIP").as_string().empty());
  CHECK(status.at("containerStatuses").as_array().size() ==
        spec.at("containers").as_array().size());
  // The kubelet's managedFields name this pod's own IP.
  std::string ip_key = "k:{\"ip\":\"" + std::string(status.at("podIP").as_string()) + "\"}";
  CHECK(managed[1].at("fieldsV1").at("f:status").at("f:podIPs").as_object().contains(ip_key));
}

TEST_CASE("stored pods land near the size target") {
  auto target =
      GENERATE(std::size_t(2800), std::size_t(3500), std::size_t(5000), std::size_t(6000));
  storage store;
  object_generator generator(with_size(target));
  for (int i = 0; i < 40; ++i) {
    auto created = store.create_value(pods_resource, "default", generator.pod("default"));
    REQUIRE(created.ok());
    INFO("target " << target << ", stored " << created->json->size());
    CHECK(created->json->size() >= target * 95 / 100);
    CHECK(created->json->size() <= target * 105 / 100);
  }
}

TEST_CASE("a size target below the smallest realistic pod gives the smallest pod") {
  object_generator small(with_size(500));
  object_generator regular(with_size(3500));
  auto small_size = serialized_size(small.pod("default"));
  CHECK(small_size < serialized_size(regular.pod("default")));
  CHECK(small_size < 3000);
  CHECK(object::from_json(small.pod("default")).ok());
}

TEST_CASE("the generator is deterministic from its seed") {
  object_generator a(with_size(3000, 42)), b(with_size(3000, 42)), c(with_size(3000, 43));
  bool any_difference = false;
  for (int i = 0; i < 30; ++i) {
    std::string ns = object_generator::namespace_name(i % 3);
    auto pa = json::serialize(a.pod(ns));
    CHECK(pa == json::serialize(b.pod(ns)));
    any_difference = any_difference || pa != json::serialize(c.pod(ns));
  }
  CHECK(json::serialize(a.deployment("x")) == json::serialize(b.deployment("x")));
  CHECK(json::serialize(a.widget("x")) == json::serialize(b.widget("x")));
  CHECK(any_difference);
}

TEST_CASE("configmaps, deployments, namespaces and custom resources are stored as created") {
  storage store;
  register_example_resources(store);
  object_generator generator;
  auto ns = store.create_value(namespaces_resource, "", generator.namespace_object("team-a"));
  REQUIRE(ns.ok());
  CHECK(ns->object->key() == "team-a");
  auto cm = store.create_value(config_maps_resource, "team-a", generator.config_map("team-a"));
  REQUIRE(cm.ok());
  CHECK(cm->object->kind() == "ConfigMap");
  auto deploy = store.create_value(deployments_resource, "team-a", generator.deployment("team-a"));
  REQUIRE(deploy.ok());
  CHECK(deploy->object->kind() == "Deployment");
  CHECK(deploy->object->meta().label("app").has_value());
  auto widget = store.create_value(widgets_resource, "team-a", generator.widget("team-a"));
  REQUIRE(widget.ok());
  CHECK(widget->object->key().starts_with("team-a/widget-"));
  auto cluster_widget =
      store.create_value(cluster_widgets_resource, "", generator.cluster_widget());
  REQUIRE(cluster_widget.ok());
  CHECK(cluster_widget->object->key().starts_with("clusterwidget-")); // cluster-scoped: no ns
  CHECK(store.find_resource(widgets_resource)->scope == resource_scope::namespaced);
  CHECK(store.find_resource(cluster_widgets_resource)->scope == resource_scope::cluster);
  CHECK(store.find_kind({"example.com", "v1", "Widget"}).has_value());
}

TEST_CASE("changes for churn alter what they say and tolerate odd objects") {
  object_generator generator;
  auto pod = generator.pod("default");
  auto before = pod;
  generator.change_labels(pod);
  CHECK(pod.at("metadata").at("labels").at("track") == "canary");
  CHECK(pod.at("spec") == before.at("spec"));

  auto spec_changed = pod;
  generator.change_spec(spec_changed);
  CHECK(spec_changed.at("spec").at("containers").at(0).at("image") !=
        pod.at("spec").at("containers").at(0).at("image"));

  auto deployment = generator.deployment("default");
  auto deployment_before = deployment;
  generator.change_spec(deployment);
  CHECK(deployment.at("spec").at("template") != deployment_before.at("spec").at("template"));

  // Objects missing the parts a change touches get them, instead of crashing.
  json::value bare = json::object{{"apiVersion", "v1"}, {"kind", "Pod"}};
  generator.change_labels(bare);
  CHECK(bare.at("metadata").at("labels").at("track") == "canary");
  generator.change_status(bare);
  generator.change_spec(bare);
  CHECK(bare.at("spec").as_object().contains("size"));
  CHECK(object::from_json(bare).ok());
  CHECK(fields_v1_of(json::value("not an object")).as_object().empty());
}

TEST_CASE("bulk load creates the namespaces and spreads pods over them") {
  storage store;
  object_generator generator(with_size(2500));
  auto loaded = load_pods(store, generator, 2000, 5);
  REQUIRE(loaded.ok());
  CHECK(loaded->pods == 2000);
  CHECK(loaded->namespaces == 4); // "default" existed already
  auto pods = store.truth(pods_resource);
  CHECK(pods.size() == 2000);
  std::map<std::string, std::size_t> per_namespace;
  for (const auto& p : pods)
    ++per_namespace[std::string(split_object_key(p.key).ns)];
  CHECK(per_namespace.size() == 5);
  for (const auto& [ns, count] : per_namespace)
    CHECK(count == 400);
  for (std::size_t i = 0; i < 5; ++i)
    CHECK(store.get(namespaces_resource, "", object_generator::namespace_name(i)).ok());

  auto refused = load_pods(store, generator, 10, 0);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == errc::invalid_argument);
}

TEST_CASE("churn steps keep the population stable and every write reaches watchers") {
  storage store;
  object_generator generator(with_size(2500, 3));
  REQUIRE(load_pods(store, generator, 200, 3).ok());
  event_counter counter;
  auto handle = watch_pods(store, counter);

  churn_options options;
  options.namespaces = 3;
  options.generator.seed = 11;
  churn c(store, options);
  c.run_steps(1000);
  auto stats = c.stats();
  CHECK(stats.writes() + stats.failures == 1000);
  CHECK(stats.failures == 0);
  CHECK(stats.creates > 50);
  CHECK(stats.deletes > 50);
  CHECK(stats.label_updates > 100);
  CHECK(stats.status_updates > 200);
  CHECK(stats.spec_updates > 30);
  // Creates and deletes hold the population at its starting size.
  CHECK(c.population() >= 199);
  CHECK(c.population() <= 201);
  CHECK(store.truth(pods_resource).size() == c.population());
  // One event per write, delivered synchronously.
  CHECK(counter.added == stats.creates);
  CHECK(counter.deleted == stats.deletes);
  CHECK(counter.modified == stats.label_updates + stats.status_updates + stats.spec_updates);

  // Spec updates bump generation; label and status updates do not.
  list_request request;
  request.gvr = pods_resource;
  auto listed = store.list(request);
  REQUIRE(listed.ok());
  std::int64_t max_generation = 0;
  for (const auto& item : listed->items)
    max_generation = std::max(max_generation, item.object->meta().generation);
  CHECK(max_generation > 1);
}

TEST_CASE("churn holds the population across restores from a backup") {
  // A restore revives pods churn deleted since the backup and removes ones it created: churn
  // must read the pods again, or the revived ones would never be deleted and the population
  // would grow with every restore.
  storage store;
  object_generator generator(with_size(2500, 3));
  REQUIRE(load_pods(store, generator, 100, 2).ok());
  churn_options options;
  options.namespaces = 2;
  options.generator.seed = 5;
  churn c(store, options);
  for (int round = 0; round < 5; ++round) {
    auto saved = store.backup();
    c.run_steps(400);
    store.restore(saved);
    CHECK(store.backups_restored() == static_cast<std::uint64_t>(round + 1));
  }
  // Reading the pods again neither fails on an armed list fault nor uses it up.
  store.fail_next_lists(1, 500);
  store.restore(store.backup());
  c.run_steps(400);
  list_request request;
  request.gvr = pods_resource;
  CHECK_FALSE(store.list(request).ok());
  CHECK(store.truth(pods_resource).size() >= 99);
  CHECK(store.truth(pods_resource).size() <= 101);
  CHECK(store.truth(pods_resource).size() == c.population());
}

TEST_CASE("churn is deterministic from its seed") {
  auto run = [](std::uint64_t seed) {
    storage store;
    object_generator generator(with_size(2500, 5));
    REQUIRE(load_pods(store, generator, 50, 2).ok());
    churn_options options;
    options.namespaces = 2;
    options.generator.seed = seed;
    churn c(store, options);
    c.run_steps(300);
    auto s = c.stats();
    return std::vector<std::uint64_t>{s.creates,       s.deletes,
                                      s.label_updates, s.status_updates,
                                      s.spec_updates,  store.truth(pods_resource).size()};
  };
  CHECK(run(9) == run(9));
}

TEST_CASE("churn on its thread stops at its count, and when stopped") {
  storage store;
  event_counter counter;
  auto handle = watch_pods(store, counter);

  churn_options options;
  options.rate = 0; // as fast as possible
  options.count = 500;
  options.population = 100;
  churn c(store, options);
  c.start();
  c.wait();
  CHECK_FALSE(c.running());
  CHECK(c.stats().writes() == 500);
  CHECK(counter.total() == 500);
  // Starting from nothing, churn creates its population first, then holds it.
  CHECK(c.population() >= 99);
  CHECK(c.population() <= 101);
  CHECK(c.stats().creates >= 100);

  // Unlimited and paced: runs until stopped.
  churn_options endless;
  endless.rate = 5000;
  churn d(store, endless);
  std::size_t seen = counter.total();
  d.start();
  CHECK(d.running());
  counter.wait_for(seen + 50);
  d.stop();
  CHECK_FALSE(d.running());
  auto after_stop = counter.total();
  CHECK(after_stop >= seen + 50);
  CHECK(d.stats().writes() == after_stop - seen);
}

TEST_CASE("paced churn holds its rate") {
  storage store;
  churn_options options;
  options.rate = 2000;
  options.count = 200;
  options.population = 20;
  churn c(store, options);
  auto begin = std::chrono::steady_clock::now();
  c.start();
  c.wait();
  auto elapsed = std::chrono::steady_clock::now() - begin;
  CHECK(c.stats().writes() == 200);
  // 200 writes at 2000/s cannot finish before 199 intervals of 0.5 ms.
  CHECK(elapsed >= std::chrono::microseconds(99500));
}

TEST_CASE("churn with a duration stops by itself") {
  storage store;
  churn_options options;
  options.rate = 1000;
  options.duration = std::chrono::milliseconds(50);
  options.population = 10;
  churn c(store, options);
  c.start();
  c.wait();
  CHECK_FALSE(c.running());
  CHECK(c.stats().writes() > 0);
  CHECK(c.stats().writes() <= 51);
}
