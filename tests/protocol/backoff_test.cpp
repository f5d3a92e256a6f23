#include "protocol/backoff.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace kinformer;
using std::chrono::milliseconds;
using namespace std::chrono_literals;

namespace {

backoff::random_fraction constant(double fraction) {
  return [fraction] { return fraction; };
}

const watch_clock::time_point t0{};

} // namespace

TEST_CASE("backoff doubles from 0.8 s to the 30 s cap") {
  backoff b({}, constant(0.5));
  std::vector<milliseconds> delays;
  for (int i = 0; i < 9; ++i)
    delays.push_back(b.next_delay(t0 + i * 1s));
  // 1.5 times each step: 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, then 30 s from there on.
  CHECK(delays == std::vector<milliseconds>{1200ms, 2400ms, 4800ms, 9600ms, 19200ms, 38400ms,
                                            45000ms, 45000ms, 45000ms});
  CHECK(b.ceiling() == 30s);
}

TEST_CASE("jitter draws every delay from d up to 2d, as client-go's wait.Jitter(d, 1.0)") {
  SECTION("the bottom of the range is the step itself: never sooner than client-go") {
    backoff b({}, constant(0.0));
    CHECK(b.next_delay(t0) == 800ms);
    CHECK(b.next_delay(t0 + 1s) == 1600ms);
  }
  SECTION("the top of the range is twice the step") {
    backoff b({}, constant(1.0));
    CHECK(b.next_delay(t0) == 1600ms);
    CHECK(b.next_delay(t0 + 1s) == 3200ms);
  }
  SECTION("a source straying outside [0, 1) is clamped") {
    backoff b({}, constant(7.0));
    CHECK(b.next_delay(t0) == 1600ms);
    backoff negative({}, constant(-3.0));
    CHECK(negative.next_delay(t0) == 800ms);
  }
  SECTION("the default random source stays in bounds") {
    backoff b;
    milliseconds step = 800ms;
    for (int i = 0; i < 200; ++i) {
      auto delay = b.next_delay(t0 + i * 1s);
      CHECK(delay >= step);
      CHECK(delay <= 2 * step);
      step = std::min<milliseconds>(step * 2, 30s);
    }
  }
}

TEST_CASE("two minutes without a failure start the sequence again") {
  backoff b({}, constant(0.0));
  CHECK(b.next_delay(t0) == 800ms);
  CHECK(b.next_delay(t0 + 1s) == 1600ms);
  CHECK(b.next_delay(t0 + 2s) == 3200ms);
  SECTION("just under two minutes keeps growing") {
    CHECK(b.next_delay(t0 + 2s + 119s) == 6400ms);
  }
  SECTION("two minutes after the last failure resets") {
    CHECK(b.next_delay(t0 + 2s + 120s) == 800ms);
    CHECK(b.next_delay(t0 + 2s + 121s) == 1600ms);
  }
  SECTION("reset() forgets at once") {
    b.reset();
    CHECK(b.ceiling() == 800ms);
    CHECK(b.next_delay(t0 + 3s) == 800ms);
  }
}

TEST_CASE("a server's Retry-After is a lower bound") {
  backoff b({}, constant(0.5));
  CHECK(b.next_delay(t0, 5s) == 5s);             // longer than the jittered 1.2 s: wins
  CHECK(b.next_delay(t0 + 1s, 100ms) == 2400ms); // shorter than the jittered 2.4 s: ignored
  CHECK(b.next_delay(t0 + 2s, 90s) == 90s);      // not capped: the server knows its load
  CHECK(b.ceiling() == 6400ms);                  // Retry-After does not disturb the growth
}

TEST_CASE("backoff parameters are configurable") {
  backoff_config config;
  config.initial = 100ms;
  config.cap = 250ms;
  config.factor = 3.0;
  config.reset_after = 10s;
  backoff b(config, constant(0.0));
  CHECK(b.next_delay(t0) == 100ms);
  CHECK(b.next_delay(t0 + 1s) == 250ms);
  CHECK(b.next_delay(t0 + 2s) == 250ms);
  CHECK(b.next_delay(t0 + 12s) == 100ms);
}
