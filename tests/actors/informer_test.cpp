// The informer actors against the embedded simulator: list, watch, fan-out, late subscribers,
// slow handlers, and convergence under every fault the simulator injects.

#include "actors/actor_system_setup.hpp"
#include "actors/error_bridge.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "tests/support/delta_recorder.hpp"
#include "tests/support/sim_actor_fixture.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <optional>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::testing::delta_recorder;

namespace {

const group_version_resource configmaps{"", "v1", "configmaps"};

std::string config_map(const std::string& ns, const std::string& name, const std::string& value,
                       const std::string& app = "demo") {
  boost::json::object obj{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", app}}}}},
      {"data", {{"value", value}}}};
  return boost::json::serialize(obj);
}

// One simulator, one HTTP client, one actor system: what every test here starts from.
struct fixture : kinformer::testing::sim_actor_fixture {
  using sim_actor_fixture::sim_actor_fixture;

  sim::storage& store() { return server.store(); }

  void create(const std::string& ns, const std::string& name, const std::string& value = "v") {
    auto r = store().create(configmaps, ns, config_map(ns, name, value));
    REQUIRE(r.ok());
  }
  void update(const std::string& ns, const std::string& name, const std::string& value) {
    auto r = store().update(configmaps, ns, name, config_map(ns, name, value));
    REQUIRE(r.ok());
  }
  void remove(const std::string& ns, const std::string& name) {
    auto r = store().remove(configmaps, ns, name);
    REQUIRE(r.ok());
  }

  // The simulator's truth as key -> resourceVersion.
  std::map<std::string, std::string> truth() {
    std::map<std::string, std::string> out;
    for (auto& v : store().truth(configmaps))
      out[v.key] = std::to_string(v.resource_version);
    return out;
  }

  informer_config config_maps_config() {
    informer_config c;
    c.resource = configmaps;
    c.kind = "ConfigMap";
    c.watch.page_size = 7; // several pages even for small tests
    c.watch.min_watch_timeout = 300s;
    c.watch.max_watch_timeout = 600s;
    c.retry.initial = 20ms; // fast retries keep fault tests quick
    c.retry.cap = 200ms;
    return c;
  }

  informer_actor informer(informer_config c) {
    auto inf = spawn_informer(*system, client, std::move(c));
    spawned.push_back(caf::actor_cast<caf::actor>(inf));
    return inf;
  }

  handler_actor handler(informer_actor inf, delta_recorder& rec, subscription_options o = {}) {
    handler_callbacks cb;
    cb.on_delta = [&rec](const delta& d) { rec.record(d); };
    cb.on_synced = [&rec] { rec.mark_synced(); };
    auto h = spawn_handler(*system, std::move(inf), std::move(cb), std::move(o));
    spawned.push_back(caf::actor_cast<caf::actor>(h));
    return h;
  }

  // `count` config maps cm-0... in "default", then an informer of them whose handler `rec` has
  // synced.
  informer_actor synced_over(int count, delta_recorder& rec) {
    for (int i = 0; i < count; ++i)
      create("default", "cm-" + std::to_string(i));
    auto inf = informer(config_maps_config());
    handler(inf, rec);
    REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
    return inf;
  }

  // Waits until `inf` counts `n` subscriptions (a handler subscribes itself once spawned).
  bool has_subscriptions(const informer_actor& inf, std::size_t n);

  // Waits until the handler's folded state equals the simulator's truth.
  bool converges(delta_recorder& rec, std::chrono::milliseconds timeout = 20s) {
    return rec.wait_for([&](const delta_recorder& r) { return r.state() == truth(); }, timeout);
  }
};

template <class T, class... Ts>
T request(caf::actor_system& sys, const informer_actor& inf, Ts&&... xs) {
  caf::scoped_actor self{sys};
  T out{};
  self->request(inf, caf::infinite, std::forward<Ts>(xs)...)
      .receive([&](T value) { out = std::move(value); },
               [&](caf::error& err) { FAIL(sys.render(err)); });
  return out;
}

bool fixture::has_subscriptions(const informer_actor& inf, std::size_t n) {
  for (int i = 0; i < 200; ++i) {
    if (request<informer_stats>(*system, inf, atoms::stats_atom::value).subscriptions == n)
      return true;
    caf::scoped_actor self{*system};
    self->receive(caf::after(10ms) >> [] {});
  }
  return false;
}

} // namespace

TEST_CASE("an informer lists in pages, then watches, and a handler converges") {
  fixture f;
  for (int i = 0; i < 20; ++i)
    f.create(i % 2 ? "default" : "kube-system", "cm-" + std::to_string(i));
  auto inf = f.informer(f.config_maps_config());
  delta_recorder rec;
  f.handler(inf, rec);
  REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  {
    auto deltas = rec.deltas_copy();
    REQUIRE(deltas.size() == 20);
    for (auto& d : deltas) {
      CHECK(d.type == delta_type::added);
      CHECK(d.initial_list);
    }
  }
  f.update("default", "cm-1", "changed");
  f.remove("kube-system", "cm-0");
  f.create("default", "cm-new");
  REQUIRE(f.converges(rec));
  auto deltas = rec.deltas_copy();
  CHECK(rec.out_of_order().empty());
  CHECK(std::count_if(deltas.begin(), deltas.end(), [](const delta& d) {
          return d.type == delta_type::deleted && d.object->key() == "kube-system/cm-0";
        }) == 1);
  auto updated = std::find_if(deltas.begin(), deltas.end(), [](const delta& d) {
    return d.type == delta_type::updated && d.object->key() == "default/cm-1";
  });
  REQUIRE(updated != deltas.end());
  REQUIRE(updated->old_object);
  CHECK_FALSE(updated->initial_list);

  CHECK(request<bool>(*f.system, inf, atoms::wait_sync_atom::value));
  auto one =
      request<object_ptr>(*f.system, inf, atoms::get_atom::value, std::string("default/cm-1"));
  REQUIRE(one);
  CHECK(one->tree().at("data").at("value") == "changed");
  list_options only_default;
  only_default.namespace_ = "default";
  auto listed = request<object_list>(*f.system, inf, atoms::list_atom::value, only_default);
  CHECK(listed.size() == 11);
}

TEST_CASE("a relist hands on its unchanged items as the objects stored") {
  // A relist whose first page fails once is retried, and the retry hands them on as well.
  const bool first_page_fails = GENERATE(false, true);
  fixture f;
  delta_recorder rec;
  auto inf = f.synced_over(20, rec);
  CHECK(request<informer_stats>(*f.system, inf, atoms::stats_atom::value).list_items_reused == 0);
  // An event through the watch: it is open, so the stall below holds it.
  f.create("default", "marker");
  REQUIRE(f.converges(rec));

  // Changes the watch never carries (its stream is held, then dropped): the relist lists the
  // update, and its end infers the delete, so converging means the relist is done.
  f.server.stall_watches();
  f.update("default", "cm-3", "changed");
  f.remove("default", "cm-19");
  if (first_page_fails)
    f.store().fail_next_lists(1, 500);
  f.store().fail_next_watches(1);
  // The informer fills the slot when the reflector reports the list started, which reaches it
  // before the list's first bytes come from a real server. The simulator answers at once, and
  // under TSan on a busy machine all 3 pages were once decoded first (none reused): a server
  // that takes its time, as a real one does, keeps the test to what it checks.
  f.server.set_latency(300ms);
  f.server.drop_watches();
  REQUIRE(f.converges(rec));
  f.server.set_latency(0ms);
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  CHECK(stats.relists == 1);
  CHECK(stats.retries == (first_page_fails ? 2 : 1)); // the watch's 410 is one
  // The 19 unchanged items came back from the list as the objects stored; at most the first
  // page (7), if it was decoded before the informer filled the slot, was made anew.
  CHECK(stats.list_items_reused >= 19 - 7);
  CHECK(stats.list_items_reused <= 19);
  auto after =
      request<object_ptr>(*f.system, inf, atoms::get_atom::value, std::string("default/cm-3"));
  REQUIRE(after);
  CHECK(after->tree().at("data").at("value") == "changed");
}

TEST_CASE("a late subscriber gets the stored objects flagged initial, then synced") {
  fixture f;
  delta_recorder first;
  auto inf = f.synced_over(5, first);
  f.create("default", "cm-after-sync");
  REQUIRE(f.converges(first));

  delta_recorder late;
  f.handler(inf, late);
  REQUIRE(late.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  auto deltas = late.deltas_copy();
  REQUIRE(deltas.size() == 6);
  for (auto& d : deltas) {
    CHECK(d.type == delta_type::added);
    CHECK(d.initial_list);
  }
  f.update("default", "cm-2", "x");
  REQUIRE(f.converges(late));
  REQUIRE(f.converges(first));
}

TEST_CASE("a handler that subscribes while the first list arrives gets every listed object") {
  fixture f;
  // The informer's own lists all fail: the test plays its reflector, one message at a time.
  f.store().fail_next_lists(1000000, 500);
  auto inf = f.informer(f.config_maps_config());
  auto make = [](const std::string& name) {
    auto obj = object::parse(config_map("default", name, "v"));
    REQUIRE(obj.ok());
    return *obj;
  };
  const std::uint64_t list = 1000;
  caf::anon_send(inf, atoms::list_batch_atom::value, list, object_list{make("a"), make("b")});
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  REQUIRE(stats.objects == 2); // the first batch is stored; the list is not over
  REQUIRE(!stats.synced);

  delta_recorder rec;
  f.handler(inf, rec);
  REQUIRE(f.has_subscriptions(inf, 1));
  caf::anon_send(inf, atoms::replace_atom::value, list, object_list{make("c")}, std::string("7"));

  REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  std::set<std::string> keys;
  for (const auto& [key, version] : rec.state())
    keys.insert(key);
  CHECK(keys == std::set<std::string>{"default/a", "default/b", "default/c"});
}

TEST_CASE("a slow handler neither blocks the informer nor a fast handler, and converges") {
  fixture f;
  for (int i = 0; i < 10; ++i)
    f.create("default", "cm-" + std::to_string(i));
  auto inf = f.informer(f.config_maps_config());
  delta_recorder fast;
  f.handler(inf, fast);

  // The slow handler blocks in its first callback until the test opens the gate.
  std::promise<void> gate;
  auto opened = gate.get_future().share();
  delta_recorder slow;
  handler_callbacks cb;
  cb.on_delta = [&slow, opened](const delta& d) {
    opened.wait();
    slow.record(d);
  };
  cb.on_synced = [&slow] { slow.mark_synced(); };
  subscription_options small;
  small.queue_bound = 4;
  small.window = 2;
  small.max_batch = 1;
  REQUIRE(fast.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  auto h = spawn_handler(*f.system, inf, std::move(cb), small);
  f.spawned.push_back(caf::actor_cast<caf::actor>(h));

  // Many updates of few keys while the slow handler is stuck.
  for (int round = 0; round < 20; ++round)
    for (int i = 0; i < 10; ++i)
      f.update("default", "cm-" + std::to_string(i), "r" + std::to_string(round));
  REQUIRE(f.converges(fast));
  gate.set_value();
  REQUIRE(f.converges(slow));
  CHECK(slow.out_of_order().empty());
  // Coalescing means the slow handler saw fewer deltas than the fast one, and it is counted.
  CHECK(slow.deltas_copy().size() < fast.deltas_copy().size());
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  REQUIRE(stats.queues.size() == 2);
  std::uint64_t coalesced = 0;
  for (auto& q : stats.queues)
    coalesced += q.coalesced;
  CHECK(coalesced > 0);
  CHECK(stats.synced);
  CHECK(stats.objects == 10);
}

TEST_CASE("a replaced version is kept for a waiting handler only if it reads old objects") {
  const auto keep = GENERATE(old_object_policy::keep::all, old_object_policy::keep::none);
  fixture f;
  f.create("default", "gate");
  f.create("default", "cm");
  auto c = f.config_maps_config();
  c.change_window = 0; // a window keeps the versions it replays
  auto inf = f.informer(c);
  REQUIRE(request<bool>(*f.system, inf, atoms::wait_sync_atom::value));
  subscription_options from_now;
  from_now.from_now = true; // no initial deltas, which would hold the first versions
  from_now.old_objects.which = old_object_policy::keep::none;
  delta_recorder seen;
  f.handler(inf, seen, from_now);

  // A handler stuck in its first delivery, so that every later delta waits in the informer.
  std::promise<void> gate;
  auto opened = gate.get_future().share();
  handler_callbacks cb;
  cb.on_delta = [opened](const delta&) { opened.wait(); };
  subscription_options stuck = from_now;
  stuck.window = 1;
  stuck.max_batch = 1;
  stuck.old_objects.which = keep;
  auto h = spawn_handler(*f.system, inf, std::move(cb), stuck);
  f.spawned.push_back(caf::actor_cast<caf::actor>(h));
  REQUIRE(f.has_subscriptions(inf, 2));

  std::weak_ptr<const object> first =
      request<object_ptr>(*f.system, inf, atoms::get_atom::value, std::string("default/cm"));
  REQUIRE_FALSE(first.expired());
  f.update("default", "gate", "shut");
  f.update("default", "cm", "v2");
  REQUIRE(seen.wait_for([](const delta_recorder& r) { return r.deltas().size() == 2; }));
  for (const auto& d : seen.deltas_copy()) {
    CHECK(d.type == delta_type::updated);
    CHECK(d.old_object == nullptr);
  }
  // The store dropped the first version; only the stuck handler's waiting delta could keep it.
  CHECK(first.expired() == (keep == old_object_policy::keep::none));
  gate.set_value();
}

TEST_CASE("old object policies keep what each reader needs") {
  auto pod = [](std::string labels) {
    auto obj = object::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",)"
                             R"("namespace":"ns","resourceVersion":"1","labels":)" +
                             labels + "}}");
    REQUIRE(obj);
    return *obj;
  };
  auto canary = pod(R"({"track":"canary"})");
  auto stable = pod(R"({"track":"stable"})");
  old_object_policy policy;
  CHECK(policy.keeps(*stable)); // by default, every one (OnUpdate reads it)
  policy.which = old_object_policy::keep::none;
  CHECK_FALSE(policy.keeps(*canary));
  policy.which = old_object_policy::keep::selected;
  policy.labels = *label_selector::parse("track=canary");
  CHECK(policy.keeps(*canary));
  CHECK_FALSE(policy.keeps(*stable));
  policy.fields = *field_selector::parse("metadata.name=other");
  CHECK_FALSE(policy.keeps(*canary));
}

TEST_CASE("a resync period delivers synthetic sync deltas") {
  fixture f;
  f.create("default", "cm-0");
  auto inf = f.informer(f.config_maps_config());
  delta_recorder rec;
  subscription_options o;
  o.resync_period = 50ms;
  f.handler(inf, rec, o);
  REQUIRE(rec.wait_for([](const delta_recorder& r) {
    return std::count_if(r.deltas().begin(), r.deltas().end(),
                         [](const delta& d) { return d.type == delta_type::sync; }) >= 2;
  }));
}

namespace {

// Runs churn on one thread while `fault` is injected, then checks convergence.
void converges_under(fixture& f, const std::function<void()>& fault, informer_config c) {
  for (int i = 0; i < 30; ++i)
    f.create("default", "cm-" + std::to_string(i));
  auto inf = f.informer(std::move(c));
  delta_recorder rec;
  f.handler(inf, rec);
  REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));

  // Deletes and updates while the informer is cut off, plus some after.
  fault();
  for (int i = 0; i < 10; ++i)
    f.remove("default", "cm-" + std::to_string(i));
  for (int i = 10; i < 20; ++i)
    f.update("default", "cm-" + std::to_string(i), "after-fault");
  for (int i = 30; i < 35; ++i)
    f.create("default", "cm-" + std::to_string(i));
  fault();
  f.update("default", "cm-25", "last");

  REQUIRE(f.converges(rec, 30s));
  CHECK(rec.out_of_order().empty());
  // Every removed object was delivered as deleted.
  auto deleted = rec.deltas_copy();
  for (int i = 0; i < 10; ++i) {
    auto key = "default/cm-" + std::to_string(i);
    CHECK(std::any_of(deleted.begin(), deleted.end(), [&](const delta& d) {
      return d.type == delta_type::deleted && d.object->key() == key;
    }));
  }
  // The store itself equals the truth too.
  auto snapshot = request<store_snapshot>(*f.system, inf, atoms::snapshot_atom::value);
  std::map<std::string, std::string> stored;
  for (auto& obj : snapshot.list())
    stored[std::string(obj->key())] = std::string(obj->meta().resource_version);
  CHECK(stored == f.truth());
}

} // namespace

TEST_CASE("convergence when every watch is dropped") {
  fixture f;
  converges_under(
      f, [&] { f.server.drop_watches(); }, f.config_maps_config());
}

TEST_CASE("convergence when watches fail with 410 Gone and the history is compacted") {
  fixture f;
  converges_under(
      f,
      [&] {
        f.store().fail_next_watches(2);
        f.store().compact();
        f.server.drop_watches();
      },
      f.config_maps_config());
}

TEST_CASE("convergence after an etcd restore (every old resourceVersion is gone)") {
  fixture f;
  converges_under(
      f,
      [&] {
        f.store().restore();
        f.server.drop_watches();
      },
      f.config_maps_config());
}

TEST_CASE("convergence when lists fail with 500 and 429, deletes inferred on relist") {
  fixture f;
  int round = 0;
  converges_under(
      f,
      [&] {
        // Compaction forces a relist; the relist then fails first with 500, later with 429.
        f.store().compact();
        if (round++ == 0)
          f.store().fail_next_lists(2, 500);
        else
          f.store().fail_next_lists(2, 429, 0);
        f.store().fail_next_watches(1);
        f.server.drop_watches();
      },
      f.config_maps_config());
}

TEST_CASE("convergence when a watch stalls") {
  sim::simulator_options o;
  o.bookmark_interval = 60s; // nothing on the wire while stalled
  fixture f(o);
  auto c = f.config_maps_config();
  c.watch.stall_timeout = 300ms;
  converges_under(
      f, [&] { f.server.stall_watches(); }, c);
}

TEST_CASE("streaming lists sync and converge") {
  fixture f;
  auto c = f.config_maps_config();
  c.watch.streaming_list = true;
  converges_under(
      f, [&] { f.server.drop_watches(); }, c);
}

TEST_CASE("metadata-only informers store PartialObjectMetadata") {
  fixture f;
  f.create("default", "cm-0", "a-value-only-the-full-object-has");
  auto c = f.config_maps_config();
  c.metadata_only = true;
  auto inf = f.informer(c);
  delta_recorder rec;
  f.handler(inf, rec);
  REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  f.update("default", "cm-0", "changed");
  REQUIRE(f.converges(rec));
  for (auto& d : rec.deltas_copy()) {
    CHECK(d.object->kind() == "PartialObjectMetadata");
    CHECK(d.object->tree().as_object().count("data") == 0);
    CHECK(d.object->meta().label("app") == "demo");
  }
}

TEST_CASE("metadata-only informers keep their objects' text compressed unless told not to") {
  fixture f;
  for (int i = 0; i < 6; ++i)
    f.create("default", "cm-" + std::to_string(i));
  for (std::optional<bool> compress : {std::optional<bool>(), std::optional<bool>(false)}) {
    INFO((compress ? "compress_objects = false" : "compress_objects unset"));
    auto c = f.config_maps_config();
    c.metadata_only = true;
    c.compress_objects = compress;
    c.packing.samples = 2; // the first two train the dictionary, the rest are packed
    auto inf = f.informer(c);
    delta_recorder rec;
    f.handler(inf, rec);
    REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
    std::size_t packed = 0;
    for (auto& d : rec.deltas_copy()) {
      packed += d.object->packed() ? 1 : 0;
      CHECK(d.object->kind() == "PartialObjectMetadata");
      CHECK(d.object->meta().label("app") == "demo");
    }
    CHECK(packed == (compress ? 0u : 4u));
  }
}

TEST_CASE("a transform runs on every object before it is stored") {
  fixture f;
  f.create("default", "cm-0");
  auto c = f.config_maps_config();
  c.transform = std::make_shared<const object_transform>([](boost::json::value& v) {
    v.as_object().erase("data");
    v.as_object()["metadata"].as_object()["annotations"] = {{"transformed", "yes"}};
  });
  auto inf = f.informer(c);
  delta_recorder rec;
  f.handler(inf, rec);
  REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  f.update("default", "cm-0", "changed"); // arrives through the watch, not the list
  REQUIRE(f.converges(rec));
  auto deltas = rec.deltas_copy();
  REQUIRE(deltas.size() == 2);
  for (auto& d : deltas) {
    CHECK(d.object->tree().as_object().count("data") == 0);
    CHECK(d.object->meta().annotation("transformed") == "yes");
  }
}

TEST_CASE("index functions added through the actor answer by_index on snapshots") {
  fixture f;
  for (int i = 0; i < 6; ++i)
    f.create(i % 2 ? "default" : "kube-system", "cm-" + std::to_string(i), i < 3 ? "low" : "high");
  auto inf = f.informer(f.config_maps_config());
  CHECK(request<bool>(*f.system, inf, atoms::wait_sync_atom::value));
  index_func by_value = [](const object& obj) -> std::vector<std::string> {
    auto v = field_value(obj, "data.value");
    return v ? std::vector<std::string>{*v} : std::vector<std::string>{};
  };
  CHECK(
      request<bool>(*f.system, inf, atoms::add_index_atom::value, std::string("value"), by_value));
  auto snapshot = request<store_snapshot>(*f.system, inf, atoms::snapshot_atom::value);
  auto high = snapshot.by_index("value", "high");
  REQUIRE(high.ok());
  CHECK(high->size() == 3);
  auto in_default = snapshot.by_index(std::string(namespace_index_name), "default");
  REQUIRE(in_default.ok());
  CHECK(in_default->size() == 3);

  // A second index under the same name is refused with a clear error.
  caf::scoped_actor self{*f.system};
  bool refused = false;
  self->request(inf, caf::infinite, atoms::add_index_atom::value, std::string("value"), by_value)
      .receive([](bool) {}, [&](caf::error&) { refused = true; });
  CHECK(refused);
}

TEST_CASE("a handler that goes away is unsubscribed, and the informer carries on") {
  fixture f;
  f.create("default", "cm-0");
  auto inf = f.informer(f.config_maps_config());
  delta_recorder leaving, staying;
  auto gone = f.handler(inf, leaving);
  f.handler(inf, staying);
  REQUIRE(leaving.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  REQUIRE(staying.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  REQUIRE(request<informer_stats>(*f.system, inf, atoms::stats_atom::value).subscriptions == 2);

  // The handler's exit sends the unsubscribe; ask until the informer has processed it.
  caf::anon_send_exit(gone, caf::exit_reason::user_shutdown);
  std::size_t subscriptions = 2;
  for (int attempt = 0; attempt < 100000 && subscriptions != 1; ++attempt)
    subscriptions = request<informer_stats>(*f.system, inf, atoms::stats_atom::value).subscriptions;
  CHECK(subscriptions == 1);

  f.update("default", "cm-0", "after");
  REQUIRE(f.converges(staying));
  CHECK(leaving.deltas_copy().size() == 1);
}

namespace {

// The deltas of one kind, as "key" in arrival order.
std::vector<std::string> keys_of(const std::vector<delta>& deltas, delta_type type) {
  std::vector<std::string> out;
  for (const auto& d : deltas)
    if (d.type == type)
      out.push_back(std::string(d.object->key()));
  return out;
}

// Subscribes a throwaway handler with `options`; the informer's refusal, if it refuses.
std::optional<error> subscribe_error(fixture& f, const informer_actor& inf,
                                     subscription_options options) {
  caf::scoped_actor self{*f.system};
  auto handler = f.system->spawn([]() -> handler_actor::behavior_type {
    return {[](atoms::deliver_atom, subscription_id, const delta_batch&) {},
            [](atoms::synced_atom, subscription_id) {}};
  });
  f.spawned.push_back(caf::actor_cast<caf::actor>(handler));
  std::optional<error> out;
  self->request(inf, caf::infinite, atoms::subscribe_atom::value, handler, std::move(options))
      .receive([](subscription_id) {}, [&](caf::error& err) { out = from_caf_error(err); });
  return out;
}

} // namespace

TEST_CASE(
    "a subscription resumed from a resourceVersion is replayed every change since, in order") {
  fixture f;
  for (int i = 0; i < 6; ++i)
    f.create("default", "cm-" + std::to_string(i));
  auto config = f.config_maps_config();
  config.change_window = 64;
  auto inf = f.informer(config);
  delta_recorder watcher; // tells when the informer has applied the simulator's changes
  f.handler(inf, watcher);
  REQUIRE(f.converges(watcher));
  auto listed_at = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  const std::string since = listed_at.resource_version;

  f.remove("default", "cm-1");
  f.remove("default", "cm-2");
  f.remove("default", "cm-3"); // deleted, then re-created
  f.create("default", "cm-3", "again");
  f.update("default", "cm-4", "changed");
  REQUIRE(f.converges(watcher));

  delta_recorder resumed;
  subscription_options options;
  options.resume_from = since;
  f.handler(inf, resumed, options);
  REQUIRE(resumed.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  static const char* names[] = {"added", "updated", "deleted", "sync"};
  std::vector<std::string> replayed;
  std::uint64_t last = std::stoull(since);
  for (const auto& d : resumed.deltas_copy()) {
    CHECK(d.initial_list);
    CHECK_FALSE(d.final_state_unknown);
    replayed.push_back(std::string(names[static_cast<int>(d.type)]) + " " +
                       std::string(d.object->key()));
    // Strictly ascending: a client resuming from any of them has been sent everything below.
    auto rv = std::stoull(std::string(d.object->meta().resource_version));
    CHECK(rv > last);
    last = rv;
    if (d.type == delta_type::updated) {
      REQUIRE(d.old_object);
      CHECK(d.old_object->meta().resource_version != d.object->meta().resource_version);
    }
  }
  // Only what changed: the untouched objects are not sent again.
  CHECK(replayed == std::vector<std::string>{"deleted default/cm-1", "deleted default/cm-2",
                                             "deleted default/cm-3", "added default/cm-3",
                                             "updated default/cm-4"});

  // Resumed from now: nothing changed since.
  auto now = request<informer_stats>(*f.system, inf, atoms::stats_atom::value).resource_version;
  delta_recorder current;
  options.resume_from = now;
  f.handler(inf, current, options);
  REQUIRE(current.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  CHECK(current.deltas_copy().empty());
}

TEST_CASE("a subscription resumed from before the change window is refused") {
  fixture f;
  for (int i = 0; i < 4; ++i)
    f.create("default", "cm-" + std::to_string(i));
  auto config = f.config_maps_config();
  config.change_window = 2;
  auto inf = f.informer(config);
  delta_recorder watcher;
  f.handler(inf, watcher);
  REQUIRE(f.converges(watcher));
  const std::string since =
      request<informer_stats>(*f.system, inf, atoms::stats_atom::value).resource_version;

  subscription_options options;
  options.resume_from = since;
  CHECK_FALSE(subscribe_error(f, inf, options)); // within the window so far

  for (int i = 0; i < 3; ++i)
    f.remove("default", "cm-" + std::to_string(i));
  REQUIRE(f.converges(watcher));

  // Three deletions in a window of two: the first was evicted.
  auto refused = subscribe_error(f, inf, options);
  REQUIRE(refused);
  CHECK(refused->code == errc::expired);
  CHECK(refused->message.find("too old resource version: " + since) != std::string::npos);

  // From the evicted deletion's resourceVersion on, the window is complete.
  auto deleted = watcher.deltas_copy();
  std::string first_deletion;
  for (const auto& d : deleted)
    if (d.type == delta_type::deleted && first_deletion.empty())
      first_deletion = std::string(d.object->meta().resource_version);
  REQUIRE_FALSE(first_deletion.empty());
  delta_recorder resumed;
  options.resume_from = first_deletion;
  f.handler(inf, resumed, options);
  REQUIRE(resumed.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  CHECK(keys_of(resumed.deltas_copy(), delta_type::deleted) ==
        std::vector<std::string>{"default/cm-1", "default/cm-2"});

  options.resume_from = "not-a-number";
  auto bad = subscribe_error(f, inf, options);
  REQUIRE(bad);
  CHECK(bad->code == errc::invalid_argument);
}

TEST_CASE("a subscription resuming before the informer's first list is refused") {
  fixture f;
  auto config = f.config_maps_config();
  config.change_window = 64;
  // Nothing to list from: the informer's first list cannot complete.
  config.resource = group_version_resource{"", "v1", "nothings"};
  auto inf = f.informer(config);
  subscription_options options;
  options.resume_from = "1";
  auto refused = subscribe_error(f, inf, options);
  REQUIRE(refused);
  CHECK(refused->message.find("has not listed yet") != std::string::npos);
}

TEST_CASE("an informer without a change window refuses resumed subscriptions") {
  fixture f;
  f.create("default", "cm-0");
  auto inf = f.informer(f.config_maps_config()); // change_window: 0 by default
  delta_recorder watcher;
  f.handler(inf, watcher);
  REQUIRE(f.converges(watcher));
  f.remove("default", "cm-0");
  REQUIRE(f.converges(watcher));
  subscription_options options;
  options.resume_from =
      request<informer_stats>(*f.system, inf, atoms::stats_atom::value).resource_version;
  auto refused = subscribe_error(f, inf, options);
  REQUIRE(refused);
  CHECK(refused->code == errc::expired);
  CHECK(refused->message.find("change_window is 0") != std::string::npos);
}

TEST_CASE("a versioned list comes with the version of the snapshot its items were read from") {
  fixture f;
  for (int i = 0; i < 12; ++i)
    f.create(i % 2 ? "default" : "other", "cm-" + std::to_string(i));
  auto inf = f.informer(f.config_maps_config());
  delta_recorder watcher;
  f.handler(inf, watcher);
  REQUIRE(f.converges(watcher));
  f.update("default", "cm-1", "newest");
  REQUIRE(f.converges(watcher));

  list_options all;
  auto listed = request<versioned_list>(*f.system, inf, atoms::list_atom::value, all,
                                        atoms::snapshot_atom::value);
  std::map<std::string, std::string> items;
  std::uint64_t newest = 0;
  for (const auto& obj : listed.items) {
    items[std::string(obj->key())] = std::string(obj->meta().resource_version);
    newest =
        std::max<std::uint64_t>(newest, std::stoull(std::string(obj->meta().resource_version)));
  }
  CHECK(items == f.truth());
  // Nothing in the list is newer than its version, and the version is the store's own.
  CHECK(std::stoull(listed.resource_version) >= newest);
  CHECK(listed.resource_version ==
        request<informer_stats>(*f.system, inf, atoms::stats_atom::value).resource_version);

  list_options one_namespace;
  one_namespace.namespace_ = "other";
  one_namespace.limit = 2;
  auto page = request<versioned_list>(*f.system, inf, atoms::list_atom::value, one_namespace,
                                      atoms::snapshot_atom::value);
  CHECK(page.items.size() == 2);
  for (const auto& obj : page.items)
    CHECK(obj->meta().namespace_ == "other");
  CHECK(page.resource_version == listed.resource_version);
}
