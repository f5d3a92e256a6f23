// The work queue's client-go semantics, driven with explicit times: de-duplication, never two
// hand-outs of one key at once, delays, rate limiting, shutdown, and the metrics.

#include "actors/controller/work_queue.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace kinformer;
using namespace std::chrono_literals;

namespace {

const work_queue::clock::time_point t0{};

rate_limiter_options item_backoff_only(std::chrono::nanoseconds base) {
  rate_limiter_options o;
  o.base_delay = base;
  o.max_delay = 10s;
  o.qps = 0;
  return o;
}

std::vector<std::string> drain(work_queue& q, work_queue::clock::time_point now) {
  std::vector<std::string> out;
  while (auto key = q.get(now))
    out.push_back(*key);
  return out;
}

} // namespace

TEST_CASE("work queue: keys come out in the order added, each once however often added") {
  work_queue q;
  q.add("ns/a", t0);
  q.add("ns/b", t0);
  q.add("ns/a", t0);
  q.add("ns/c", t0);
  q.add("ns/b", t0);
  CHECK(q.depth() == 3);
  CHECK(q.stats().adds == 3);
  CHECK(drain(q, t0) == std::vector<std::string>{"ns/a", "ns/b", "ns/c"});
  CHECK(q.depth() == 0);
  CHECK(q.processing() == 3);
}

TEST_CASE("work queue: a key added while processed waits for done, then goes out once more") {
  work_queue q;
  q.add("k", t0);
  REQUIRE(q.get(t0) == "k");
  q.add("k", t0 + 1ms);
  q.add("k", t0 + 2ms); // still one
  CHECK(q.depth() == 1);
  CHECK_FALSE(q.get(t0 + 3ms).has_value()); // never handed out twice at once
  q.done("k", t0 + 4ms);
  CHECK(q.get(t0 + 5ms) == "k");
  CHECK_FALSE(q.get(t0 + 5ms).has_value());
  q.done("k", t0 + 6ms);
  CHECK(q.processing() == 0);
  CHECK_FALSE(q.get(t0 + 7ms).has_value()); // done without a new add: nothing comes back
}

TEST_CASE("work queue: done for a key not being processed changes nothing") {
  work_queue q;
  q.done("nobody", t0);
  q.add("k", t0);
  q.done("k", t0); // queued, not processing
  CHECK(drain(q, t0) == std::vector<std::string>{"k"});
}

TEST_CASE("work queue: add_after holds a key until it is due, and the earlier time wins") {
  work_queue q;
  q.add_after("late", 100ms, t0);
  q.add_after("soon", 10ms, t0);
  q.add_after("late", 50ms, t0);  // earlier: moves up to 50 ms
  q.add_after("soon", 500ms, t0); // later: ignored
  CHECK(q.delayed() == 2);
  CHECK(q.next_due() == t0 + 10ms);
  CHECK_FALSE(q.get(t0 + 9ms).has_value());
  CHECK(q.get(t0 + 10ms) == "soon");
  CHECK(q.next_due() == t0 + 50ms);
  CHECK_FALSE(q.get(t0 + 49ms).has_value());
  CHECK(q.get(t0 + 60ms) == "late");
  CHECK_FALSE(q.next_due().has_value());
  CHECK(q.stats().retries == 4);
}

TEST_CASE("work queue: a non-positive delay adds at once") {
  work_queue q;
  q.add_after("now", 0ms, t0);
  q.add_after("past", -5ms, t0);
  CHECK(q.delayed() == 0);
  CHECK(drain(q, t0) == std::vector<std::string>{"now", "past"});
}

TEST_CASE("work queue: a delayed key that is already queued comes out once") {
  work_queue q;
  q.add("k", t0);
  q.add_after("k", 10ms, t0);
  CHECK(q.get(t0) == "k");
  q.done("k", t0 + 1ms);
  // Due now: it was not dirty any more, so it is queued again.
  CHECK(q.get(t0 + 10ms) == "k");
  q.done("k", t0 + 11ms);
  CHECK_FALSE(q.get(t0 + 1s).has_value());
}

TEST_CASE("work queue: due keys come out in the order they fell due") {
  work_queue q;
  q.add_after("c", 30ms, t0);
  q.add_after("a", 10ms, t0);
  q.add_after("b", 20ms, t0);
  CHECK(drain(q, t0 + 1s) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("work queue: add_rate_limited backs a failing key off exponentially, forget resets") {
  work_queue q{rate_limiter(item_backoff_only(10ms))};
  auto now = t0;
  std::vector<std::chrono::nanoseconds> waits;
  for (int i = 0; i < 4; ++i) {
    q.add_rate_limited("k", now);
    auto due = *q.next_due();
    waits.push_back(due - now);
    now = due;
    REQUIRE(q.get(now) == "k");
    q.done("k", now);
  }
  CHECK(waits == std::vector<std::chrono::nanoseconds>{10ms, 20ms, 40ms, 80ms});
  CHECK(q.num_requeues("k") == 4);
  q.forget("k");
  CHECK(q.num_requeues("k") == 0);
  q.add_rate_limited("k", now);
  CHECK(*q.next_due() - now == 10ms);
}

TEST_CASE("work queue: after shut_down nothing is accepted, queued keys still drain") {
  work_queue q;
  q.add("a", t0);
  q.add_after("later", 10ms, t0);
  q.shut_down();
  CHECK(q.shutting_down());
  q.add("b", t0);
  q.add_after("c", 0ms, t0);
  q.add_rate_limited("d", t0);
  CHECK(drain(q, t0 + 1s) == std::vector<std::string>{"a"});
}

TEST_CASE("work queue: the metrics time the wait in the queue and the work") {
  work_queue q;
  q.add("a", t0);
  q.add("b", t0 + 1ms);
  REQUIRE(q.get(t0 + 2ms) == "a");
  REQUIRE(q.get(t0 + 3ms) == "b");
  CHECK(q.stats().queue_seconds.count == 2);
  CHECK(q.stats().queue_seconds.sum == Approx(0.004));
  CHECK(q.unfinished_work_seconds(t0 + 10ms) == Approx(0.008 + 0.007));
  CHECK(q.longest_running_seconds(t0 + 10ms) == Approx(0.008));
  q.done("a", t0 + 12ms);
  CHECK(q.stats().work_seconds.count == 1);
  CHECK(q.stats().work_seconds.sum == Approx(0.010));
  CHECK(q.longest_running_seconds(t0 + 20ms) == Approx(0.017));
}
