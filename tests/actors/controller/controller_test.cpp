// The reconcile runner against the embedded simulator, through a real cache: workers start once
// the sources have synced, every object is reconciled at its latest state, failures back off
// and retry, requeues come back, a key is never reconciled twice at once, owned objects map to
// their owner, and a source the cache refuses stops the controller.

#include "app/kubesim/storage.hpp"
#include "tests/support/controller_fixture.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

using namespace kinformer;
using namespace std::chrono_literals;

namespace {

const group_version_resource configmaps_gvr{"", "v1", "configmaps"};

kind_request config_maps() {
  kind_request k;
  k.kind = {"", "v1", "ConfigMap"};
  return k;
}

std::string config_map(const std::string& ns, const std::string& name, const std::string& value,
                       const std::string& owner = "") {
  boost::json::object meta{{"name", name}, {"namespace", ns}};
  if (!owner.empty())
    meta["ownerReferences"] = boost::json::array{boost::json::object{{"apiVersion", "apps/v1"},
                                                                     {"kind", "Deployment"},
                                                                     {"name", owner},
                                                                     {"uid", "uid-" + owner},
                                                                     {"controller", true}}};
  boost::json::object obj{
      {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", meta}, {"data", {{"v", value}}}};
  return boost::json::serialize(obj);
}

// What the reconciler saw, shared with the test thread.
struct journal {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, int> calls;
  std::map<std::string, std::string> last_seen; // key -> resourceVersion read, or "gone"
  std::set<std::string> in_flight;
  bool overlapped = false;    // one key in two reconciles at once
  bool missed_object = false; // an object the cache should have held was not there

  void begin(const std::string& key) {
    std::lock_guard lock(mutex);
    if (!in_flight.insert(key).second)
      overlapped = true;
    ++calls[key];
    changed.notify_all();
  }
  void end(const std::string& key, std::string seen) {
    std::lock_guard lock(mutex);
    in_flight.erase(key);
    last_seen[key] = std::move(seen);
    changed.notify_all();
  }
  int calls_of(const std::string& key) {
    std::lock_guard lock(mutex);
    return calls[key];
  }
  // Waits until `done` holds (checked under the lock after every reconcile).
  template <class Pred>
  bool wait_for(Pred done, std::chrono::seconds limit = 20s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, [&] { return done(*this); });
  }
};

struct fixture : kinformer::testing::controller_fixture {
  journal seen;

  // The reconcilers use `seen`: they must have stopped before it goes.
  ~fixture() { stop_controller(); }

  std::string create(const std::string& ns, const std::string& name,
                     const std::string& owner = "") {
    auto created = server.store().create(configmaps_gvr, ns, config_map(ns, name, "0", owner));
    REQUIRE(created.ok());
    return ns + "/" + name;
  }
  void update(const std::string& ns, const std::string& name, const std::string& value) {
    REQUIRE(server.store().update(configmaps_gvr, ns, name, config_map(ns, name, value)).ok());
  }
  void remove(const std::string& ns, const std::string& name) {
    REQUIRE(server.store().remove(configmaps_gvr, ns, name).ok());
  }
  std::map<std::string, std::string> truth() {
    std::map<std::string, std::string> out;
    for (auto& v : server.store().truth(configmaps_gvr))
      out[v.key] = std::to_string(v.resource_version);
    return out;
  }

  // A reconciler that reads the object from the cache and records what it saw, then asks
  // `decide` what to answer.
  reconciler
  recording(std::function<result<reconcile_result>(const reconcile_request&, int)> decide = {}) {
    return [this, decide](const reconcile_request& req) -> result<reconcile_result> {
      auto key = req.key();
      seen.begin(key);
      int call = seen.calls_of(key);
      auto obj = reader->get(config_maps(), req.namespace_, req.name, 5000ms);
      std::string rv = obj ? std::string((*obj)->meta().resource_version) : "gone";
      if (!obj && obj.err().code != errc::not_found)
        rv = "error: " + obj.err().message;
      result<reconcile_result> answer = reconcile_result{};
      if (decide)
        answer = decide(req, call);
      seen.end(key, rv);
      return answer;
    };
  }

  void start(std::vector<watch_source> sources, reconciler fn, std::size_t workers = 2) {
    controller_spec spec;
    spec.options.name = "test";
    spec.options.workers = workers;
    spec.options.rate_limits.base_delay = 1ms;
    spec.options.rate_limits.max_delay = 50ms;
    spec.options.rate_limits.qps = 0;
    spec.sources = std::move(sources);
    spec.reconcile = std::move(fn);
    controller = spawn_controller(*system, cache, std::move(spec));
  }

  // Every object's latest resourceVersion has been reconciled, and `gone` keys were reconciled
  // after they were deleted.
  bool converged(const std::set<std::string>& gone = {}) {
    auto want = truth();
    return seen.wait_for([&](journal& j) {
      for (const auto& [key, rv] : want)
        if (j.last_seen[key] != rv)
          return false;
      for (const auto& key : gone)
        if (j.last_seen[key] != "gone")
          return false;
      return true;
    });
  }

  controller_stats stats() {
    caf::scoped_actor self{*system};
    std::optional<controller_stats> out;
    self->request(*controller, 10s, atoms::stats_atom::value)
        .receive([&](controller_stats& s) { out = std::move(s); },
                 [&](caf::error& err) { FAIL(system->render(err)); });
    return *out;
  }

  // The stats once the controller is idle: the journal sees a reconcile end just before the
  // controller hears of it, so ask until no worker is busy and nothing is queued.
  controller_stats idle_stats() {
    auto deadline = std::chrono::steady_clock::now() + 20s;
    for (;;) {
      auto s = stats();
      if ((s.busy_workers == 0 && s.queue_depth == 0 && s.queue_delayed == 0) ||
          std::chrono::steady_clock::now() > deadline)
        return s;
      std::this_thread::yield();
    }
  }
};

} // namespace

TEST_CASE_METHOD(fixture, "controller: every object is reconciled once the sources have synced, "
                          "and again at its latest state after changes") {
  for (int i = 0; i < 6; ++i)
    create(i % 2 ? "a" : "b", "cm-" + std::to_string(i));
  start({for_kind(config_maps())}, recording());
  REQUIRE(converged());
  {
    std::lock_guard lock(seen.mutex);
    for (const auto& [key, rv] : seen.last_seen)
      CHECK(rv.rfind("error", 0) != 0); // workers began after sync: every get found its object
  }
  update("b", "cm-0", "1");
  update("b", "cm-0", "2");
  remove("a", "cm-1");
  create("a", "cm-new");
  REQUIRE(converged({"a/cm-1"}));
  auto s = idle_stats();
  CHECK(s.sources_synced);
  CHECK(s.workers == 2);
  CHECK(s.reconciles_succeeded >= 9);
  CHECK(s.reconciles_failed == 0);
  CHECK(s.queue.adds >= 9);
  CHECK(s.reconcile_seconds.count == s.reconciles_succeeded);
}

TEST_CASE_METHOD(fixture, "controller: a failing reconcile is retried with backoff until it "
                          "succeeds") {
  auto flaky = create("a", "flaky");
  auto fine = create("a", "fine");
  start({for_kind(config_maps())},
        recording([&](const reconcile_request& req, int call) -> result<reconcile_result> {
          if (req.key() == flaky && call <= 3)
            return make_error(errc::io, "the API server said no");
          return reconcile_result{};
        }));
  REQUIRE(seen.wait_for([&](journal& j) { return j.calls[flaky] == 4 && j.calls[fine] == 1; }));
  auto s = idle_stats();
  CHECK(s.reconciles_failed == 3);
  CHECK(s.reconciles_succeeded == 2);
  CHECK(s.queue.retries == 3);
  CHECK(s.last_error == "a/flaky: the API server said no");
}

TEST_CASE_METHOD(fixture, "controller: requeue_after and requeue bring a key back, a throwing "
                          "reconciler counts as a failure") {
  auto later = create("a", "later");
  auto again = create("a", "again");
  auto thrower = create("a", "thrower");
  start({for_kind(config_maps())},
        recording([&](const reconcile_request& req, int call) -> result<reconcile_result> {
          if (req.key() == later && call == 1)
            return reconcile_result{false, 20ms};
          if (req.key() == again && call == 1)
            return reconcile_result{true, 0ms};
          if (req.key() == thrower && call == 1)
            throw std::runtime_error("boom");
          return reconcile_result{};
        }));
  REQUIRE(seen.wait_for([&](journal& j) {
    return j.calls[later] == 2 && j.calls[again] == 2 && j.calls[thrower] == 2;
  }));
  auto s = idle_stats();
  CHECK(s.reconciles_requeued_after == 1);
  CHECK(s.reconciles_requeued == 1);
  CHECK(s.reconciles_failed == 1);
  CHECK(s.last_error == "a/thrower: the reconciler threw: boom");
}

TEST_CASE_METHOD(fixture, "controller: with 4 workers and a stream of updates, no key is "
                          "reconciled twice at once and each ends at its latest state") {
  for (int i = 0; i < 3; ++i)
    create("a", "hot-" + std::to_string(i));
  start({for_kind(config_maps())},
        recording([](const reconcile_request&, int) -> result<reconcile_result> {
          std::this_thread::sleep_for(5ms); // the work a reconcile does
          return reconcile_result{};
        }),
        4);
  // Each round's updates are written once a reconcile has started since the last round's and
  // while one is running, so that they arrive while keys are being reconciled.
  auto total_calls = [](journal& j) {
    int n = 0;
    for (const auto& [key, count] : j.calls)
      n += count;
    return n;
  };
  for (int round = 1; round <= 40; ++round) {
    int before = [&] {
      std::lock_guard lock(seen.mutex);
      return total_calls(seen);
    }();
    for (int i = 0; i < 3; ++i)
      update("a", "hot-" + std::to_string(i), std::to_string(round));
    REQUIRE(
        seen.wait_for([&](journal& j) { return total_calls(j) > before && !j.in_flight.empty(); }));
  }
  REQUIRE(converged());
  std::lock_guard lock(seen.mutex);
  CHECK_FALSE(seen.overlapped);
}

TEST_CASE_METHOD(fixture, "controller: owns maps an owned object's changes to its controller "
                          "owner") {
  std::mutex mutex;
  std::multiset<std::string> requests;
  std::condition_variable cv;
  start({owns(config_maps(), "apps", "Deployment")},
        [&](const reconcile_request& req) -> result<reconcile_result> {
          std::lock_guard lock(mutex);
          requests.insert(req.key());
          cv.notify_all();
          return reconcile_result{};
        });
  create("a", "web-config", "web");
  create("a", "unowned");
  create("b", "api-config", "api");
  std::unique_lock lock(mutex);
  REQUIRE(
      cv.wait_for(lock, 20s, [&] { return requests.count("a/web") && requests.count("b/api"); }));
  CHECK(requests.count("a/web-config") == 0);
  CHECK(requests.count("a/unowned") == 0);
}

TEST_CASE_METHOD(fixture, "controller: a source the cache cannot serve stops the controller with "
                          "the cache's error") {
  kind_request unknown;
  unknown.resource = "nosuchthings";
  start({for_kind(unknown)},
        [](const reconcile_request&) -> result<reconcile_result> { return reconcile_result{}; });
  caf::scoped_actor self{*system};
  self->monitor(*controller);
  std::optional<caf::error> reason;
  self->receive([&](caf::down_msg& down) { reason = down.reason; }, caf::after(20s) >> [] {});
  REQUIRE(reason.has_value());
  CHECK(*reason != caf::exit_reason::normal);
  CHECK(*reason);
}

TEST_CASE_METHOD(fixture, "controller: stopping waits for the reconcile in progress, once the "
                          "controller is down no reconcile runs") {
  create("a", "slow");
  std::promise<void> started, release;
  auto release_done = release.get_future().share();
  std::atomic<bool> finished{false};
  start({for_kind(config_maps())},
        [&, release_done](const reconcile_request&) -> result<reconcile_result> {
          started.set_value();
          release_done.wait();
          finished = true;
          return reconcile_result{};
        });
  started.get_future().wait();
  auto stopped = std::async(std::launch::async, [this] { stop_controller(); });
  // While the reconcile is held, the stop must not return (a bounded look, not a sync point).
  CHECK(stopped.wait_for(50ms) == std::future_status::timeout);
  release.set_value();
  stopped.get();
  CHECK(finished);
}
