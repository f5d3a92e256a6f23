// The subscription relay against real informers on the embedded simulator: one ordered stream
// and one synced over two informers, reconciliation after an informer is killed and replaced
// (no duplicate adds, updates and final-state-unknown deletes for what changed while it was
// down), end-to-end credit behind a slow handler, and the relay's end.

#include "actors/actor_system_setup.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "actors/subscription_relay.hpp"
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
#include <set>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::testing::delta_recorder;

namespace {

const group_version_resource configmaps{"", "v1", "configmaps"};
constexpr subscription_id relay_id = 42;

std::string config_map(const std::string& ns, const std::string& name, const std::string& value) {
  boost::json::object obj{{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata", {{"name", name}, {"namespace", ns}}},
                          {"data", {{"value", value}}}};
  return boost::json::serialize(obj);
}

// Stands in for the cache supervisor: answers one subscribe by spawning a relay over fixed
// informers and hands the relay to the test; forwards unsubscribe to it.
caf::behavior relaying_cache(caf::event_based_actor* self, std::vector<informer_actor> informers,
                             std::shared_ptr<std::promise<relay_actor>> spawned) {
  auto relay = std::make_shared<relay_actor>();
  return {
      [=](atoms::subscribe_atom, const kind_request&, handler_actor handler,
          subscription_options options) -> subscription_id {
        *relay = spawn_subscription_relay(self->system(), relay_id, std::move(handler), informers,
                                          std::move(options));
        spawned->set_value(*relay);
        return relay_id;
      },
      [=](atoms::unsubscribe_atom, subscription_id id) {
        if (*relay)
          caf::anon_send(*relay, atoms::unsubscribe_atom::value, id);
      },
  };
}

struct fixture : kinformer::testing::sim_actor_fixture {
  void create(const std::string& ns, const std::string& name, const std::string& value = "v") {
    REQUIRE(server.store().create(configmaps, ns, config_map(ns, name, value)).ok());
  }
  void update(const std::string& ns, const std::string& name, const std::string& value) {
    REQUIRE(server.store().update(configmaps, ns, name, config_map(ns, name, value)).ok());
  }
  void remove(const std::string& ns, const std::string& name) {
    REQUIRE(server.store().remove(configmaps, ns, name).ok());
  }

  std::map<std::string, std::string> truth() {
    std::map<std::string, std::string> out;
    for (auto& v : server.store().truth(configmaps))
      out[v.key] = std::to_string(v.resource_version);
    return out;
  }

  bool converges(delta_recorder& rec) {
    return rec.wait_for([&](const delta_recorder& r) { return r.state() == truth(); }, 20s);
  }

  informer_actor informer(const std::string& ns) {
    informer_config c;
    c.resource = configmaps;
    c.kind = "ConfigMap";
    c.namespace_ = ns;
    c.watch.page_size = 3;
    c.watch.min_watch_timeout = 300s;
    c.watch.max_watch_timeout = 600s;
    c.retry.initial = 20ms;
    c.retry.cap = 200ms;
    auto inf = spawn_informer(*system, client, std::move(c));
    spawned.push_back(caf::actor_cast<caf::actor>(inf));
    return inf;
  }

  // A handler subscribed through a stand-in cache that relays `informers`; returns the relay.
  relay_actor subscribe(std::vector<informer_actor> informers, handler_callbacks callbacks,
                        subscription_options options = {}) {
    auto promise = std::make_shared<std::promise<relay_actor>>();
    auto relayed = promise->get_future();
    auto cache = system->spawn(relaying_cache, std::move(informers), promise);
    spawned.push_back(cache);
    auto h = spawn_handler(*system, caf::actor_cast<cache_actor>(cache), kind_request{},
                           std::move(callbacks), std::move(options));
    spawned.push_back(caf::actor_cast<caf::actor>(h));
    REQUIRE(relayed.wait_for(10s) == std::future_status::ready);
    auto relay = relayed.get();
    spawned.push_back(caf::actor_cast<caf::actor>(relay));
    return relay;
  }

  relay_actor subscribe(std::vector<informer_actor> informers, delta_recorder& rec,
                        subscription_options options = {}) {
    return subscribe(std::move(informers), recording(rec), std::move(options));
  }

  static handler_callbacks recording(delta_recorder& rec) {
    handler_callbacks cb;
    cb.on_delta = [&rec](const delta& d) { rec.record(d); };
    cb.on_synced = [&rec] { rec.mark_synced(); };
    return cb;
  }

  // Blocks until `actor` has terminated.
  template <class Handle>
  void wait_down(const Handle& actor) {
    caf::scoped_actor self{*system};
    self->monitor(actor);
    bool down = false;
    self->receive([&](const caf::down_msg&) { down = true; }, caf::after(10s) >> [] {});
    REQUIRE(down);
  }

  object_ptr get(const informer_actor& inf, const std::string& key) {
    caf::scoped_actor self{*system};
    object_ptr out;
    self->request(inf, 10s, atoms::get_atom::value, key)
        .receive([&](object_ptr obj) { out = std::move(obj); },
                 [&](caf::error& err) { FAIL(system->render(err)); });
    return out;
  }

  informer_stats stats(const informer_actor& inf) {
    caf::scoped_actor self{*system};
    informer_stats out;
    self->request(inf, 10s, atoms::stats_atom::value)
        .receive([&](informer_stats s) { out = std::move(s); },
                 [&](caf::error& err) { FAIL(system->render(err)); });
    return out;
  }
};

// Keys the handler was told about twice with no delete in between.
std::vector<std::string> duplicate_adds(const std::vector<delta>& deltas) {
  std::set<std::string> present;
  std::vector<std::string> out;
  for (auto& d : deltas) {
    std::string key(d.object->key());
    if (d.type == delta_type::added && !present.insert(key).second)
      out.push_back(key);
    else if (d.type == delta_type::deleted)
      present.erase(key);
  }
  return out;
}

// Holds a handler's callbacks until opened; opens at the latest when it goes out of scope, so
// that a failed check never leaves a scheduler thread blocked at teardown.
class gate {
public:
  std::shared_future<void> opened() { return opened_; }
  void open() {
    if (!open_) {
      open_ = true;
      promise_.set_value();
    }
  }
  ~gate() { open(); }

private:
  std::promise<void> promise_;
  std::shared_future<void> opened_ = promise_.get_future().share();
  bool open_ = false;
};

std::string version(const object_ptr& obj) {
  return std::string(obj->meta().resource_version);
}

} // namespace

TEST_CASE("a relay merges two informers into one stream with one synced") {
  fixture f;
  for (int i = 0; i < 4; ++i) {
    f.create("a", "cm-" + std::to_string(i));
    f.create("b", "cm-" + std::to_string(i));
  }
  f.create("c", "not-covered");
  auto a = f.informer("a");
  auto b = f.informer("b");
  delta_recorder rec;
  f.subscribe({a, b}, rec);
  REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  auto initial = rec.deltas_copy();
  REQUIRE(initial.size() == 8);
  for (auto& d : initial) {
    CHECK(d.type == delta_type::added);
    CHECK(d.initial_list);
  }
  f.update("a", "cm-1", "x");
  f.remove("b", "cm-2");
  f.create("b", "cm-new");
  auto covered = [&] {
    auto t = f.truth();
    t.erase("c/not-covered");
    return t;
  };
  REQUIRE(rec.wait_for([&](const delta_recorder& r) { return r.state() == covered(); }, 20s));
  CHECK(rec.out_of_order().empty());
  CHECK(duplicate_adds(rec.deltas_copy()).empty());
  CHECK(rec.synced() == 1);
}

TEST_CASE("after an informer is replaced, the relay reconciles without duplicate adds") {
  // A handler that reads old objects, and one that does not (kinformerd's webhook).
  const auto keep = GENERATE(old_object_policy::keep::all, old_object_policy::keep::none);
  const bool reads_old = keep == old_object_policy::keep::all;
  subscription_options options;
  options.old_objects.which = keep;
  fixture f;
  for (int i = 0; i < 5; ++i) {
    f.create("a", "cm-" + std::to_string(i));
    f.create("b", "cm-" + std::to_string(i));
  }
  auto a = f.informer("a");
  auto b = f.informer("b");
  delta_recorder rec;
  auto relay = f.subscribe({a, b}, rec, options);
  REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  f.update("a", "cm-0", "live");
  REQUIRE(f.converges(rec));
  auto before = rec.deltas_copy();
  auto had = [&](const std::string& key) {
    object_ptr last;
    for (auto& d : before)
      if (d.object->key() == key)
        last = d.object;
    return last;
  };
  auto had_cm1 = had("a/cm-1");
  REQUIRE(had_cm1);
  auto had_cm2 = had("a/cm-2");
  REQUIRE(had_cm2);

  // The informer of namespace "a" fails; meanwhile "a" changes.
  caf::anon_send_exit(a, caf::exit_reason::kill);
  f.wait_down(a);
  f.update("a", "cm-1", "changed-while-down");
  f.remove("a", "cm-2");
  f.create("a", "cm-new");
  f.update("b", "cm-0", "b-still-watched");

  auto replacement = f.informer("a");
  caf::anon_send(relay, atoms::rebind_atom::value, std::size_t{0}, replacement);
  REQUIRE(f.converges(rec));
  auto all = rec.deltas_copy();
  std::vector<delta> after(all.begin() + static_cast<std::ptrdiff_t>(before.size()), all.end());
  CHECK(duplicate_adds(all).empty());
  CHECK(rec.out_of_order().empty());
  std::map<std::string, std::vector<delta>> by_key;
  for (auto& d : after)
    by_key[std::string(d.object->key())].push_back(d);

  REQUIRE(by_key["a/cm-1"].size() == 1);
  const auto& changed = by_key["a/cm-1"][0];
  CHECK(changed.type == delta_type::updated);
  if (reads_old) {
    REQUIRE(changed.old_object);
    CHECK(version(changed.old_object) == version(had_cm1));
  } else {
    CHECK(changed.old_object == nullptr);
  }
  CHECK(changed.object->tree().at("data").at("value") == "changed-while-down");

  REQUIRE(by_key["a/cm-2"].size() == 1);
  const auto& gone = by_key["a/cm-2"][0];
  CHECK(gone.type == delta_type::deleted);
  CHECK(gone.final_state_unknown);
  // The last object the handler had, or, when it was not kept, one that names it.
  CHECK(version(gone.object) == version(had_cm2));
  CHECK(gone.object->kind() == "ConfigMap");
  CHECK(gone.object->api_version() == "v1");
  CHECK(gone.object->meta().namespace_ == "a");
  CHECK(gone.object->meta().name == "cm-2");
  CHECK((gone.object == had_cm2) == reads_old);
  CHECK((gone.old_object == had_cm2) == reads_old);
  if (!reads_old)
    CHECK(gone.old_object == nullptr);

  REQUIRE(by_key["a/cm-new"].size() == 1);
  CHECK(by_key["a/cm-new"][0].type == delta_type::added);
  CHECK_FALSE(by_key["a/cm-new"][0].initial_list);

  REQUIRE(by_key["b/cm-0"].size() == 1);
  CHECK(by_key["b/cm-0"][0].type == delta_type::updated);

  // Unchanged objects are not delivered again.
  for (const auto* key : {"a/cm-0", "a/cm-3", "a/cm-4", "b/cm-1"})
    CHECK(by_key[key].empty());
  CHECK(rec.synced() == 1);

  // The replacement's live events flow through the relay.
  f.update("a", "cm-3", "after-rebind");
  REQUIRE(f.converges(rec));
  CHECK(rec.synced() == 1);
  CHECK(duplicate_adds(rec.deltas_copy()).empty());
}

TEST_CASE("a replaced version waits in a relay only for a handler that reads old objects") {
  const auto keep = GENERATE(old_object_policy::keep::all, old_object_policy::keep::none);
  fixture f;
  f.create("a", "gate");
  f.create("a", "cm");
  auto a = f.informer("a"); // no change window: one would keep the versions it replays
  // A direct subscriber that counts and keeps nothing: once it has had both updates after its
  // two initial adds, the informer has applied them.
  auto counted = std::make_shared<std::atomic<int>>(0);
  auto direct_synced = std::make_shared<std::promise<void>>();
  auto both_applied = std::make_shared<std::promise<void>>();
  handler_callbacks counting;
  counting.on_delta = [counted, both_applied](const delta&) {
    if (++*counted == 4)
      both_applied->set_value();
  };
  counting.on_synced = [direct_synced] { direct_synced->set_value(); };
  subscription_options lean;
  lean.old_objects.which = old_object_policy::keep::none;
  handler_actor direct = spawn_handler(*f.system, a, std::move(counting), lean);
  f.spawned.push_back(caf::actor_cast<caf::actor>(direct));
  REQUIRE(direct_synced->get_future().wait_for(10s) == std::future_status::ready);

  // Through the relay, a handler that takes the initial list (and keeps none of it), then is
  // stuck in its next delivery, so that every later delta waits in the informer.
  gate blocked;
  auto opened = blocked.opened();
  auto delivered = std::make_shared<std::atomic<int>>(0);
  auto synced = std::make_shared<std::promise<void>>();
  auto synced_future = synced->get_future();
  handler_callbacks cb;
  cb.on_delta = [delivered, opened](const delta&) {
    if (++*delivered > 2)
      opened.wait();
  };
  cb.on_synced = [synced] { synced->set_value(); };
  subscription_options stuck;
  stuck.window = 1;
  stuck.max_batch = 1;
  stuck.old_objects.which = keep;
  f.subscribe({a}, std::move(cb), stuck);
  REQUIRE(synced_future.wait_for(10s) == std::future_status::ready);
  REQUIRE(*delivered == 2);

  std::weak_ptr<const object> first = f.get(a, "a/cm");
  REQUIRE_FALSE(first.expired());
  f.update("a", "gate", "shut");
  f.update("a", "cm", "v2");
  REQUIRE(both_applied->get_future().wait_for(10s) == std::future_status::ready);
  // The store dropped the first version; the relay (what the handler has) and the informer's
  // waiting delta keep it only for a handler that reads it.
  CHECK(first.expired() == (keep == old_object_policy::keep::none));
  blocked.open();
}

TEST_CASE("a slow handler holds back the informer's queue, not the relay") {
  fixture f;
  for (int i = 0; i < 6; ++i)
    f.create("a", "cm-" + std::to_string(i));
  auto a = f.informer("a");
  // A direct subscriber: once it has converged, the informer has applied every update.
  delta_recorder fast;
  handler_actor direct = spawn_handler(*f.system, a, fixture::recording(fast));
  f.spawned.push_back(caf::actor_cast<caf::actor>(direct));
  REQUIRE(fast.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));

  gate blocked;
  auto opened = blocked.opened();
  delta_recorder slow;
  handler_callbacks cb;
  cb.on_delta = [&slow, opened](const delta& d) {
    opened.wait();
    slow.record(d);
  };
  cb.on_synced = [&slow] { slow.mark_synced(); };
  subscription_options small;
  small.name = "relay";
  small.queue_bound = 4;
  small.window = 2;
  small.max_batch = 1;
  f.subscribe({a}, std::move(cb), small);

  for (int round = 0; round < 15; ++round)
    for (int i = 0; i < 6; ++i)
      f.update("a", "cm-" + std::to_string(i), "r" + std::to_string(round));
  REQUIRE(f.converges(fast));

  // The handler is stuck in its first callback, so the relay has acknowledged nothing: the
  // informer sent only its window and coalesced the rest in the relay's queue.
  auto stats = f.stats(a);
  auto queue = std::find_if(stats.queues.begin(), stats.queues.end(),
                            [](const subscription_stats& q) { return q.name == "relay"; });
  REQUIRE(queue != stats.queues.end());
  CHECK(queue->delivered == 2);
  CHECK(queue->coalesced > 0);

  blocked.open();
  REQUIRE(f.converges(slow));
  REQUIRE(slow.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  CHECK(slow.out_of_order().empty());
  CHECK(slow.deltas_copy().size() < fast.deltas_copy().size());
}

TEST_CASE("a relay ends on unsubscribe and when its handler terminates") {
  fixture f;
  f.create("a", "cm-0");
  auto a = f.informer("a");

  SECTION("unsubscribe") {
    delta_recorder rec;
    auto relay = f.subscribe({a}, rec);
    REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
    caf::anon_send(relay, atoms::unsubscribe_atom::value, relay_id);
    f.wait_down(relay);
  }
  SECTION("handler terminates") {
    auto synced = std::make_shared<std::promise<void>>();
    auto relay_synced = synced->get_future();
    auto handler = f.system->spawn([synced](caf::event_based_actor*) -> caf::behavior {
      return {[](atoms::deliver_atom, subscription_id, const delta_batch&) {},
              [synced](atoms::synced_atom, subscription_id) { synced->set_value(); }};
    });
    auto relay = spawn_subscription_relay(*f.system, relay_id,
                                          caf::actor_cast<handler_actor>(handler), {a}, {});
    // Synced means the relay has its subscription id (the informer replies before delivering).
    REQUIRE(relay_synced.wait_for(10s) == std::future_status::ready);
    caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
    f.wait_down(relay);
  }
  // The relay unsubscribed before it terminated, so this request queues behind the unsubscribe.
  CHECK(f.stats(a).subscriptions == 0);
}

TEST_CASE("a relay ignores bad input and stray senders") {
  fixture f;
  f.create("a", "cm-0");
  auto a = f.informer("a");
  delta_recorder rec;
  auto relay = f.subscribe({a}, rec);
  REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));

  // A delivery from an actor that is not one of its informers, a delta without an object, a
  // rebind of a slot that does not exist and a null replacement: all ignored.
  delta stray;
  stray.object = rec.deltas_copy().front().object;
  caf::anon_send(relay, atoms::deliver_atom::value, subscription_id{1},
                 delta_batch{stray, delta{}});
  caf::anon_send(relay, atoms::synced_atom::value, subscription_id{1});
  caf::anon_send(relay, atoms::rebind_atom::value, std::size_t{7}, a);
  caf::anon_send(relay, atoms::rebind_atom::value, std::size_t{0}, informer_actor{});

  f.update("a", "cm-0", "still-works");
  REQUIRE(f.converges(rec));
  CHECK(rec.deltas_copy().size() == 2);
  CHECK(rec.synced() == 1);
}

TEST_CASE("a relay without informers is synced at once") {
  fixture f;
  delta_recorder rec;
  f.subscribe({}, rec);
  REQUIRE(rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  CHECK(rec.deltas_copy().empty());
}
