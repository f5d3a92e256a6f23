// The reflector's fault handling end to end: real informer and reflector actors against the
// embedded simulator. tests/protocol/watcher_test.cpp proves what the state machine decides;
// these prove the requests the reflector then makes (seen through the simulator's request
// observer) and that the store converges:
// - a continue token that expires between pages restarts the list from a consistent read;
// - a server that refuses streaming lists gets a paged LIST and a WATCH instead;
// - 429 with Retry-After holds the next attempt back at least that long.

#include "actors/actor_system_setup.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "tests/support/delta_recorder.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::testing::delta_recorder;
using request_verb = sim::request_record::verb;

namespace {

const group_version_resource configmaps{"", "v1", "configmaps"};

std::string config_map(const std::string& name, const std::string& value) {
  boost::json::object obj{{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata", {{"name", name}, {"namespace", "default"}}},
                          {"data", {{"value", value}}}};
  return boost::json::serialize(obj);
}

// Zero-padded, so that key order (the order the simulator pages in) is numeric order.
std::string name_of(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "cm-%02d", i);
  return buf;
}

std::string key_of(int i) {
  return "default/" + name_of(i);
}

std::string describe(const sim::request_record& r) {
  std::string out = r.kind == request_verb::list ? "list" : "watch";
  if (r.continued)
    out += " continue";
  else
    out += " rv=\"" + r.resource_version + "\"";
  if (r.limit > 0)
    out += " limit=" + std::to_string(r.limit);
  if (r.send_initial_events)
    out += " sendInitialEvents";
  return out + " -> " + std::to_string(r.code);
}

// Every list and watch of configmaps the simulator answered, in arrival order, with waits on a
// condition variable.
class request_log {
public:
  void record(const sim::request_record& r) {
    if (r.gvr != configmaps)
      return;
    std::lock_guard lock(mutex_);
    records_.push_back(r);
    changed_.notify_all();
  }

  // Waits until `pred(records)` holds; returns whether it did before the timeout.
  template <class Pred>
  bool wait_for(Pred pred, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return pred(records_); });
  }

  std::vector<sim::request_record> copy() const {
    std::lock_guard lock(mutex_);
    return records_;
  }

  // One line per request, for failure messages.
  std::string text() const {
    std::string out;
    for (const auto& r : copy())
      out += describe(r) + "\n";
    return out;
  }

private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<sim::request_record> records_;
};

std::size_t count_of(const std::vector<sim::request_record>& records, request_verb kind) {
  return static_cast<std::size_t>(
      std::count_if(records.begin(), records.end(),
                    [&](const sim::request_record& r) { return r.kind == kind; }));
}

// Holds the simulator inside the first request that matches `which` until the test has made
// its writes: a deterministic "between these two requests" for storage changes.
class request_gate {
public:
  using matcher = std::function<bool(const sim::request_record&)>;

  explicit request_gate(matcher which) : which_(std::move(which)) {
    reached_future_ = reached_.get_future();
    released_future_ = released_.get_future();
  }

  // Called by the observer on the simulator's I/O thread.
  void on_request(const sim::request_record& r) {
    if (!which_(r) || passed_.exchange(true))
      return;
    reached_.set_value();
    // Bounded, so that a failing test cannot hang the simulator's shutdown.
    released_future_.wait_for(10s);
  }

  // Called by the test: true once the matching request is held.
  bool wait_reached() { return reached_future_.wait_for(10s) == std::future_status::ready; }
  // Idempotent: the fixture releases on teardown too.
  void release() {
    if (!released_flag_.exchange(true))
      released_.set_value();
  }

private:
  matcher which_;
  std::atomic<bool> passed_{false};
  std::atomic<bool> released_flag_{false};
  std::promise<void> reached_;
  std::future<void> reached_future_;
  std::promise<void> released_;
  std::future<void> released_future_;
};

// One simulator (whose requests `log` records), one HTTP client, one actor system.
struct fixture {
  request_log log;
  std::atomic<std::shared_ptr<request_gate>> gate_; // see hold_at()
  sim::simulator server;
  std::shared_ptr<api_client> client;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  std::vector<caf::actor> spawned;

  fixture() : server(options()) {
    server.store().observe_requests([this](const sim::request_record& r) {
      log.record(r);
      if (auto g = gate_.load())
        g->on_request(r);
    });
    REQUIRE(server.start().ok());
    auto created = api_client::create(*from_server_url(server.url()));
    REQUIRE(created.ok());
    client = std::move(created).value();
    configure_actor_system(cfg);
    system = std::make_unique<caf::actor_system>(cfg);
  }

  ~fixture() {
    if (auto g = gate_.load())
      g->release(); // never leave the simulator's I/O thread held
    for (auto& a : spawned)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    system.reset();
    client.reset();
    server.stop();
    server.store().observe_requests({});
  }

  static sim::simulator_options options() {
    sim::simulator_options o;
    o.bookmark_interval = 200ms;
    return o;
  }

  // From now on, the first request matching `which` is held until gate().release().
  void hold_at(request_gate::matcher which) {
    gate_.store(std::make_shared<request_gate>(std::move(which)));
  }
  request_gate& gate() { return *gate_.load(); }

  sim::storage& store() { return server.store(); }

  void create(int i, const std::string& value = "v") {
    REQUIRE(store().create(configmaps, "default", config_map(name_of(i), value)).ok());
  }
  void update(int i, const std::string& value) {
    REQUIRE(store().update(configmaps, "default", name_of(i), config_map(name_of(i), value)).ok());
  }
  void remove(int i) { REQUIRE(store().remove(configmaps, "default", name_of(i)).ok()); }

  std::map<std::string, std::string> truth() {
    std::map<std::string, std::string> out;
    for (auto& v : store().truth(configmaps))
      out[v.key] = std::to_string(v.resource_version);
    return out;
  }

  static informer_config config_maps_config() {
    informer_config c;
    c.resource = configmaps;
    c.kind = "ConfigMap";
    c.namespace_ = "default";
    c.watch.page_size = 7; // several pages for a few dozen objects
    // Retries this fast would be far under any Retry-After the tests ask for.
    c.retry.initial = 20ms;
    c.retry.cap = 200ms;
    return c;
  }

  // Starts an informer with one recording handler.
  informer_actor start(informer_config c, delta_recorder& rec) {
    auto inf = spawn_informer(*system, client, std::move(c));
    spawned.push_back(caf::actor_cast<caf::actor>(inf));
    handler_callbacks cb;
    cb.on_delta = [&rec](const delta& d) { rec.record(d); };
    cb.on_synced = [&rec] { rec.mark_synced(); };
    auto h = spawn_handler(*system, inf, std::move(cb));
    spawned.push_back(caf::actor_cast<caf::actor>(h));
    return inf;
  }

  bool converges(delta_recorder& rec) {
    return rec.wait_for([&](const delta_recorder& r) { return r.state() == truth(); }, 10s);
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

bool synced(const delta_recorder& r) {
  return r.synced() == 1;
}

// The store's own contents equal the truth (not only what the handler folded).
void check_store_matches(fixture& f, const informer_actor& inf) {
  auto snapshot = request<store_snapshot>(*f.system, inf, atoms::snapshot_atom::value);
  std::map<std::string, std::string> stored;
  for (auto& obj : snapshot.list())
    stored[obj->key()] = std::string(obj->meta().resource_version);
  CHECK(stored == f.truth());
}

bool is_first_page(const sim::request_record& r) {
  return r.kind == request_verb::list && !r.continued;
}

} // namespace

TEST_CASE("a continue token expiring during the first paged list restarts it from a "
          "consistent read") {
  fixture f;
  for (int i = 0; i < 30; ++i)
    f.create(i);
  f.store().expire_next_continues(1);
  // Writes land between the first page and its (expired) continuation.
  f.hold_at([](const sim::request_record& r) { return is_first_page(r) && r.code == 200; });
  delta_recorder rec;
  auto inf = f.start(f.config_maps_config(), rec);

  REQUIRE(f.gate().wait_reached());
  f.remove(0);         // was on the first page
  f.update(20, "new"); // on a page not yet fetched
  f.create(30);
  f.gate().release();

  REQUIRE(rec.wait_for(synced));
  INFO(f.log.text());
  auto records = f.log.copy();
  REQUIRE(records.size() >= 4);
  // First page at "0", its continuation expired, then the whole list again at "" (a
  // consistent read, never the watch cache's possibly stale "0"), still paged.
  CHECK(describe(records[0]) == "list rv=\"0\" limit=7 -> 200");
  CHECK(describe(records[1]) == "list continue limit=7 -> 410");
  CHECK(describe(records[2]) == "list rv=\"\" limit=7 -> 200");
  // Every later page of that list succeeds, and then the watch starts from its snapshot.
  std::size_t i = 3;
  for (; i < records.size() && records[i].kind == request_verb::list; ++i)
    CHECK(describe(records[i]) == "list continue limit=7 -> 200");
  CHECK(i - 3 == 4); // 30 objects in pages of 7: four continuations
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));

  // The aborted first page left nothing behind: one initial ADDED per object of the fresh list.
  auto deltas = rec.deltas_copy();
  CHECK(deltas.size() == 30);
  for (const auto& d : deltas) {
    CHECK(d.type == delta_type::added);
    CHECK(d.initial_list);
    CHECK(d.object->key() != key_of(0));
  }
  CHECK(rec.state_copy() == f.truth());
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  CHECK(stats.lists == 1);
  CHECK(stats.relists == 0);

  f.update(5, "after-sync");
  REQUIRE(f.converges(rec));
  CHECK(rec.out_of_order().empty());
  check_store_matches(f, inf);
}

TEST_CASE("a continue token expiring during a relist restarts it, and deletes are inferred") {
  fixture f;
  for (int i = 0; i < 30; ++i)
    f.create(i);
  delta_recorder rec;
  auto inf = f.start(f.config_maps_config(), rec);
  REQUIRE(rec.wait_for(synced));
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));
  const auto lists_before = count_of(f.log.copy(), request_verb::list);

  // Cut the watch; the re-watch is answered 410, and is held there while objects change
  // unseen. The relist then loses its continue token between pages.
  f.store().fail_next_watches(1);
  f.store().expire_next_continues(1);
  f.hold_at(
      [](const sim::request_record& r) { return r.kind == request_verb::watch && r.code == 410; });
  f.server.drop_watches();
  REQUIRE(f.gate().wait_reached());
  for (int i = 0; i < 5; ++i)
    f.remove(i);
  f.update(25, "changed-unseen");
  f.create(40);
  f.gate().release();

  REQUIRE(f.converges(rec));
  INFO(f.log.text());
  auto records = f.log.copy();
  auto expired_watch = std::find_if(records.begin(), records.end(), [](const auto& r) {
    return r.kind == request_verb::watch && r.code == 410;
  });
  REQUIRE(expired_watch != records.end());
  REQUIRE(records.end() - expired_watch >= 4);
  // The relist starts at the last resourceVersion, paged (the server showed it pages); after
  // the expired continuation it restarts at "".
  CHECK(expired_watch[1].kind == request_verb::list);
  CHECK(expired_watch[1].resource_version == expired_watch->resource_version);
  CHECK(expired_watch[1].limit == 7);
  CHECK(describe(expired_watch[2]) == "list continue limit=7 -> 410");
  CHECK(describe(expired_watch[3]) == "list rv=\"\" limit=7 -> 200");
  CHECK(count_of(records, request_verb::list) > lists_before + 3);

  // Deletes that happened unseen come out of the relist, marked final-state-unknown.
  auto deltas = rec.deltas_copy();
  for (int i = 0; i < 5; ++i) {
    auto deleted = std::count_if(deltas.begin(), deltas.end(), [&](const delta& d) {
      return d.type == delta_type::deleted && d.object->key() == key_of(i);
    });
    CHECK(deleted == 1);
  }
  for (const auto& d : deltas)
    if (d.type == delta_type::deleted)
      CHECK(d.final_state_unknown);
  CHECK(rec.out_of_order().empty());
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  CHECK(stats.lists == 2);
  CHECK(stats.relists == 1);
  check_store_matches(f, inf);
}

TEST_CASE("a server refusing streaming lists gets a paged LIST and WATCH, and the informer "
          "converges") {
  fixture f;
  f.store().refuse_streaming_lists(true);
  for (int i = 0; i < 20; ++i)
    f.create(i);
  auto c = f.config_maps_config();
  c.watch.streaming_list = true;
  delta_recorder rec;
  auto inf = f.start(c, rec);
  REQUIRE(rec.wait_for(synced));
  REQUIRE(f.log.wait_for([](const auto& rs) {
    return std::count_if(rs.begin(), rs.end(), [](const auto& r) {
             return r.kind == request_verb::watch && r.code == 200;
           }) == 1;
  }));
  {
    INFO(f.log.text());
    auto records = f.log.copy();
    REQUIRE(records.size() >= 3);
    CHECK(describe(records[0]) == "watch rv=\"\" sendInitialEvents -> 422");
    CHECK(describe(records[1]) == "list rv=\"0\" limit=7 -> 200");
    auto watch = std::find_if(records.begin() + 1, records.end(),
                              [](const auto& r) { return r.kind == request_verb::watch; });
    REQUIRE(watch != records.end());
    CHECK_FALSE(watch->send_initial_events);
    CHECK(watch->code == 200);
    CHECK(watch->resource_version != "");
    CHECK(watch->resource_version != "0");
  }
  auto initial = rec.deltas_copy();
  CHECK(initial.size() == 20);
  for (const auto& d : initial)
    CHECK(d.initial_list);

  // Changes arrive through the fallback watch; a later relist (after a 410) stays a LIST: the
  // refusal is remembered, not retried.
  f.update(3, "changed");
  f.remove(4);
  REQUIRE(f.converges(rec));
  f.store().fail_next_watches(1);
  f.server.drop_watches();
  f.create(50);
  REQUIRE(f.log.wait_for([](const auto& rs) {
    auto expired = std::find_if(rs.begin(), rs.end(), [](const auto& r) {
      return r.kind == request_verb::watch && r.code == 410;
    });
    return expired != rs.end() && std::any_of(expired + 1, rs.end(), [](const auto& r) {
             return r.kind == request_verb::watch && r.code == 200;
           });
  }));
  REQUIRE(f.converges(rec));
  INFO(f.log.text());
  auto records = f.log.copy();
  CHECK(std::count_if(records.begin(), records.end(),
                      [](const auto& r) { return r.send_initial_events; }) == 1);
  auto expired = std::find_if(records.begin(), records.end(), [](const auto& r) {
    return r.kind == request_verb::watch && r.code == 410;
  });
  REQUIRE(expired + 1 < records.end());
  CHECK(expired[1].kind == request_verb::list);
  CHECK(rec.out_of_order().empty());
  check_store_matches(f, inf);
}

TEST_CASE("streaming lists carry the initial state and relists without any LIST request") {
  fixture f;
  for (int i = 0; i < 20; ++i)
    f.create(i);
  auto c = f.config_maps_config();
  c.watch.streaming_list = true;
  delta_recorder rec;
  auto inf = f.start(c, rec);
  REQUIRE(rec.wait_for(synced));
  auto initial = rec.deltas_copy();
  CHECK(initial.size() == 20);
  for (const auto& d : initial) {
    CHECK(d.type == delta_type::added);
    CHECK(d.initial_list);
  }

  // The re-watch after a dropped connection is answered 410 and held while objects change
  // unseen: the relist is a streaming list again, and infers the deletes.
  f.store().fail_next_watches(1);
  f.hold_at(
      [](const sim::request_record& r) { return r.kind == request_verb::watch && r.code == 410; });
  f.server.drop_watches();
  REQUIRE(f.gate().wait_reached());
  f.remove(0);
  f.remove(1);
  f.update(2, "changed-unseen");
  f.gate().release();
  REQUIRE(f.converges(rec));

  INFO(f.log.text());
  auto records = f.log.copy();
  CHECK(count_of(records, request_verb::list) == 0);
  CHECK(std::count_if(records.begin(), records.end(),
                      [](const auto& r) { return r.send_initial_events && r.code == 200; }) == 2);
  auto deltas = rec.deltas_copy();
  for (int i = 0; i < 2; ++i)
    CHECK(std::any_of(deltas.begin(), deltas.end(), [&](const delta& d) {
      return d.type == delta_type::deleted && d.final_state_unknown && d.object->key() == key_of(i);
    }));
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  CHECK(stats.lists == 2);
  check_store_matches(f, inf);
}

namespace {

// The time between the first request answered `code` and the request after it of the same
// kind, which must be the retry.
std::chrono::milliseconds wait_after(const std::vector<sim::request_record>& records, int code,
                                     request_verb kind) {
  auto failed = std::find_if(records.begin(), records.end(),
                             [&](const auto& r) { return r.kind == kind && r.code == code; });
  REQUIRE(failed != records.end());
  auto retry =
      std::find_if(failed + 1, records.end(), [&](const auto& r) { return r.kind == kind; });
  REQUIRE(retry != records.end());
  return std::chrono::duration_cast<std::chrono::milliseconds>(retry->received - failed->received);
}

} // namespace

TEST_CASE("a list answered 429 with Retry-After is retried no sooner than asked") {
  fixture f;
  for (int i = 0; i < 10; ++i)
    f.create(i);
  // The backoff alone (20 ms, cap 200 ms) would retry far sooner than the second asked for.
  f.store().fail_next_lists(1, 429, 1);
  delta_recorder rec;
  auto inf = f.start(f.config_maps_config(), rec);
  REQUIRE(rec.wait_for(synced));
  INFO(f.log.text());
  auto records = f.log.copy();
  REQUIRE(records.size() >= 2);
  CHECK(describe(records[0]) == "list rv=\"0\" limit=7 -> 429");
  CHECK(describe(records[1]) == "list rv=\"0\" limit=7 -> 200");
  CHECK(wait_after(records, 429, request_verb::list) >= 1s);
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  CHECK(stats.retries == 1);
  f.update(3, "after");
  REQUIRE(f.converges(rec));
}

TEST_CASE("a watch answered 429 with Retry-After is re-watched no sooner than asked, without a "
          "relist") {
  fixture f;
  for (int i = 0; i < 10; ++i)
    f.create(i);
  delta_recorder rec;
  auto inf = f.start(f.config_maps_config(), rec);
  REQUIRE(rec.wait_for(synced));
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));
  const auto lists_before = count_of(f.log.copy(), request_verb::list);

  f.store().fail_next_watches(1, 429, 1);
  f.server.drop_watches();
  REQUIRE(f.log.wait_for([](const auto& rs) {
    auto throttled =
        std::find_if(rs.begin(), rs.end(), [](const auto& r) { return r.code == 429; });
    return throttled != rs.end() && std::any_of(throttled + 1, rs.end(), [](const auto& r) {
             return r.kind == request_verb::watch && r.code == 200;
           });
  }));
  f.update(7, "after-throttle");
  REQUIRE(f.converges(rec));

  INFO(f.log.text());
  auto records = f.log.copy();
  CHECK(wait_after(records, 429, request_verb::watch) >= 1s);
  // Throttling is not staleness: the watch resumes where it was, with no relist.
  CHECK(count_of(records, request_verb::list) == lists_before);
  auto throttled =
      std::find_if(records.begin(), records.end(), [](const auto& r) { return r.code == 429; });
  auto resumed = std::find_if(throttled + 1, records.end(),
                              [](const auto& r) { return r.kind == request_verb::watch; });
  REQUIRE(resumed != records.end());
  CHECK(resumed->resource_version == throttled->resource_version);
  CHECK(rec.out_of_order().empty());
  check_store_matches(f, inf);
}

TEST_CASE("a streaming list answered 429 with Retry-After is retried no sooner than asked") {
  fixture f;
  for (int i = 0; i < 10; ++i)
    f.create(i);
  f.store().fail_next_watches(1, 429, 1);
  auto c = f.config_maps_config();
  c.watch.streaming_list = true;
  delta_recorder rec;
  f.start(c, rec);
  REQUIRE(rec.wait_for(synced));
  INFO(f.log.text());
  auto records = f.log.copy();
  REQUIRE(records.size() >= 2);
  CHECK(describe(records[0]) == "watch rv=\"\" sendInitialEvents -> 429");
  // Still a streaming list: 429 says "later", not "unsupported".
  CHECK(describe(records[1]) == "watch rv=\"\" sendInitialEvents -> 200");
  CHECK(wait_after(records, 429, request_verb::watch) >= 1s);
  CHECK(count_of(records, request_verb::list) == 0);
  CHECK(rec.state_copy() == f.truth());
}

// ---- The simulator hooks these tests rely on, at the storage level ----

namespace {

sim::list_request first_page(std::int64_t limit) {
  sim::list_request r;
  r.gvr = configmaps;
  r.limit = limit;
  return r;
}

sim::watch_request streaming_watch() {
  sim::watch_request r;
  r.gvr = configmaps;
  r.send_initial_events = true;
  r.match = sim::resource_version_match::not_older_than;
  r.allow_bookmarks = true;
  return r;
}

} // namespace

TEST_CASE("simulator: expire_next_continues fails continue pages only, once each") {
  sim::storage store;
  for (int i = 0; i < 5; ++i)
    REQUIRE(store.create(configmaps, "default", config_map(name_of(i), "v")).ok());
  store.expire_next_continues(1);
  auto page = store.list(first_page(2)); // a first page is not a continuation
  REQUIRE(page.ok());
  REQUIRE_FALSE(page->continue_token.empty());
  auto next = first_page(2);
  next.continue_token = page->continue_token;
  auto expired = store.list(next);
  REQUIRE_FALSE(expired.ok());
  CHECK(expired.failure().code == 410);
  CHECK(expired.failure().reason == "Expired");
  CHECK(store.list(next).ok()); // consumed: the same token works again
  // A malformed token is still a 400, not an expiry.
  store.expire_next_continues(1);
  auto garbage = first_page(2);
  garbage.continue_token = "not-a-token";
  CHECK(store.list(garbage).failure().code == 400);
  CHECK_FALSE(store.list(next).ok());
}

TEST_CASE("simulator: refused streaming lists answer 422, other watches are unaffected") {
  sim::storage store;
  auto sink = [](const sim::watch_message&) {};
  store.refuse_streaming_lists(true);
  auto refused = store.watch(streaming_watch(), sink);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.failure().code == 422);
  CHECK(refused.failure().reason == "Invalid");
  CHECK(refused.failure().message.find("sendInitialEvents") != std::string::npos);
  sim::watch_request plain;
  plain.gvr = configmaps;
  CHECK(store.watch(plain, sink).ok());
  store.refuse_streaming_lists(false);
  CHECK(store.watch(streaming_watch(), sink).ok());
}

TEST_CASE("simulator: watches fail with 429 and Retry-After when armed so") {
  sim::storage store;
  auto sink = [](const sim::watch_message&) {};
  sim::watch_request plain;
  plain.gvr = configmaps;
  store.fail_next_watches(1, 429, 2);
  auto throttled = store.watch(plain, sink);
  REQUIRE_FALSE(throttled.ok());
  CHECK(throttled.failure().code == 429);
  CHECK(throttled.failure().reason == "TooManyRequests");
  CHECK(throttled.failure().retry_after_seconds == 2);
  CHECK(store.watch(plain, sink).ok());
  // The one-argument form still answers 410 Expired.
  store.fail_next_watches(1);
  CHECK(store.watch(plain, sink).failure().code == 410);
}

TEST_CASE("simulator: the request observer sees every list and watch with its answer") {
  sim::storage store;
  std::vector<sim::request_record> seen;
  store.observe_requests([&](const sim::request_record& r) { seen.push_back(r); });
  auto before = std::chrono::steady_clock::now();
  store.fail_next_lists(1, 500);
  CHECK_FALSE(store.list(first_page(3)).ok());
  CHECK(store.list(first_page(3)).ok());
  CHECK(store.watch(streaming_watch(), [](const sim::watch_message&) {}).ok());
  REQUIRE(seen.size() == 3);
  CHECK(describe(seen[0]) == "list rv=\"\" limit=3 -> 500");
  CHECK(describe(seen[1]) == "list rv=\"\" limit=3 -> 200");
  CHECK(describe(seen[2]) == "watch rv=\"\" sendInitialEvents -> 200");
  CHECK(seen[0].received >= before);
  CHECK(seen[2].received >= seen[0].received);
  store.observe_requests({});
  CHECK(store.list(first_page(3)).ok());
  CHECK(seen.size() == 3);
}

namespace {

// POSTs to a control route over a plain socket; returns the HTTP status code (0 on I/O error).
int post_control(std::uint16_t port, const std::string& target) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec)
    return 0;
  std::string request = "POST " + target +
                        " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
                        "Connection: close\r\n\r\n";
  asio::write(socket, asio::buffer(request), ec);
  std::string response;
  asio::read(socket, asio::dynamic_buffer(response), ec); // to EOF: the server closes
  int code = 0;
  if (std::sscanf(response.c_str(), "HTTP/1.1 %d", &code) != 1)
    return 0;
  return code;
}

} // namespace

TEST_CASE("simulator: the control routes arm the new faults and reject bad parameters") {
  sim::simulator server(fixture::options());
  REQUIRE(server.start().ok());
  auto port = server.port();
  auto sink = [](const sim::watch_message&) {};
  sim::watch_request plain;
  plain.gvr = configmaps;

  CHECK(post_control(port, "/sim/faults/fail-watches?count=1&code=429&retryAfter=2") == 200);
  auto throttled = server.store().watch(plain, sink);
  REQUIRE_FALSE(throttled.ok());
  CHECK(throttled.failure().code == 429);
  CHECK(throttled.failure().retry_after_seconds == 2);
  CHECK(post_control(port, "/sim/faults/fail-watches?count=1&code=429") == 200);
  CHECK(server.store().watch(plain, sink).failure().retry_after_seconds == 1);
  CHECK(post_control(port, "/sim/faults/fail-watches?count=1") == 200);
  CHECK(server.store().watch(plain, sink).failure().code == 410);
  CHECK(post_control(port, "/sim/faults/fail-watches?code=200") == 400);
  CHECK(post_control(port, "/sim/faults/fail-watches?retryAfter=x") == 400);

  CHECK(post_control(port, "/sim/faults/refuse-streaming-lists") == 200);
  CHECK(server.store().watch(streaming_watch(), sink).failure().code == 422);
  CHECK(post_control(port, "/sim/faults/refuse-streaming-lists?refuse=false") == 200);
  CHECK(server.store().watch(streaming_watch(), sink).ok());
  CHECK(post_control(port, "/sim/faults/refuse-streaming-lists?refuse=maybe") == 400);

  for (int i = 0; i < 3; ++i)
    REQUIRE(server.store().create(configmaps, "default", config_map(name_of(i), "v")).ok());
  CHECK(post_control(port, "/sim/faults/expire-continues?count=1") == 200);
  auto page = server.store().list(first_page(1));
  REQUIRE(page.ok());
  auto next = first_page(1);
  next.continue_token = page->continue_token;
  CHECK(server.store().list(next).failure().code == 410);
  CHECK(server.store().list(next).ok());
  CHECK(post_control(port, "/sim/faults/expire-continues?count=-1") == 400);
  server.stop();
}
