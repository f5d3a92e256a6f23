#pragma once
// The reconcile runner: controller-runtime's controller (pkg/internal/controller) as actors.
//
// Sources subscribe through the cache (`for_kind`, `owns`, `watches`) and map each delta to
// reconcile requests, which go into a rate-limited work queue (work_queue.hpp) owned by the
// controller actor. Once every source has synced (controller-runtime's WaitForCacheSync), the
// controller hands keys to `workers` worker actors, each on its own thread (the reconciler may
// block: it reads the cache, writes to the API server). A key is never reconciled by two
// workers at once; a key changed while it is reconciled is reconciled once more afterwards.
//
// After a reconcile, as controller-runtime's reconcileHandler:
//   error                      -> retried after the rate limiter's backoff (per key
//                                 exponential, 5 ms doubling to 1000 s, and 10 qps overall);
//   result.requeue_after > 0   -> the backoff is forgotten, the key comes back after that time;
//   result.requeue             -> retried after the rate limiter's backoff;
//   success                    -> the backoff is forgotten.
// A reconciler that throws counts as an error (controller-runtime recovers panics the same way).

#include "actors/cache_messages.hpp"
#include "actors/controller/controller_stats.hpp"
#include "actors/controller/rate_limiter.hpp"
#include "actors/controller/request_mapping.hpp"
#include "actors/interfaces.hpp"
#include "protocol/result.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace kinformer {

// What a reconcile asks of the controller afterwards.
struct reconcile_result {
  bool requeue = false;                      // again, after the rate limiter's backoff
  std::chrono::nanoseconds requeue_after{0}; // again after this long (wins over requeue)
};

using reconciler = std::function<result<reconcile_result>(const reconcile_request&)>;

// One kind the controller watches and how its deltas become requests.
struct watch_source {
  kind_request kind;
  request_mapper map;
  subscription_options subscription = {};
};

// The kind the controller is for: each object is its own request (builder.For).
watch_source for_kind(kind_request kind);
// A kind the controller's objects own: each object's controller owner of `owner_group` /
// `owner_kind` is the request (builder.Owns).
watch_source owns(kind_request kind, std::string owner_group, std::string owner_kind);
// Any kind, mapped by the caller's function (builder.Watches with EnqueueRequestsFromMapFunc).
watch_source watches(kind_request kind, request_mapper map);

struct controller_options {
  std::string name = "controller";
  std::size_t workers = 1; // controller-runtime's MaxConcurrentReconciles
  rate_limiter_options rate_limits;
};

struct controller_spec {
  controller_options options;
  std::vector<watch_source> sources;
  reconciler reconcile;
};

// Starts the controller: its sources subscribe through `cache`, its workers start once they
// have all synced. An exit sent to the controller (or a source's failure) stops its sources and
// workers; a reconcile in progress finishes first, and the controller ends only after the last
// worker has, so once a monitor sees it down no reconcile runs any more.
controller_actor spawn_controller(caf::actor_system& system, cache_actor cache,
                                  controller_spec spec);

} // namespace kinformer
