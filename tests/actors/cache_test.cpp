// The cache supervisor against the embedded simulator: lazy start, namespace and per-kind
// delegation, reads, indexes, and informer restarts under a live subscription.

#include "actors/actor_system_setup.hpp"
#include "actors/cache.hpp"
#include "actors/error_bridge.hpp"
#include "actors/handler.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "tests/support/delta_recorder.hpp"
#include "tests/support/sim_actor_fixture.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <set>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::testing::delta_recorder;

namespace {

const group_version_resource configmaps_gvr{"", "v1", "configmaps"};
const group_version_resource nodes_gvr{"", "v1", "nodes"};

kind_request config_maps(bool metadata_only = false) {
  kind_request k;
  k.kind = {"", "v1", "ConfigMap"};
  k.metadata_only = metadata_only;
  return k;
}
kind_request nodes() {
  kind_request k;
  k.resource = "nodes";
  return k;
}

std::string config_map(const std::string& ns, const std::string& name, const std::string& value,
                       const std::string& app) {
  boost::json::object obj{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", app}}}}},
      {"data", {{"value", value}}}};
  return boost::json::serialize(obj);
}

label_selector labels(std::string_view text) {
  auto parsed = label_selector::parse(text);
  REQUIRE(parsed.ok());
  return *parsed;
}
field_selector fields(std::string_view text) {
  auto parsed = field_selector::parse(text);
  REQUIRE(parsed.ok());
  return *parsed;
}

std::multiset<std::string> keys_of(const object_list& objects) {
  std::multiset<std::string> out;
  for (const auto& obj : objects)
    out.insert(std::string(obj->key()));
  return out;
}

struct fixture : kinformer::testing::sim_actor_fixture {
  std::optional<cache_actor> cache_handle;

  // The cache goes first; the base then stops what was spawned, the system and the simulator.
  ~fixture() {
    if (cache_handle)
      caf::anon_send_exit(*cache_handle, caf::exit_reason::user_shutdown);
  }

  static cache_options options() {
    cache_options o;
    o.watch.page_size = 7;
    o.watch.min_watch_timeout = 300s;
    o.watch.max_watch_timeout = 600s;
    o.retry.initial = 20ms;
    o.retry.cap = 200ms;
    o.restart.initial = 5ms;
    o.restart.cap = 40ms;
    return o;
  }

  cache_actor& cache(cache_options o = options()) {
    if (!cache_handle)
      cache_handle = spawn_cache(*system, client, std::move(o));
    return *cache_handle;
  }

  void create(const std::string& ns, const std::string& name, const std::string& value = "v",
              const std::string& app = "demo") {
    REQUIRE(server.store().create(configmaps_gvr, ns, config_map(ns, name, value, app)).ok());
  }
  void update(const std::string& ns, const std::string& name, const std::string& value) {
    REQUIRE(
        server.store().update(configmaps_gvr, ns, name, config_map(ns, name, value, "demo")).ok());
  }
  void remove(const std::string& ns, const std::string& name) {
    REQUIRE(server.store().remove(configmaps_gvr, ns, name).ok());
  }
  void create_node(const std::string& name) {
    boost::json::object obj{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
    REQUIRE(server.store().create(nodes_gvr, "", boost::json::serialize(obj)).ok());
  }

  std::map<std::string, std::string> truth() {
    std::map<std::string, std::string> out;
    for (auto& v : server.store().truth(configmaps_gvr))
      out[v.key] = std::to_string(v.resource_version);
    return out;
  }

  // One request to the cache, its failure turned back into a kinformer error.
  template <class T, class... Ts>
  result<T> ask(Ts&&... xs) {
    caf::scoped_actor self{*system};
    std::optional<result<T>> out;
    self->request(cache(), 20s, std::forward<Ts>(xs)...)
        .receive([&](T& value) { out.emplace(std::move(value)); },
                 [&](caf::error& err) { out.emplace(from_caf_error(err)); });
    return std::move(*out);
  }

  result<object_list> list(const kind_request& kind, list_options o = {}) {
    return ask<object_list>(atoms::list_atom::value, cache_list_request{kind, std::move(o)});
  }
  result<object_list> list_in(const kind_request& kind, std::string ns) {
    list_options o;
    o.namespace_ = std::move(ns);
    return list(kind, std::move(o));
  }
  result<object_ptr> get(const kind_request& kind, std::string ns, std::string name) {
    return ask<object_ptr>(atoms::get_atom::value,
                           cache_get_request{kind, std::move(ns), std::move(name)});
  }
  result<informer_set> get_informer(const kind_request& kind) {
    return ask<informer_set>(atoms::get_informer_atom::value, kind);
  }
  result<cache_stats> stats() { return ask<cache_stats>(atoms::stats_atom::value); }

  // Kills the kind's only informer and returns its replacement, once the cache has one.
  informer_actor kill_informer(const kind_request& kind) {
    auto set = get_informer(kind);
    REQUIRE(set.ok());
    REQUIRE(set->size() == 1);
    auto victim = (*set)[0].informer;
    caf::scoped_actor watcher{*system};
    watcher->monitor(victim);
    caf::anon_send_exit(victim, caf::exit_reason::kill);
    watcher->receive([](const caf::down_msg&) {});
    // The victim is gone: a read meets either the pending restart or the dead informer, and
    // is answered by the replacement in both cases. Only then is get_informer sure to show it.
    REQUIRE(list(kind).ok());
    auto replaced = get_informer(kind);
    REQUIRE(replaced.ok());
    REQUIRE((*replaced)[0].informer != victim);
    return (*replaced)[0].informer;
  }

  handler_actor subscribe(const kind_request& kind, delta_recorder& rec) {
    handler_callbacks cb;
    cb.on_delta = [&rec](const delta& d) { rec.record(d); };
    cb.on_synced = [&rec] { rec.mark_synced(); };
    auto h = spawn_handler(*system, cache(), kind, std::move(cb));
    spawned.push_back(caf::actor_cast<caf::actor>(h));
    return h;
  }
};

std::vector<std::string> namespaces_of(const informer_set& set) {
  std::vector<std::string> out;
  for (const auto& handle : set)
    out.push_back(handle.namespace_);
  return out;
}

// How many `added` deltas each key received.
std::map<std::string, int> adds_per_key(const std::vector<delta>& deltas) {
  std::map<std::string, int> out;
  for (const auto& d : deltas)
    if (d.type == delta_type::added)
      ++out[std::string(d.object->key())];
  return out;
}

} // namespace

TEST_CASE("informers start lazily on the first read, which waits for their sync") {
  fixture f;
  for (int i = 0; i < 12; ++i)
    f.create(i % 2 ? "a" : "b", "cm-" + std::to_string(i));
  f.cache();
  CHECK(f.stats()->informers.empty());

  auto all = f.list(config_maps());
  REQUIRE(all.ok());
  CHECK(all->size() == 12);
  auto stats = f.stats();
  REQUIRE(stats->informers.size() == 1);
  CHECK(stats->informers[0].kind == "v1, Kind=ConfigMap");
  CHECK(stats->informers[0].namespace_.empty());
  CHECK(stats->informers[0].stats.synced);

  auto one = f.get(config_maps(), "a", "cm-1");
  REQUIRE(one.ok());
  CHECK((*one)->key() == "a/cm-1");
  auto miss = f.get(config_maps(), "a", "nope");
  REQUIRE_FALSE(miss.ok());
  CHECK(miss.err().code == errc::not_found);
  CHECK(miss.err().message == "v1, Kind=ConfigMap \"a/nope\" not found");

  // A resource name resolving to the same kind shares its informer.
  kind_request by_name;
  by_name.resource = "cm";
  CHECK(f.list_in(by_name, "a")->size() == 6);
  CHECK(f.stats()->informers.size() == 1);

  kind_request unknown;
  unknown.resource = "widgets.example.com";
  auto refused = f.list(unknown);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == errc::no_match);

  list_options limited;
  limited.limit = 5;
  CHECK(f.list(config_maps(), limited)->size() == 5);
}

TEST_CASE("the cache refuses resume_from: only an informer can answer for its window") {
  fixture f;
  f.create("a", "cm-1");
  f.cache(fixture::options());
  subscription_options resumed;
  resumed.resume_from = "1";
  caf::scoped_actor handler{*f.system};
  auto refused = f.ask<subscription_id>(atoms::subscribe_atom::value, config_maps(),
                                        caf::actor_cast<handler_actor>(handler), resumed);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == errc::invalid_argument);
  CHECK_THAT(refused.err().message, Catch::Contains("resume_from"));
}

TEST_CASE("reader_fail_on_missing_informer: reads fail until get_informer starts the kind") {
  fixture f;
  f.create("a", "cm-1");
  auto o = fixture::options();
  o.reader_fail_on_missing_informer = true;
  f.cache(o);
  auto refused = f.get(config_maps(), "a", "cm-1");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == errc::not_cached);
  CHECK(refused.err().message.find("v1, Kind=ConfigMap is not cached") == 0);
  CHECK_FALSE(f.list(config_maps()).ok());
  CHECK(f.stats()->informers.empty());

  REQUIRE(f.get_informer(config_maps()).ok());
  CHECK(f.get(config_maps(), "a", "cm-1").ok());
  CHECK(f.list(config_maps())->size() == 1);
}

TEST_CASE("default namespaces: one informer each, uncovered namespaces refused, lists merged") {
  fixture f;
  for (const auto* ns : {"a", "b", "c"})
    for (int i = 0; i < 3; ++i)
      f.create(ns, "cm-" + std::to_string(i));
  f.create_node("node-1");
  f.create_node("node-2");
  auto o = fixture::options();
  o.default_namespaces = {"b", "a"};
  f.cache(o);

  auto set = f.get_informer(config_maps());
  REQUIRE(set.ok());
  CHECK(namespaces_of(*set) == std::vector<std::string>{"a", "b"});

  auto all = f.list(config_maps());
  REQUIRE(all.ok());
  CHECK(keys_of(*all) ==
        std::multiset<std::string>{"a/cm-0", "a/cm-1", "a/cm-2", "b/cm-0", "b/cm-1", "b/cm-2"});
  CHECK(f.list_in(config_maps(), "b")->size() == 3);
  CHECK(f.get(config_maps(), "a", "cm-2").ok());

  auto uncovered = f.get(config_maps(), "c", "cm-0");
  REQUIRE_FALSE(uncovered.ok());
  CHECK(uncovered.err().code == errc::namespace_not_covered);
  CHECK(uncovered.err().message.find("namespace \"c\" is not covered") == 0);
  CHECK(f.list_in(config_maps(), "c").err().code == errc::namespace_not_covered);

  // Cluster-scoped kinds ignore the namespaces: one cluster-wide informer.
  auto node_informers = f.get_informer(nodes());
  REQUIRE(node_informers.ok());
  CHECK(namespaces_of(*node_informers) == std::vector<std::string>{""});
  CHECK(keys_of(*f.list(nodes())) == std::multiset<std::string>{"node-1", "node-2"});
  CHECK((*f.get(nodes(), "", "node-2"))->key() == "node-2");
}

TEST_CASE("the all-namespaces entry next to explicit namespaces sees nothing twice") {
  fixture f;
  for (const auto* ns : {"a", "b", "c"})
    for (int i = 0; i < 3; ++i)
      f.create(ns, "cm-" + std::to_string(i));
  auto o = fixture::options();
  o.default_namespaces = {"", "a"};
  f.cache(o);

  auto set = f.get_informer(config_maps());
  REQUIRE(set.ok());
  CHECK(namespaces_of(*set) == std::vector<std::string>{"a", ""});

  auto all = f.list(config_maps());
  REQUIRE(all.ok());
  CHECK(all->size() == 9);
  auto listed = keys_of(*all);
  std::set<std::string> unique(listed.begin(), listed.end());
  CHECK(unique.size() == 9);
  CHECK(f.list_in(config_maps(), "a")->size() == 3);
  CHECK(f.list_in(config_maps(), "c")->size() == 3);
  CHECK(f.get(config_maps(), "c", "cm-1").ok());

  // A subscription through the cache sees every object exactly once, changes included.
  delta_recorder rec;
  f.subscribe(config_maps(), rec);
  f.update("a", "cm-0", "changed");
  f.create("b", "late");
  REQUIRE(rec.wait_for([&](const delta_recorder& r) { return r.synced() == 1; }));
  REQUIRE(rec.wait_for([&](const delta_recorder& r) { return r.state() == f.truth(); }));
  for (const auto& [key, adds] : adds_per_key(rec.deltas_copy()))
    CHECK(adds == 1);
}

TEST_CASE("by_object: per-kind namespaces, selectors and transform, other kinds use defaults") {
  fixture f;
  f.create("a", "web-1", "v", "web");
  f.create("b", "web-2", "v", "web");
  f.create("b", "db-1", "v", "db");
  f.create("c", "web-3", "v", "web");
  f.create_node("node-1");

  auto o = fixture::options();
  o.default_namespaces = {"a"};
  o.default_label_selector = labels("tier=none"); // matches no node, no config map
  by_object_options maps;
  maps.kind.resource = "configmaps";
  maps.namespaces = std::vector<std::string>{"b", "c"};
  maps.labels = labels("app=web");
  maps.transform = std::make_shared<const object_transform>(
      [](boost::json::value& v) { v.as_object().erase("data"); });
  o.by_object.push_back(maps);
  f.cache(o);

  auto all = f.list(config_maps());
  REQUIRE(all.ok());
  CHECK(keys_of(*all) == std::multiset<std::string>{"b/web-2", "c/web-3"});
  for (const auto& obj : *all)
    CHECK_FALSE(obj->tree().as_object().contains("data"));
  CHECK(f.list_in(config_maps(), "a").err().code == errc::namespace_not_covered);

  // The by_object entry applies to the metadata-only projection of the same kind too.
  CHECK(keys_of(*f.list(config_maps(true))) == std::multiset<std::string>{"b/web-2", "c/web-3"});

  // Nodes are not named: the default label selector applies.
  CHECK(f.list(nodes())->empty());
}

TEST_CASE("default selectors and transform apply to every kind") {
  fixture f;
  f.create("a", "keep", "v", "demo");
  f.create("a", "skip", "v", "other");
  f.create("a", "named-out", "v", "demo");
  auto o = fixture::options();
  o.default_label_selector = labels("app=demo");
  o.default_field_selector = fields("metadata.name!=named-out");
  o.default_transform = std::make_shared<const object_transform>([](boost::json::value& v) {
    v.as_object()["metadata"].as_object()["annotations"] = {{"transformed", "yes"}};
  });
  f.cache(o);
  auto all = f.list(config_maps());
  REQUIRE(all.ok());
  REQUIRE(keys_of(*all) == std::multiset<std::string>{"a/keep"});
  CHECK((*all)[0]->meta().annotation("transformed") == std::optional<std::string_view>{"yes"});
}

TEST_CASE("full objects and the metadata-only projection are separate informers") {
  fixture f;
  f.create("a", "cm-1", "payload");
  f.cache();
  auto full = f.get_informer(config_maps());
  auto meta = f.get_informer(config_maps(true));
  REQUIRE(full.ok());
  REQUIRE(meta.ok());
  CHECK((*full)[0].informer != (*meta)[0].informer);

  auto full_obj = f.get(config_maps(), "a", "cm-1");
  auto meta_obj = f.get(config_maps(true), "a", "cm-1");
  REQUIRE(full_obj.ok());
  REQUIRE(meta_obj.ok());
  CHECK((*full_obj)->tree().as_object().contains("data"));
  CHECK_FALSE((*meta_obj)->tree().as_object().contains("data"));
  CHECK((*meta_obj)->kind() == "PartialObjectMetadata");

  auto stats = f.stats();
  REQUIRE(stats->informers.size() == 2);
  std::set<std::string> kinds{stats->informers[0].kind, stats->informers[1].kind};
  CHECK(kinds == std::set<std::string>{"v1, Kind=ConfigMap", "v1, Kind=ConfigMap (metadata)"});
}

TEST_CASE("wait_sync replies once every started informer has synced") {
  fixture f;
  for (int i = 0; i < 20; ++i)
    f.create("a", "cm-" + std::to_string(i));
  f.create_node("node-1");
  f.cache();
  CHECK(*f.ask<bool>(atoms::wait_sync_atom::value)); // nothing started: synced at once
  REQUIRE(f.get_informer(config_maps()).ok());
  REQUIRE(f.get_informer(nodes()).ok());
  CHECK(*f.ask<bool>(atoms::wait_sync_atom::value));
  auto stats = f.stats();
  REQUIRE(stats->informers.size() == 2);
  for (const auto& informer : stats->informers)
    CHECK(informer.stats.synced);
  CHECK(stats->informers[0].stats.objects + stats->informers[1].stats.objects == 21);
}

TEST_CASE("remove_informer stops the kind's informers and subscriptions") {
  fixture f;
  f.create("a", "cm-1");
  auto o = fixture::options();
  o.reader_fail_on_missing_informer = true;
  f.cache(o);
  auto set = f.get_informer(config_maps());
  REQUIRE(set.ok());

  // Watch the informer terminate.
  caf::scoped_actor watcher{*f.system};
  watcher->monitor((*set)[0].informer);

  CHECK(*f.ask<bool>(atoms::remove_informer_atom::value, config_maps()));
  watcher->receive(
      [](const caf::down_msg& down) { CHECK(down.reason == caf::exit_reason::user_shutdown); });
  CHECK(f.stats()->informers.empty());
  CHECK(f.stats()->restarts == 0); // a removal is not a failure
  CHECK_FALSE(*f.ask<bool>(atoms::remove_informer_atom::value, config_maps()));
  CHECK(f.list(config_maps()).err().code == errc::not_cached);
}

TEST_CASE("index_field serves exact field selectors, others are refused") {
  fixture f;
  f.create("a", "one", "red");
  f.create("a", "two", "blue");
  f.create("b", "three", "red");
  f.cache();
  auto indexed =
      f.ask<bool>(atoms::index_field_atom::value, config_maps(), std::string("data.value"));
  REQUIRE(indexed.ok());
  CHECK(*indexed);

  list_options red;
  red.fields = fields("data.value=red");
  CHECK(keys_of(*f.list(config_maps(), red)) == std::multiset<std::string>{"a/one", "b/three"});
  red.namespace_ = "b";
  CHECK(keys_of(*f.list(config_maps(), red)) == std::multiset<std::string>{"b/three"});

  list_options by_name;
  by_name.fields = fields("metadata.name=one");
  auto no_index = f.list(config_maps(), by_name);
  REQUIRE_FALSE(no_index.ok());
  CHECK(no_index.err().code == errc::no_index);
  CHECK(no_index.err().message.find("no index for field \"metadata.name\"") != std::string::npos);

  list_options inexact;
  inexact.fields = fields("data.value!=red");
  CHECK(f.list(config_maps(), inexact).err().message.find("non-exact") == 0);

  auto twice =
      f.ask<bool>(atoms::index_field_atom::value, config_maps(), std::string("data.value"));
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.err().code == errc::invalid_argument);
}

TEST_CASE("a killed informer is restarted: subscriptions and reads converge, indexes kept") {
  fixture f;
  for (int i = 0; i < 30; ++i)
    f.create(i % 2 ? "a" : "b", "cm-" + std::to_string(i), "red");
  f.cache();
  REQUIRE(*f.ask<bool>(atoms::index_field_atom::value, config_maps(), std::string("data.value")));

  delta_recorder rec;
  f.subscribe(config_maps(), rec);
  REQUIRE(rec.wait_for([&](const delta_recorder& r) { return r.synced() == 1; }));

  auto set = f.get_informer(config_maps());
  REQUIRE(set.ok());
  auto victim = (*set)[0].informer;
  // Changes before, during and after the kill.
  for (int i = 0; i < 10; ++i)
    f.update(i % 2 ? "a" : "b", "cm-" + std::to_string(i), "blue");
  caf::anon_send_exit(victim, caf::exit_reason::kill);
  for (int i = 10; i < 15; ++i)
    f.remove(i % 2 ? "a" : "b", "cm-" + std::to_string(i));
  for (int i = 30; i < 35; ++i)
    f.create("a", "cm-" + std::to_string(i), "blue");

  REQUIRE(rec.wait_for([&](const delta_recorder& r) { return r.state() == f.truth(); }));
  auto deltas = rec.deltas_copy();
  for (const auto& [key, adds] : adds_per_key(deltas))
    CHECK(adds == 1); // nothing the handler already had was added again
  CHECK(rec.synced() == 1);
  CHECK(rec.out_of_order().empty());

  auto stats = f.stats();
  REQUIRE(stats.ok());
  CHECK(stats->restarts == 1);
  REQUIRE(stats->informers.size() == 1);
  CHECK(stats->informers[0].restarts == 1);
  auto replaced = f.get_informer(config_maps());
  CHECK((*replaced)[0].informer != victim);

  REQUIRE(*f.ask<bool>(atoms::wait_sync_atom::value));
  std::map<std::string, std::string> listed;
  auto after = f.list(config_maps());
  REQUIRE(after.ok());
  for (const auto& obj : *after)
    listed[std::string(obj->key())] = std::string(obj->meta().resource_version);
  CHECK(listed == f.truth());

  list_options blue;
  blue.fields = fields("data.value=blue");
  CHECK(f.list(config_maps(), blue)->size() == 15); // 10 updated + 5 created, via the index
}

TEST_CASE("an informer that keeps failing is restarted after growing delays, the cache converges") {
  fixture f;
  for (int i = 0; i < 10; ++i)
    f.create("a", "cm-" + std::to_string(i));
  f.cache(); // restart backoff 5 ms doubling to 40 ms; reset only after 60 s up
  delta_recorder rec;
  f.subscribe(config_maps(), rec);
  REQUIRE(rec.wait_for([&](const delta_recorder& r) { return r.synced() == 1; }));

  std::vector<std::chrono::milliseconds> delays;
  for (int round = 1; round <= 5; ++round) {
    f.update("a", "cm-" + std::to_string(round), "round-" + std::to_string(round));
    f.kill_informer(config_maps());
    auto stats = f.stats();
    REQUIRE(stats.ok());
    REQUIRE(stats->informers.size() == 1);
    CHECK(stats->restarts == static_cast<std::uint64_t>(round));
    CHECK(stats->informers[0].restarts == static_cast<std::uint64_t>(round));
    CHECK_FALSE(stats->informers[0].restart_pending);
    delays.push_back(stats->informers[0].restart_delay);
  }
  CHECK(delays == std::vector<std::chrono::milliseconds>{5ms, 10ms, 20ms, 40ms, 40ms});

  // Converged: the subscription (rebound five times) and the reads agree with the server.
  f.create("a", "late");
  REQUIRE(*f.ask<bool>(atoms::wait_sync_atom::value));
  REQUIRE(rec.wait_for([&](const delta_recorder& r) { return r.state() == f.truth(); }));
  for (const auto& [key, adds] : adds_per_key(rec.deltas_copy()))
    CHECK(adds == 1);
  CHECK(rec.synced() == 1);
  auto listed = f.get(config_maps(), "a", "cm-5");
  REQUIRE(listed.ok());
  CHECK((*listed)->tree().at("data").at("value").as_string() == "round-5");
}

TEST_CASE("an informer that stayed up for reset_after restarts after the initial delay again") {
  fixture f;
  f.create("a", "cm-1");
  auto o = fixture::options();
  o.restart.reset_after = 0ms; // every informer counts as healthy when it fails
  f.cache(o);
  for (int round = 1; round <= 3; ++round) {
    f.kill_informer(config_maps());
    auto stats = f.stats();
    REQUIRE(stats.ok());
    CHECK(stats->informers[0].restarts == static_cast<std::uint64_t>(round));
    CHECK(stats->informers[0].restart_delay == 5ms);
  }
  CHECK(f.list(config_maps())->size() == 1);
}

TEST_CASE("cache errors carry codes a caller can branch on") {
  CHECK(to_string(errc::not_cached) == std::string("not_cached"));
  CHECK(to_string(errc::namespace_not_covered) == std::string("namespace_not_covered"));
  CHECK(to_string(errc::no_index) == std::string("no_index"));
  // They survive the trip through a CAF error, as a remote or blocking caller receives them.
  for (auto code : {errc::not_cached, errc::namespace_not_covered, errc::no_index}) {
    auto back = from_caf_error(to_caf_error(make_error(code, "why")));
    CHECK(back.code == code);
    CHECK(back.message == "why");
  }
  // A code from a newer peer that this build does not know keeps its message only.
  auto unknown = from_caf_error(
      caf::error{200, caf::atom("kinformer"), caf::make_message(std::string("from the future"))});
  CHECK(unknown.code == errc::cancelled);
  CHECK(unknown.message == "from the future");
}

TEST_CASE("reads wait while a failed informer's restart is pending, removing the kind ends them") {
  fixture f;
  f.create("a", "cm-1");
  auto o = fixture::options();
  o.restart.initial = 10min; // the restart never happens during this test
  o.restart.cap = 10min;
  f.cache(o);
  auto set = f.get_informer(config_maps());
  REQUIRE(set.ok());
  REQUIRE(f.list(config_maps()).ok());

  auto victim = (*set)[0].informer;
  caf::scoped_actor watcher{*f.system};
  watcher->monitor(victim);
  caf::anon_send_exit(victim, caf::exit_reason::kill);
  watcher->receive([](const caf::down_msg&) {});
  // The cache's own down message may still be on its way: ask until the cache has seen it.
  auto stats = f.stats();
  for (int asked = 1; stats.ok() && !stats->informers.empty() &&
                      !stats->informers[0].restart_pending && asked < 100'000;
       ++asked)
    stats = f.stats();
  REQUIRE(stats.ok());
  REQUIRE(stats->informers.size() == 1);
  CHECK(stats->informers[0].restart_pending);
  CHECK(stats->informers[0].restart_delay == 10min);
  CHECK(stats->informers[0].restarts == 0);
  CHECK_FALSE(stats->informers[0].stats.synced);

  // Neither fails while the replacement is pending: both wait for it.
  caf::scoped_actor reader{*f.system};
  auto listing = reader->request(f.cache(), caf::infinite, atoms::list_atom::value,
                                 cache_list_request{config_maps(), {}});
  auto syncing = reader->request(f.cache(), caf::infinite, atoms::wait_sync_atom::value);
  CHECK(*f.ask<bool>(atoms::remove_informer_atom::value, config_maps()));
  listing.receive([](const object_list&) { FAIL("a list answered without an informer"); },
                  [](const caf::error& err) {
                    auto e = from_caf_error(err);
                    CHECK(e.code == errc::not_cached);
                    CHECK(e.message.find("were removed while a read waited") != std::string::npos);
                  });
  syncing.receive([](bool synced) { CHECK(synced); }, // no informers left to wait for
                  [](const caf::error&) { FAIL("wait_sync failed"); });
  CHECK(f.stats()->informers.empty());
}
