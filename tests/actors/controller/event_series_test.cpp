// event_series: what client-go's events/v1 broadcaster writes for each occurrence, with the
// time passed in.

#include "actors/controller/event_series.hpp"
#include "protocol/micro_time.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace kinformer;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

using time_point = event_series::time_point;

// 2026-11-25T21:00:00Z and a bit.
const time_point t0 = time_point{} + std::chrono::seconds(1795640400) + 123456789ns;

object_reference pod(std::string name = "web-1", std::string ns = "blue") {
  return {"v1", "Pod", std::move(ns), std::move(name), "uid-1", "42"};
}

event_record started(object_reference regarding = pod(), std::string note = "started") {
  return {std::move(regarding), event_level::normal, "Started", "Start", std::move(note)};
}

event_series::timings short_timings() {
  event_series::timings t;
  t.finish_after = 360s;
  t.refresh_every = 1800s;
  return t;
}

json::object body_of(const event_write& w) {
  return json::parse(w.body).as_object();
}

} // namespace

TEST_CASE("event_series: the first occurrence creates an events.k8s.io/v1 Event as client-go "
          "does") {
  event_series series({"example.com/ctl", "pod-a"});
  auto w = series.record(started(), t0);
  REQUIRE(w);
  CHECK(w->kind == event_write::verb::create);
  CHECK(w->namespace_ == "blue");
  // "<regarding name>.<unix nanoseconds in hex>"
  CHECK(w->name == "web-1.18eb656e21b2ed15");
  auto e = body_of(*w);
  CHECK(e.at("apiVersion") == "events.k8s.io/v1");
  CHECK(e.at("kind") == "Event");
  CHECK(e.at("metadata").at("name").as_string() == w->name);
  CHECK(e.at("metadata").at("namespace") == "blue");
  CHECK(e.at("eventTime") == "2026-11-25T21:00:00.123456Z");
  CHECK(e.at("reportingController") == "example.com/ctl");
  CHECK(e.at("reportingInstance") == "pod-a");
  CHECK(e.at("action") == "Start");
  CHECK(e.at("reason") == "Started");
  CHECK(e.at("note") == "started");
  CHECK(e.at("type") == "Normal");
  CHECK(!e.contains("series"));
  const auto& r = e.at("regarding").as_object();
  CHECK(r.at("apiVersion") == "v1");
  CHECK(r.at("kind") == "Pod");
  CHECK(r.at("namespace") == "blue");
  CHECK(r.at("name") == "web-1");
  CHECK(r.at("uid") == "uid-1");
  CHECK(r.at("resourceVersion") == "42");
  CHECK(series.tracked() == 1);
}

TEST_CASE("event_series: an Event about a cluster-scoped object goes to the default namespace, "
          "a warning says so, and a long note is cut to 1 KiB on a character boundary") {
  event_series series({"ctl", "i"});
  std::string note(1023, 'x');
  note += "\xC3\xA9"; // é: its second byte would be the 1025th
  event_record e{
      {"v1", "Node", "", "node-1", "u", "7"}, event_level::warning, "Down", "Check", note};
  auto w = series.record(e, t0);
  REQUIRE(w);
  CHECK(w->namespace_ == "default");
  auto body = body_of(*w);
  CHECK(body.at("type") == "Warning");
  CHECK(body.at("note").as_string().size() == 1023);
  CHECK(!body.at("regarding").as_object().contains("namespace"));
}

TEST_CASE("event_series: a repeat becomes a series, later repeats only count until the series "
          "has been quiet for finish_after, when it is written once more and forgotten") {
  event_series series({"ctl", "i"}, short_timings());
  auto first = series.record(started(), t0);
  REQUIRE(first);

  // The note is not part of what makes two Events the same (client-go's getKey).
  auto second = series.record(started(pod(), "started again"), t0 + 10s);
  REQUIRE(second);
  CHECK(second->kind == event_write::verb::patch_series);
  CHECK(second->name == first->name);
  CHECK(second->namespace_ == "blue");
  CHECK(second->body ==
        R"({"series":{"count":2,"lastObservedTime":"2026-11-25T21:00:10.123456Z"}})");

  CHECK_FALSE(series.record(started(), t0 + 20s));
  CHECK_FALSE(series.record(started(), t0 + 30s));
  CHECK(series.flush(t0 + 30s + 359s).empty()); // not quiet long enough

  auto finished = series.flush(t0 + 30s + 360s);
  REQUIRE(finished.size() == 1);
  CHECK(finished[0].kind == event_write::verb::patch_series);
  CHECK(finished[0].body ==
        R"({"series":{"count":4,"lastObservedTime":"2026-11-25T21:00:30.123456Z"}})");
  CHECK(series.tracked() == 0);

  auto again = series.record(started(), t0 + 400s);
  REQUIRE(again);
  CHECK(again->kind == event_write::verb::create);
  CHECK(again->name != first->name);
}

TEST_CASE("event_series: another reason, action, object or object version is another Event") {
  event_series series({"ctl", "i"});
  REQUIRE(series.record(started(), t0));
  auto other_reason = started();
  other_reason.reason = "Restarted";
  CHECK(series.record(other_reason, t0 + 1s)->kind == event_write::verb::create);
  auto other_action = started();
  other_action.action = "Restart";
  CHECK(series.record(other_action, t0 + 2s)->kind == event_write::verb::create);
  CHECK(series.record(started(pod("web-2")), t0 + 3s)->kind == event_write::verb::create);
  auto newer = pod();
  newer.resource_version = "43";
  CHECK(series.record(started(newer), t0 + 4s)->kind == event_write::verb::create);
  CHECK(series.tracked() == 5);
}

TEST_CASE("event_series: a single Event is forgotten after finish_after without a write, live "
          "series are written again every refresh_every") {
  event_series series({"ctl", "i"}, short_timings());
  REQUIRE(series.record(started(pod("single")), t0));
  REQUIRE(series.record(started(pod("busy")), t0));
  REQUIRE(series.record(started(pod("busy")), t0 + 1s));
  // Keep "busy" observed so it never goes quiet.
  for (auto t = t0 + 300s; t < t0 + 1800s; t += 300s) {
    CHECK_FALSE(series.record(started(pod("busy")), t));
    for (const auto& w : series.flush(t))
      FAIL("unexpected write to " << w.name);
    if (t >= t0 + 360s)
      CHECK(series.tracked() == 1); // "single" is gone, silently
  }
  auto refreshed = series.flush(t0 + 1800s);
  REQUIRE(refreshed.size() == 1);
  CHECK(refreshed[0].name.starts_with("busy."));
  CHECK(body_of(refreshed[0]).at("series").at("count") == 7);
  CHECK(series.flush(t0 + 1801s).empty());
}

TEST_CASE("event_series: a series patch the server no longer knows is created whole, with its "
          "series") {
  event_series series({"ctl", "i"});
  REQUIRE(series.record(started(), t0));
  auto patch = series.record(started(), t0 + 5s);
  REQUIRE(patch);
  auto create = series.recreate(*patch);
  REQUIRE(create);
  CHECK(create->kind == event_write::verb::create);
  CHECK(create->name == patch->name);
  auto body = body_of(*create);
  CHECK(body.at("series").at("count") == 2);
  CHECK(body.at("series").at("lastObservedTime") == "2026-11-25T21:00:05.123456Z");
  CHECK(body.at("eventTime") == "2026-11-25T21:00:00.123456Z");

  event_write unknown{event_write::verb::patch_series, "blue", "gone.1", "{}"};
  CHECK_FALSE(series.recreate(unknown));
}

TEST_CASE("event_series: micro_time is RFC 3339 in UTC with microseconds") {
  CHECK(micro_time(time_point{}) == "1970-01-01T00:00:00.000000Z");
  CHECK(micro_time(t0) == "2026-11-25T21:00:00.123456Z");
}
