// The reflector's fault handling end to end: real informer and reflector actors against the
// embedded simulator. tests/protocol/watcher_test.cpp proves what the state machine decides;
// these prove the requests the reflector then makes (seen through the simulator's request
// observer) and that the store converges:
// - a continue token that expires between pages falls back to one unpaged list;
// - a server that refuses streaming lists gets a paged LIST and a WATCH instead, each round;
// - 429 (or 503) with Retry-After holds the next attempt back at least that long, and retries
//   the same request: a page, or a watch from the same resourceVersion;
// - thirty 410s in a row give one LIST per backoff delay;
// - a relist without changes delivers nothing to a handler without resync.
// With KINFORMER_FAULT_TABLE=FILE, each fault test appends a Markdown row of what the server saw
// to FILE (the fault table in docs/reliability.md is made that way).

#include "actors/actor_system_setup.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/prefault.hpp"
#include "tests/support/delta_recorder.hpp"
#include "tests/support/request_log.hpp"

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
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <thread>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::testing::count_of;
using kinformer::testing::delta_recorder;
using kinformer::testing::describe;
using kinformer::testing::request_log;
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

// A shared_ptr that one thread replaces while another reads it. Not std::atomic<shared_ptr>:
// libstdc++ 12 guards that with a lock bit ThreadSanitizer cannot see, so TSan reports a race.
template <class T>
class shared_slot {
public:
  void store(std::shared_ptr<T> p) {
    std::lock_guard lock(mutex_);
    ptr_ = std::move(p);
  }
  std::shared_ptr<T> load() const {
    std::lock_guard lock(mutex_);
    return ptr_;
  }

private:
  mutable std::mutex mutex_;
  std::shared_ptr<T> ptr_;
};

// One simulator (whose requests `log` records), one HTTP client, one actor system.
struct fixture {
  request_log log{configmaps};
  shared_slot<request_gate> gate_; // see hold_at()
  // Called with every request, on the simulator's I/O thread (see on_each_request()).
  shared_slot<const std::function<void(const sim::request_record&)>> hook_;
  sim::simulator server;
  std::shared_ptr<api_client> client;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  std::vector<caf::actor> spawned;

  fixture() : server(options()) {
    server.store().observe_requests([this](const sim::request_record& r) {
      log.record(r);
      if (auto h = hook_.load())
        (*h)(r);
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

  // From now on `hook` sees every request the simulator answers, after the answer is decided.
  void on_each_request(std::function<void(const sim::request_record&)> hook) {
    hook_.store(
        std::make_shared<const std::function<void(const sim::request_record&)>>(std::move(hook)));
  }

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
    stored[std::string(obj->key())] = std::string(obj->meta().resource_version);
  CHECK(stored == f.truth());
}

bool is_first_page(const sim::request_record& r) {
  return r.kind == request_verb::list && !r.continued;
}

// A request log predicate: a request was answered `code`, and a watch opened (200) after it.
auto watch_open_after(int code) {
  return [code](const std::vector<sim::request_record>& rs) {
    auto failed =
        std::find_if(rs.begin(), rs.end(), [code](const auto& r) { return r.code == code; });
    return failed != rs.end() && std::any_of(failed + 1, rs.end(), [](const auto& r) {
             return r.kind == request_verb::watch && r.code == 200;
           });
  };
}

// With KINFORMER_FAULT_TABLE set, appends one row of the fault table in docs/reliability.md: the
// fault, what the server saw, whether the informer converged, and what client-go does.
void fault_row(const std::string& fault, const std::vector<sim::request_record>& records,
               bool converged, const std::string& client_go) {
  const char* file = std::getenv("KINFORMER_FAULT_TABLE");
  if (!file)
    return;
  auto seen = kinformer::testing::count_requests(records);
  std::ofstream out(file, std::ios::app);
  out << "| " << fault << " | " << seen.lists << " | " << seen.continue_pages << " | "
      << seen.watches << " | " << (converged ? "yes" : "**no**") << " | " << client_go << " |\n";
}

} // namespace

TEST_CASE("a continue token expiring during the first paged list falls back to one unpaged "
          "list at the same resourceVersion") {
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
  REQUIRE(records.size() >= 3);
  // First page at "0", its continuation expired, then the whole list once, unpaged, at the
  // same "0" (client-go's pager: paging cannot fall behind compaction again), then the watch.
  CHECK(describe(records[0]) == "list rv=\"0\" limit=7 -> 200");
  CHECK(describe(records[1]) == "list continue limit=7 -> 410");
  CHECK(describe(records[2]) == "list rv=\"0\" -> 200");
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));
  CHECK(count_of(f.log.copy(), request_verb::list) == 3);

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

TEST_CASE("a continue token expiring during a relist falls back to an unpaged list, and "
          "deletes are inferred") {
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
  // the expired continuation it lists once more at that resourceVersion, unpaged.
  CHECK(expired_watch[1].kind == request_verb::list);
  CHECK(expired_watch[1].resource_version == expired_watch->resource_version);
  CHECK(expired_watch[1].limit == 7);
  CHECK(describe(expired_watch[2]) == "list continue limit=7 -> 410");
  CHECK(describe(expired_watch[3]) == "list rv=\"" + expired_watch->resource_version + "\" -> 200");
  CHECK(count_of(records, request_verb::list) == lists_before + 3);

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
  fault_row("410 on the watch, then the relist's continue token expires (whole run)", records, true,
            "back off, relist; the pager's one unpaged LIST at the same RV");
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

  // Changes arrive through the fallback watch; a later relist (after a 410) tries a streaming
  // list again, as client-go does each round, and falls back again.
  f.update(3, "changed");
  f.remove(4);
  REQUIRE(f.converges(rec));
  f.store().fail_next_watches(1);
  f.server.drop_watches();
  f.create(50);
  REQUIRE(f.log.wait_for(watch_open_after(410)));
  REQUIRE(f.converges(rec));
  INFO(f.log.text());
  auto records = f.log.copy();
  CHECK(std::count_if(records.begin(), records.end(),
                      [](const auto& r) { return r.send_initial_events; }) == 2);
  auto expired = std::find_if(records.begin(), records.end(), [](const auto& r) {
    return r.kind == request_verb::watch && r.code == 410;
  });
  REQUIRE(expired + 2 < records.end());
  CHECK(expired[1].send_initial_events);
  CHECK(expired[1].code == 422);
  // From the last synced resourceVersion, not "": a streaming relist is NotOlderThan it.
  CHECK(expired[1].resource_version == expired->resource_version);
  CHECK(expired[2].kind == request_verb::list);
  CHECK(rec.out_of_order().empty());
  check_store_matches(f, inf);
  fault_row("streaming lists refused (422), sync and one relist", records, true,
            "paged LIST for that round; the next round streams again");
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
  REQUIRE(f.log.wait_for(watch_open_after(429)));
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
  fault_row("429 with Retry-After: 1 on the watch (whole run)", records, true,
            "the same watch again after Retry-After, no relist");
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

TEST_CASE("thirty watch 410s in a row: one LIST per backoff delay, and the informer converges") {
  fixture f;
  for (int i = 0; i < 10; ++i)
    f.create(i);
  auto c = f.config_maps_config();
  c.retry.initial = 2ms; // client-go's 0.8 s doubling to 30 s, scaled down
  c.retry.cap = 16ms;
  delta_recorder rec;
  auto inf = f.start(c, rec);
  REQUIRE(rec.wait_for(synced));
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));
  const auto before = f.log.copy().size();

  f.store().fail_next_watches(30);
  f.server.drop_watches();
  f.update(3, "during-the-410s");
  auto after_the_410s = [](const std::vector<sim::request_record>& rs) {
    auto failed = std::count_if(rs.begin(), rs.end(), [](const auto& r) { return r.code == 410; });
    return failed == 30 && rs.back().kind == request_verb::watch && rs.back().code == 200;
  };
  REQUIRE(f.log.wait_for(after_the_410s, 30s));
  f.create(50);
  bool converged = f.converges(rec);
  CHECK(converged);

  INFO(f.log.text());
  auto records = f.log.copy();
  std::vector<sim::request_record> fault(records.begin() + static_cast<std::ptrdiff_t>(before),
                                         records.end());
  // Each 410 is followed by exactly one new LIST (a relist at the last resourceVersion; the
  // server pages, so its continuation follows), and that LIST came no sooner than the backoff
  // step allows: 2, 4, 8, then 16 ms (each delay is drawn from [d, 2d)).
  std::size_t relists = 0;
  auto step = 2ms;
  for (std::size_t i = 0; i < fault.size(); ++i) {
    if (fault[i].kind != request_verb::watch || fault[i].code != 410)
      continue;
    REQUIRE(i + 1 < fault.size());
    CHECK(is_first_page(fault[i + 1]));
    CHECK(fault[i + 1].received - fault[i].received >= step);
    step = std::min<std::chrono::milliseconds>(step * 2, 16ms);
    ++relists;
  }
  CHECK(relists == 30);
  CHECK(std::count_if(fault.begin(), fault.end(), is_first_page) == 30);
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  CHECK(stats.relists_by_reason["watch_expired"] == 30);
  CHECK(stats.retries >= 30);
  CHECK(rec.out_of_order().empty());
  check_store_matches(f, inf);
  fault_row("30 watch 410 Expired in a row", fault, converged,
            "one LIST per backoff delay (0.8 s doubling to 30 s, from [d, 2d))");
}

TEST_CASE("compaction outpacing paging: every continue token expires, and the informer syncs "
          "with one unpaged list per round") {
  fixture f;
  for (int i = 0; i < 30; ++i)
    f.create(i);
  f.store().expire_next_continues(1000);
  delta_recorder rec;
  auto inf = f.start(f.config_maps_config(), rec);
  REQUIRE(rec.wait_for(synced));
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));
  {
    INFO(f.log.text());
    auto records = f.log.copy();
    CHECK(describe(records.at(0)) == "list rv=\"0\" limit=7 -> 200");
    CHECK(describe(records.at(1)) == "list continue limit=7 -> 410");
    CHECK(describe(records.at(2)) == "list rv=\"0\" -> 200");
    CHECK(count_of(records, request_verb::list) == 3);
  }
  // A relist after a 410 on the watch goes the same way: one paged try, then one unpaged list.
  f.store().fail_next_watches(1);
  f.server.drop_watches();
  f.remove(7);
  bool converged = f.converges(rec);
  CHECK(converged);
  REQUIRE(f.log.wait_for([](const auto& rs) {
    return std::count_if(rs.begin(), rs.end(), [](const auto& r) {
             return r.kind == request_verb::watch && r.code == 200;
           }) == 2;
  }));
  INFO(f.log.text());
  auto records = f.log.copy();
  CHECK(count_of(records, request_verb::list) == 6);
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  CHECK(stats.lists == 2);
  check_store_matches(f, inf);
  fault_row("every continue token expired (compaction outpaces paging), sync and one relist",
            records, converged, "the pager's FullListIfExpired: one unpaged LIST at the same RV");
}

TEST_CASE("a 40-page list with 429 and Retry-After on a tenth of its pages re-fetches only "
          "those pages") {
  fixture f;
  for (int i = 0; i < 200; ++i)
    f.create(i);
  auto c = f.config_maps_config();
  c.watch.page_size = 5; // 40 pages
  // The 6th, 16th, 26th and 36th page requests are answered 429 with Retry-After: 1, armed by
  // the request before each.
  auto answered = std::make_shared<std::atomic<int>>(0);
  f.on_each_request([&f, answered](const sim::request_record& r) {
    if (r.kind != request_verb::list || r.code != 200)
      return;
    int n = ++*answered;
    if (n % 10 == 5)
      f.store().fail_next_lists(1, 429, 1);
  });
  delta_recorder rec;
  auto inf = f.start(c, rec);
  REQUIRE(rec.wait_for(synced, 30s));
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));
  f.update(150, "after-sync");
  bool converged = f.converges(rec);
  CHECK(converged);

  INFO(f.log.text());
  auto records = f.log.copy();
  CHECK(count_of(records, request_verb::list) == 44);
  std::size_t throttled = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].code != 429)
      continue;
    ++throttled;
    // The retry is the very same request: the same continue token, a second or more later.
    REQUIRE(i + 1 < records.size());
    CHECK(records[i + 1].kind == request_verb::list);
    CHECK(records[i + 1].continue_token == records[i].continue_token);
    CHECK(records[i + 1].code == 200);
    CHECK(records[i + 1].received - records[i].received >= 1s);
  }
  CHECK(throttled == 4);
  // Every page was fetched once successfully, and only the throttled ones twice.
  std::map<std::string, int> fetched;
  for (const auto& r : records)
    if (r.kind == request_verb::list && r.code == 200)
      ++fetched[r.continue_token];
  CHECK(fetched.size() == 40);
  for (const auto& [token, n] : fetched)
    CHECK(n == 1);
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  CHECK(stats.lists == 1);
  CHECK(stats.relists == 0);
  check_store_matches(f, inf);
  fault_row("429 with Retry-After: 1 on 4 of 40 list pages", records, converged,
            "the same page again after Retry-After (rest.Request, at most 10 retries)");
}

TEST_CASE("a watch answered 503 with Retry-After re-watches from the same resourceVersion, "
          "without a LIST") {
  fixture f;
  for (int i = 0; i < 10; ++i)
    f.create(i);
  delta_recorder rec;
  auto inf = f.start(f.config_maps_config(), rec);
  REQUIRE(rec.wait_for(synced));
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));
  const auto before = f.log.copy().size();
  const auto lists_before = count_of(f.log.copy(), request_verb::list);

  f.store().fail_next_watches(1, 503, 1);
  f.server.drop_watches();
  REQUIRE(f.log.wait_for(watch_open_after(503)));
  f.update(4, "after-503");
  bool converged = f.converges(rec);
  CHECK(converged);

  INFO(f.log.text());
  auto records = f.log.copy();
  CHECK(count_of(records, request_verb::list) == lists_before);
  CHECK(wait_after(records, 503, request_verb::watch) >= 1s);
  auto failed =
      std::find_if(records.begin(), records.end(), [](const auto& r) { return r.code == 503; });
  auto resumed = std::find_if(failed + 1, records.end(),
                              [](const auto& r) { return r.kind == request_verb::watch; });
  REQUIRE(resumed != records.end());
  CHECK(resumed->resource_version == failed->resource_version);
  check_store_matches(f, inf);
  fault_row("503 with Retry-After: 1 on the watch",
            std::vector<sim::request_record>(records.begin() + static_cast<std::ptrdiff_t>(before),
                                             records.end()),
            converged, "the same watch again after Retry-After, no relist");
}

TEST_CASE("a forced relist with no changes delivers nothing to a handler without resync, and "
          "sync deltas to one with a resync period") {
  fixture f;
  for (int i = 0; i < 12; ++i)
    f.create(i);
  delta_recorder plain, resyncing;
  auto inf = f.start(f.config_maps_config(), plain);
  handler_callbacks cb;
  cb.on_delta = [&resyncing](const delta& d) { resyncing.record(d); };
  cb.on_synced = [&resyncing] { resyncing.mark_synced(); };
  subscription_options with_resync;
  with_resync.resync_period = std::chrono::hours(1); // never due in this test
  auto h = spawn_handler(*f.system, inf, std::move(cb), with_resync);
  f.spawned.push_back(caf::actor_cast<caf::actor>(h));
  REQUIRE(plain.wait_for(synced));
  REQUIRE(resyncing.wait_for(synced));
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));
  const auto initial = plain.deltas_copy().size();
  const auto before = f.log.copy().size();

  f.store().fail_next_watches(1);
  f.server.drop_watches();
  REQUIRE(f.log.wait_for(watch_open_after(410)));
  // One change after the relist: once each handler has it, the relist's deltas (delivered
  // before it, in order) are in too.
  f.update(5, "after-relist");
  bool converged = f.converges(plain);
  CHECK(converged);
  REQUIRE(f.converges(resyncing));

  auto deltas = plain.deltas_copy();
  REQUIRE(deltas.size() == initial + 1);
  CHECK(deltas.back().type == delta_type::updated);
  CHECK(deltas.back().object->key() == key_of(5));
  auto resynced = resyncing.deltas_copy();
  auto syncs = std::count_if(resynced.begin(), resynced.end(),
                             [](const delta& d) { return d.type == delta_type::sync; });
  CHECK(syncs == 12);
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  CHECK(stats.relists == 1);
  INFO(f.log.text());
  auto records = f.log.copy();
  fault_row("410 on the watch, relist finds nothing changed",
            std::vector<sim::request_record>(records.begin() + static_cast<std::ptrdiff_t>(before),
                                             records.end()),
            converged, "unchanged objects only to handlers whose resync is due");
}

// The first list's objects go into memory the process has not used, which the decode thread maps
// in ahead of them (protocol/prefault.hpp); a relist's fill chunks freed between live objects,
// where mapping ahead would take back pages the heap trimmer gave away.
TEST_CASE("only the first list is decoded into fresh memory, not a relist") {
  fixture f;
  for (int i = 0; i < 12; ++i)
    f.create(i);
  const auto before_sync = bulk_allocation_scopes_opened();
  delta_recorder rec;
  auto inf = f.start(f.config_maps_config(), rec);
  REQUIRE(rec.wait_for(synced));
  REQUIRE(f.log.wait_for([](const auto& rs) { return count_of(rs, request_verb::watch) == 1; }));
  const auto after_sync = bulk_allocation_scopes_opened();
  CHECK(after_sync > before_sync);

  f.store().fail_next_watches(1);
  f.server.drop_watches();
  REQUIRE(f.log.wait_for(watch_open_after(410)));
  f.update(5, "after-relist");
  REQUIRE(f.converges(rec));
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  REQUIRE(stats.relists == 1);
  CHECK(bulk_allocation_scopes_opened() == after_sync);
}

TEST_CASE("a blocked handler counts every creation and every deletion once unblocked") {
  // ReplicaSet and Job controllers count the creations and deletions they observe
  // ("expectations"): a queue over its bound may merge updates, never hide either.
  fixture f;
  f.create(0);
  auto inf = spawn_informer(*f.system, f.client, f.config_maps_config());
  f.spawned.push_back(caf::actor_cast<caf::actor>(inf));

  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, int> adds, deletes;
  int deleted_total = 0;
  bool synced_now = false;
  std::atomic<bool> blocking{false};
  std::promise<void> unblock;
  std::shared_future<void> unblocked = unblock.get_future().share();
  handler_callbacks cb;
  cb.on_delta = [&](const delta& d) {
    if (blocking.load())
      unblocked.wait();
    std::lock_guard lock(mutex);
    std::string key(d.object->key());
    if (d.type == delta_type::added && !d.initial_list)
      ++adds[key];
    if (d.type == delta_type::deleted) {
      ++deletes[key];
      ++deleted_total;
    }
    changed.notify_all();
  };
  cb.on_synced = [&] {
    std::lock_guard lock(mutex);
    synced_now = true;
    changed.notify_all();
  };
  subscription_options options;
  options.queue_bound = 4; // far fewer than the 40 deltas that queue up
  options.window = 1;      // one delta in flight to the handler at a time
  options.max_batch = 1;
  auto h = spawn_handler(*f.system, inf, std::move(cb), options);
  f.spawned.push_back(caf::actor_cast<caf::actor>(h));
  {
    std::unique_lock lock(mutex);
    REQUIRE(changed.wait_for(lock, 10s, [&] { return synced_now; }));
  }

  blocking = true; // the next delta holds the handler until unblocked
  for (int i = 1; i <= 20; ++i) {
    f.create(i);
    f.remove(i);
  }
  // Every event is in the informer (and so in the handler's queue) before the handler goes on.
  auto applied = [&] {
    auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
    return stats.events_deleted == 20 && stats.events_added == 20;
  };
  for (int tries = 0; !applied(); ++tries) {
    REQUIRE(tries < 1000);
    std::this_thread::sleep_for(10ms);
  }
  blocking = false;
  unblock.set_value();
  {
    std::unique_lock lock(mutex);
    REQUIRE(changed.wait_for(lock, 10s, [&] { return deleted_total >= 20; }));
  }
  auto stats = request<informer_stats>(*f.system, inf, atoms::stats_atom::value);
  REQUIRE(stats.queues.size() == 1);
  CHECK(stats.queues[0].over_bound > 0); // the bound was reached
  std::lock_guard lock(mutex);
  for (int i = 1; i <= 20; ++i) {
    CHECK(adds[key_of(i)] == 1);
    CHECK(deletes[key_of(i)] == 1);
  }
  CHECK(deleted_total == 20);
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
