// The event recorder actor against the simulator: Events created, repeats patched into a
// series, writes retried or given up as the server answers.

#include "actors/controller/event_recorder.hpp"

#include "app/kubesim/storage.hpp"
#include "tests/support/sim_actor_fixture.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <map>

using namespace kinformer;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const group_version_resource events_gvr{"events.k8s.io", "v1", "events"};

object_reference pod(std::string name) {
  return {"v1", "Pod", "blue", std::move(name), "uid-" + name, "1"};
}

event_record scaled(std::string pod_name, std::string note = "scaled") {
  return {pod(std::move(pod_name)), event_level::normal, "Scaled", "Scale", std::move(note)};
}

struct fixture : kinformer::testing::sim_actor_fixture {
  std::optional<event_recorder> recorder;

  void start(event_recorder_options options = {}) {
    recorder.emplace(
        spawn_event_recorder(*system, client, {"example.com/test", "replica-0"}, options));
    spawned.push_back(caf::actor_cast<caf::actor>(recorder->actor()));
  }

  // Returns once the recorder has no write queued or in flight.
  void wait_idle() {
    caf::scoped_actor self{*system};
    self->request(recorder->actor(), 30s, atoms::wait_sync_atom::value)
        .receive([](bool) {}, [&](caf::error& err) { FAIL(system->render(err)); });
  }

  event_recorder_stats stats() {
    caf::scoped_actor self{*system};
    event_recorder_stats out;
    self->request(recorder->actor(), 10s, atoms::stats_atom::value)
        .receive([&](const event_recorder_stats& s) { out = s; },
                 [&](caf::error& err) { FAIL(system->render(err)); });
    return out;
  }

  // The Events on the server, by the name of the object they are about.
  std::map<std::string, json::object> events_by_object() {
    std::map<std::string, json::object> out;
    for (const auto& v : server.store().truth(events_gvr)) {
      auto slash = v.key.find('/');
      auto e = server.store().get(events_gvr, v.key.substr(0, slash), v.key.substr(slash + 1));
      REQUIRE(e.ok());
      auto tree = e->object->tree().as_object();
      out[std::string(tree.at("regarding").at("name").as_string())] = tree;
    }
    return out;
  }
};

} // namespace

TEST_CASE_METHOD(fixture, "event recorder: Events are created on the server, a repeat is "
                          "patched into a series") {
  start();
  recorder->record(scaled("web-1"));
  recorder->record(scaled("web-2"));
  recorder->record(scaled("web-1", "scaled again"));
  wait_idle();

  auto events = events_by_object();
  REQUIRE(events.size() == 2);
  const auto& web1 = events.at("web-1");
  CHECK(web1.at("reason") == "Scaled");
  CHECK(web1.at("reportingController") == "example.com/test");
  CHECK(web1.at("reportingInstance") == "replica-0");
  CHECK(web1.at("note") == "scaled"); // the first occurrence's
  CHECK(web1.at("series").at("count") == 2);
  CHECK(!events.at("web-2").contains("series"));

  auto s = stats();
  CHECK(s.recorded == 3);
  CHECK(s.created == 2);
  CHECK(s.series_patched == 1);
  CHECK(s.failed == 0);
  CHECK(s.pending == 0);
  CHECK(s.tracked == 2);
}

TEST_CASE_METHOD(fixture, "event recorder: a write that may pass later (503, 429) is sent again "
                          "after the retry delay") {
  event_recorder_options options;
  options.retry_delay = 10ms;
  start(options);
  server.store().fail_next_writes(3, 503);
  recorder->record(scaled("web-1"));
  wait_idle();
  CHECK(events_by_object().count("web-1") == 1);
  auto s = stats();
  CHECK(s.created == 1);
  CHECK(s.retried == 3);
  CHECK(s.failed == 0);
  CHECK(s.last_error.find("503") != std::string::npos);
}

TEST_CASE_METHOD(fixture, "event recorder: a refused write is given up and counted, out of "
                          "attempts too, the next Event still goes through") {
  event_recorder_options options;
  options.retry_delay = 1ms;
  options.max_attempts = 2;
  start(options);
  server.store().fail_next_writes(1, 403);
  recorder->record(scaled("refused"));
  wait_idle();
  server.store().fail_next_writes(2, 500);
  recorder->record(scaled("out-of-attempts"));
  wait_idle();
  recorder->record(scaled("fine"));
  wait_idle();

  auto events = events_by_object();
  CHECK(events.size() == 1);
  CHECK(events.count("fine") == 1);
  auto s = stats();
  CHECK(s.failed == 2);
  CHECK(s.retried == 1);
  CHECK(s.created == 1);
}

TEST_CASE_METHOD(fixture, "event recorder: a series whose Event was deleted on the server is "
                          "created again with its count") {
  start();
  recorder->record(scaled("web-1"));
  wait_idle();
  for (const auto& v : server.store().truth(events_gvr)) {
    auto slash = v.key.find('/');
    REQUIRE(
        server.store().remove(events_gvr, v.key.substr(0, slash), v.key.substr(slash + 1)).ok());
  }
  recorder->record(scaled("web-1"));
  wait_idle();
  auto events = events_by_object();
  REQUIRE(events.count("web-1") == 1);
  CHECK(events.at("web-1").at("series").at("count") == 2);
  CHECK(stats().created == 2);
}
