// The controller rate limiter against client-go's DefaultControllerRateLimiter: per-item
// exponential backoff (5 ms doubling to 1000 s) and an overall bucket (10 qps, burst 100).

#include "actors/controller/rate_limiter.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace kinformer;
using namespace std::chrono_literals;
using std::chrono::nanoseconds;

namespace {

const rate_limiter::clock::time_point t0{};

rate_limiter_options no_bucket(nanoseconds base, nanoseconds max) {
  rate_limiter_options o;
  o.base_delay = base;
  o.max_delay = max;
  o.qps = 0;
  return o;
}

} // namespace

TEST_CASE("rate limiter: the defaults are client-go's controller defaults") {
  rate_limiter_options o;
  CHECK(o.base_delay == 5ms);
  CHECK(o.max_delay == 1000s);
  CHECK(o.qps == 10);
  CHECK(o.burst == 100);
}

TEST_CASE("rate limiter: an item's wait doubles with each failure up to the cap") {
  rate_limiter limiter(no_bucket(5ms, 100ms));
  std::vector<nanoseconds> waits;
  for (int i = 0; i < 7; ++i)
    waits.push_back(limiter.when("a", t0));
  CHECK(waits == std::vector<nanoseconds>{5ms, 10ms, 20ms, 40ms, 80ms, 100ms, 100ms});
  CHECK(limiter.num_requeues("a") == 7);
}

TEST_CASE("rate limiter: items back off independently, and forget starts one over") {
  rate_limiter limiter(no_bucket(1ms, 1s));
  CHECK(limiter.when("a", t0) == 1ms);
  CHECK(limiter.when("a", t0) == 2ms);
  CHECK(limiter.when("b", t0) == 1ms);
  limiter.forget("a");
  CHECK(limiter.num_requeues("a") == 0);
  CHECK(limiter.num_requeues("b") == 1);
  CHECK(limiter.when("a", t0) == 1ms);
  limiter.forget("never-seen"); // harmless
}

TEST_CASE("rate limiter: a huge failure count saturates at the cap instead of overflowing") {
  rate_limiter limiter(no_bucket(5ms, 1000s));
  nanoseconds last{};
  for (int i = 0; i < 200; ++i)
    last = limiter.when("a", t0);
  CHECK(last == 1000s);
}

TEST_CASE("token bucket: a full bucket lets a burst through, then one token per 1/qps") {
  token_bucket bucket(10, 3);
  CHECK(bucket.reserve(t0) == 0ns);
  CHECK(bucket.reserve(t0) == 0ns);
  CHECK(bucket.reserve(t0) == 0ns);
  // Empty: the next token is 100 ms away, the one after 200 ms (reservations queue up).
  CHECK(bucket.reserve(t0) == 100ms);
  CHECK(bucket.reserve(t0) == 200ms);
  // 500 ms later the debt of two tokens is paid and three more have accrued.
  CHECK(bucket.reserve(t0 + 500ms) == 0ns);
  CHECK(bucket.reserve(t0 + 500ms) == 0ns);
  CHECK(bucket.reserve(t0 + 500ms) == 0ns);
  CHECK(bucket.reserve(t0 + 500ms) == 100ms);
}

TEST_CASE("token bucket: it never holds more than its burst") {
  token_bucket bucket(10, 2);
  CHECK(bucket.reserve(t0) == 0ns);
  CHECK(bucket.reserve(t0 + 1h) == 0ns);
  CHECK(bucket.reserve(t0 + 1h) == 0ns);
  CHECK(bucket.reserve(t0 + 1h) == 100ms);
}

TEST_CASE("rate limiter: the larger of the item's backoff and the bucket's wait wins") {
  rate_limiter_options o;
  o.base_delay = 1ms;
  o.max_delay = 1s;
  o.qps = 10;
  o.burst = 2;
  rate_limiter limiter(o);
  CHECK(limiter.when("a", t0) == 1ms);   // bucket has a token: the item's 1 ms
  CHECK(limiter.when("b", t0) == 1ms);   // the last token
  CHECK(limiter.when("c", t0) == 100ms); // a storm of new items is held to qps
  CHECK(limiter.when("d", t0) == 200ms);
  for (int i = 0; i < 10; ++i)
    limiter.when("a", t0 + 1h); // a's own backoff grows past the bucket's wait
  CHECK(limiter.when("a", t0 + 1h) == 1s);
}
