#pragma once
// A built-in handler that forwards deltas to an HTTP endpoint as batched JSON POSTs.
//
// Body of one POST: a JSON array of {"type","key","resourceVersion","object"?} in delivery order
// ("object" only with include_objects). A batch goes out when it holds max_batch deltas, or
// flush_interval after its oldest delta arrived. One POST is in flight at a time, so batches
// arrive in order; a failed POST (connection error, timeout, 408, 429, 5xx) is retried with
// exponential backoff and full jitter (protocol/backoff.hpp); any other status drops the batch.
//
// The queue: deltas wait in a queue bounded by queue_bound. A delta whose object already has a
// delta waiting (not yet in a POST) coalesces with it, as in actors/subscription_queue.hpp
// (added+updated -> added, updated+deleted -> deleted, added+deleted -> both gone; a delete
// followed by a re-add is kept as two). Backpressure: a delivered delta is acknowledged to the
// informer only when it leaves the queue (POSTed, coalesced, dropped), and the subscription's
// window is at most queue_bound, so while the endpoint is slow or down the informer's own bounded
// queue holds the backlog and the webhook queue never fills. A sender that ignores its window
// (more than queue_bound deltas unacknowledged) gets its overflow dropped and counted in
// `dropped`.
//
// The HTTP exchange runs on the handler's own I/O thread (webhook_sender), never on the CAF
// scheduler. On shutdown (an exit message) the handler flushes what it holds and waits for the
// last POST, up to drain_timeout, before it quits.

#include "actors/interfaces.hpp"
#include "protocol/backoff.hpp"
#include "protocol/http/tls_settings.hpp"
#include "protocol/result.hpp"

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kinformer {

struct webhook_counters;

struct webhook_options {
  std::string url; // http(s)://host:port/path
  std::string name = "webhook";
  std::size_t max_batch = 100;
  std::chrono::milliseconds flush_interval{1000};
  std::size_t queue_bound = 1000;
  bool include_objects = true;
  backoff_config retry{std::chrono::milliseconds{200}, std::chrono::milliseconds{30'000}, 2.0,
                       std::chrono::milliseconds{120'000}};
  std::size_t max_attempts = 0; // per batch; 0: retry until it succeeds
  // The backoff's random source, uniform in [0, 1); empty: a seeded Mersenne Twister. Tests pin
  // it to make the delays predictable.
  backoff::random_fraction jitter;
  std::chrono::milliseconds request_timeout{10'000};
  // Where the handler counts; empty: counters of its own. Handlers that follow one another (a
  // replica's webhooks across leadership terms) share one set, so the metrics only grow.
  std::shared_ptr<webhook_counters> counters;
  std::chrono::milliseconds drain_timeout{5'000};
  std::vector<std::pair<std::string, std::string>> headers; // extra request headers
  tls_client_settings tls;                                  // https:// only
};

// A snapshot of a webhook handler's counters, for metrics.
struct webhook_stats {
  std::size_t queue_depth = 0;    // deltas waiting, not yet in a POST
  std::size_t in_flight = 0;      // deltas in the POST being sent or retried
  std::uint64_t received = 0;     // deltas delivered to the handler
  std::uint64_t sent = 0;         // deltas in POSTs that succeeded
  std::uint64_t coalesced = 0;    // deltas folded into a waiting delta of the same object
  std::uint64_t dropped = 0;      // deltas refused because the queue was full
  std::uint64_t abandoned = 0;    // deltas in batches given up (permanent error, max_attempts)
  std::uint64_t posts_ok = 0;     // POSTs answered 2xx
  std::uint64_t posts_failed = 0; // POSTs that failed (each retry counts)
  std::uint64_t retries = 0;      // POSTs repeated after a failure
};

// Written by the handler actor, read by anyone (the metrics scrape) through a const pointer.
struct webhook_counters {
  std::atomic<std::size_t> queue_depth{0}, in_flight{0};
  std::atomic<std::uint64_t> received{0}, sent{0}, coalesced{0}, dropped{0}, abandoned{0},
      posts_ok{0}, posts_failed{0}, retries{0};

  webhook_stats snapshot() const;
};

struct webhook_handler {
  handler_actor actor;
  std::shared_ptr<const webhook_counters> counters;
};

// What a webhook asks of its subscription, from `subscription`: its name when it has none, a
// window of at most options.queue_bound (acknowledgements wait for the queue: a larger window
// would only fill it), and no state before a change (a body carries none).
subscription_options webhook_subscription(const webhook_options& options,
                                          subscription_options subscription = {});

// A webhook handler that is not subscribed yet: subscribe it to an informer or the cache, with
// webhook_subscription(). It acknowledges each batch to the actor that delivered it. Fails on a
// malformed URL.
result<webhook_handler> spawn_webhook_handler(caf::actor_system& system, webhook_options options);

// One subscribed to `informer`; the subscription's window is capped at options.queue_bound.
result<webhook_handler> spawn_webhook_handler(caf::actor_system& system, informer_actor informer,
                                              webhook_options options,
                                              subscription_options subscription = {});

} // namespace kinformer
