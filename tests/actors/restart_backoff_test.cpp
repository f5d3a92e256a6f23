// The cache's restart backoff without an actor system: how long a failed informer waits.

#include "actors/restart_backoff.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace kinformer;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

restart_backoff_config config(milliseconds initial, milliseconds cap, milliseconds reset_after) {
  restart_backoff_config c;
  c.initial = initial;
  c.cap = cap;
  c.reset_after = reset_after;
  return c;
}

} // namespace

TEST_CASE("restart backoff: the defaults are 100 ms doubling to 30 s, reset after 60 s up") {
  restart_backoff_config defaults;
  CHECK(defaults.initial == 100ms);
  CHECK(defaults.cap == 30s);
  CHECK(defaults.reset_after == 60s);
  restart_backoff backoff;
  CHECK(backoff.last_delay() == 0ms);
  CHECK(backoff.on_failure(0ms) == 100ms);
}

TEST_CASE("restart backoff: failures in quick succession double the wait up to the cap") {
  restart_backoff backoff(config(100ms, 1s, 60s));
  std::vector<milliseconds> waits;
  for (int i = 0; i < 7; ++i)
    waits.push_back(backoff.on_failure(5ms));
  CHECK(waits == std::vector<milliseconds>{100ms, 200ms, 400ms, 800ms, 1s, 1s, 1s});
  CHECK(backoff.last_delay() == 1s);
}

TEST_CASE("restart backoff: an informer that stayed up long enough starts again from initial") {
  restart_backoff backoff(config(100ms, 30s, 60s));
  backoff.on_failure(0ms);
  backoff.on_failure(0ms);
  CHECK(backoff.on_failure(59'999ms) == 400ms); // just short of healthy
  CHECK(backoff.on_failure(60s) == 100ms);
  CHECK(backoff.on_failure(1ms) == 200ms);
}

TEST_CASE("restart backoff: odd configurations stay sane") {
  SECTION("a zero initial delay restarts at once, every time") {
    restart_backoff backoff(config(0ms, 30s, 60s));
    for (int i = 0; i < 3; ++i)
      CHECK(backoff.on_failure(0ms) == 0ms);
  }
  SECTION("a cap below the initial delay is raised to it") {
    restart_backoff backoff(config(500ms, 100ms, 60s));
    CHECK(backoff.on_failure(0ms) == 500ms);
    CHECK(backoff.on_failure(0ms) == 500ms);
  }
  SECTION("a negative initial delay counts as zero") {
    restart_backoff backoff(config(-5ms, 1s, 60s));
    CHECK(backoff.on_failure(0ms) == 0ms);
  }
  SECTION("a zero reset_after treats every failure as the first") {
    restart_backoff backoff(config(10ms, 1s, 0ms));
    CHECK(backoff.on_failure(0ms) == 10ms);
    CHECK(backoff.on_failure(0ms) == 10ms);
  }
  SECTION("the doubling stops at a large cap without overflow") {
    restart_backoff backoff(config(1ms, milliseconds::max(), 60s));
    milliseconds last{0};
    for (int i = 0; i < 100; ++i) {
      auto wait = backoff.on_failure(0ms);
      CHECK(wait >= last);
      last = wait;
    }
    CHECK(last == milliseconds::max());
  }
}
