// The blocking cache facade against the cache actor and the embedded simulator: reads, informer
// start and removal, sync, field indexes, event handlers that can be removed, stats, and clear
// errors for what the cache refuses.

#include "actors/actor_system_setup.hpp"
#include "actors/cache.hpp"
#include "actors/cache_client.hpp"
#include "actors/interfaces.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "tests/support/delta_recorder.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <future>
#include <thread>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::testing::delta_recorder;

namespace {

const group_version_resource configmaps{"", "v1", "configmaps"};

kind_request config_map_kind() {
  kind_request k;
  k.kind = {"", "v1", "ConfigMap"};
  return k;
}

std::string config_map(const std::string& ns, const std::string& name, const std::string& value) {
  boost::json::object obj{{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata", {{"name", name}, {"namespace", ns}}},
                          {"data", {{"value", value}}}};
  return boost::json::serialize(obj);
}

struct fixture {
  sim::simulator server;
  std::shared_ptr<api_client> client;

  fixture() : server(quiet()) {
    REQUIRE(server.start().ok());
    auto created = api_client::create(*from_server_url(server.url()));
    REQUIRE(created.ok());
    client = std::move(created).value();
  }
  ~fixture() { server.stop(); }

  static sim::simulator_options quiet() {
    sim::simulator_options o;
    o.bookmark_interval = 200ms;
    return o;
  }

  void create(const std::string& ns, const std::string& name, const std::string& value = "v") {
    REQUIRE(server.store().create(configmaps, ns, config_map(ns, name, value)).ok());
  }
  void update(const std::string& ns, const std::string& name, const std::string& value) {
    REQUIRE(server.store().update(configmaps, ns, name, config_map(ns, name, value)).ok());
  }

  std::map<std::string, std::string> truth() {
    std::map<std::string, std::string> out;
    for (auto& v : server.store().truth(configmaps))
      out[v.key] = std::to_string(v.resource_version);
    return out;
  }

  static cache_options options() {
    cache_options o;
    o.retry.initial = 20ms;
    o.retry.cap = 200ms;
    return o;
  }
};

handler_callbacks recording(delta_recorder& rec) {
  handler_callbacks cb;
  cb.on_delta = [&rec](const delta& d) { rec.record(d); };
  cb.on_synced = [&rec] { rec.mark_synced(); };
  return cb;
}

} // namespace

TEST_CASE("the facade reads through the cache after it has synced") {
  fixture f;
  f.create("default", "one", "1");
  f.create("default", "two", "2");
  f.create("other", "three", "3");
  cache_client cache(f.client, fixture::options());

  auto informers = cache.get_informer(config_map_kind());
  REQUIRE(informers.ok());
  REQUIRE(informers->namespaces == std::vector<std::string>{""});
  REQUIRE(informers->handles);
  CHECK(informers->handles->size() == 1);
  REQUIRE(cache.wait_for_cache_sync(10s).ok());

  auto one = cache.get(config_map_kind(), "default", "one");
  REQUIRE(one.ok());
  REQUIRE(*one);
  CHECK((*one)->tree().at("data").at("value") == "1");

  auto missing = cache.get(config_map_kind(), "default", "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.err().code == errc::not_found);

  CHECK(cache.list(config_map_kind())->size() == 3);
  list_options in_default;
  in_default.namespace_ = "default";
  CHECK(cache.list(config_map_kind(), in_default)->size() == 2);

  auto stats = cache.stats();
  REQUIRE(stats.ok());
  REQUIRE(stats->informers.size() == 1);
  CHECK(stats->informers[0].stats.synced);
  CHECK(stats->informers[0].stats.objects == 3);
}

// A user's thread (a worker pool, say) that read through the facade may outlive it: the facade's
// actor system must still stop (CAF pins its logger to every thread that used it).
TEST_CASE("the facade stops while a thread that read through it lives on") {
  fixture f;
  f.create("default", "one", "1");
  auto cache = std::make_unique<cache_client>(f.client, fixture::options());
  std::promise<void> release;
  std::promise<bool> read;
  std::thread reader([&, released = release.get_future()] {
    read.set_value(cache->wait_for_cache_sync(10s).ok() && cache->list(config_map_kind()).ok());
    released.wait();
  });
  const bool read_ok = read.get_future().get();
  auto stopped = std::async(std::launch::async, [&] { cache.reset(); });
  const bool stopped_in_time = stopped.wait_for(10s) == std::future_status::ready;
  release.set_value(); // a facade that waits for the reader to end stops now
  reader.join();
  stopped.get();
  CHECK(read_ok);
  CHECK(stopped_in_time);
}

TEST_CASE("the facade adds field indexes and removes informers") {
  fixture f;
  f.create("default", "a", "x");
  f.create("default", "b", "y");
  cache_client cache(f.client, fixture::options());

  // Before the index exists, the cache refuses the field selector with a clear error.
  list_options by_value;
  auto selector = field_selector::parse("data.value=x");
  REQUIRE(selector.ok());
  by_value.fields = *selector;
  REQUIRE(cache.get_informer(config_map_kind()).ok());
  REQUIRE(cache.wait_for_cache_sync(10s).ok());
  auto refused = cache.list(config_map_kind(), by_value);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == errc::no_index);

  REQUIRE(cache.index_field(config_map_kind(), "data.value").ok());
  auto found = cache.list(config_map_kind(), by_value);
  REQUIRE(found.ok());
  REQUIRE(found->size() == 1);
  CHECK(found->front()->key() == "default/a");
  // The same index twice is a conflict.
  CHECK_FALSE(cache.index_field(config_map_kind(), "data.value").ok());

  auto removed = cache.remove_informer(config_map_kind());
  REQUIRE(removed.ok());
  CHECK(*removed);
  auto again = cache.remove_informer(config_map_kind());
  REQUIRE(again.ok());
  CHECK_FALSE(*again);
}

TEST_CASE("an event handler added through the facade converges and can be removed") {
  fixture f;
  for (int i = 0; i < 5; ++i)
    f.create(i % 2 ? "default" : "other", "cm-" + std::to_string(i));
  cache_client cache(f.client, fixture::options());

  delta_recorder rec;
  auto registration = cache.add_event_handler(config_map_kind(), recording(rec));
  REQUIRE(registration.ok());
  REQUIRE(registration->wait_for_sync(10s));
  CHECK(registration->has_synced());
  CHECK(rec.synced() == 1);
  CHECK(rec.deltas_copy().size() == 5);

  f.update("default", "cm-1", "changed");
  REQUIRE(rec.wait_for([&](const delta_recorder& r) { return r.state() == f.truth(); }));

  REQUIRE(cache.remove_event_handler(*registration).ok());
  auto seen = rec.deltas_copy().size();
  f.update("default", "cm-3", "unseen");
  // A direct read shows the cache has the update; the removed handler never ran again.
  auto key_has = [&] {
    auto obj = cache.get(config_map_kind(), "default", "cm-3");
    return obj.ok() && (*obj)->tree().at("data").at("value") == "unseen";
  };
  delta_recorder probe;
  auto second = cache.add_event_handler(config_map_kind(), recording(probe));
  REQUIRE(second.ok());
  REQUIRE(probe.wait_for([&](const delta_recorder& r) { return r.state() == f.truth(); }));
  CHECK(key_has());
  CHECK(rec.deltas_copy().size() == seen);
  REQUIRE(cache.remove_event_handler(*second).ok());
}

TEST_CASE("the facade reports what the cache refuses as errors") {
  fixture f;
  cache_client cache(f.client, fixture::options());

  kind_request unknown;
  unknown.kind = {"example.com", "v1", "NoSuchKind"};
  auto informers = cache.get_informer(unknown);
  REQUIRE_FALSE(informers.ok());
  CHECK_FALSE(informers.err().message.empty());

  delta_recorder rec;
  auto registration = cache.add_event_handler(unknown, recording(rec));
  REQUIRE_FALSE(registration.ok());

  auto listed = cache.list(unknown);
  REQUIRE_FALSE(listed.ok());

  CHECK(cache.remove_event_handler(event_registration{}).err().code == errc::invalid_argument);
}

TEST_CASE("the facade borrows an actor system and a cache") {
  fixture f;
  f.create("default", "cm", "v");
  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system system{cfg};
  auto actor = spawn_cache(system, f.client, fixture::options());
  {
    cache_client cache(system, caf::actor_cast<caf::actor>(actor));
    REQUIRE(cache.get_informer(config_map_kind()).ok());
    REQUIRE(cache.wait_for_cache_sync(10s).ok());
    CHECK(cache.list(config_map_kind())->size() == 1);
  }
  // The borrowed cache is still running after the facade is gone.
  caf::scoped_actor self{system};
  bool synced = false;
  self->request(actor, 10s, atoms::wait_sync_atom::value)
      .receive([&](bool value) { synced = value; },
               [&](caf::error& err) { FAIL(system.render(err)); });
  CHECK(synced);
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}
