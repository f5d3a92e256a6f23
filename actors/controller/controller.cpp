#include "actors/controller/controller.hpp"

#include "actors/controller/work_queue.hpp"
#include "actors/handler.hpp"

#include <caf/all.hpp>

#include <exception>
#include <memory>
#include <optional>

namespace kinformer {

watch_source for_kind(kind_request kind) {
  return {std::move(kind), enqueue_for_object()};
}

watch_source owns(kind_request kind, std::string owner_group, std::string owner_kind) {
  return {std::move(kind), enqueue_for_owner(std::move(owner_group), std::move(owner_kind))};
}

watch_source watches(kind_request kind, request_mapper map) {
  return {std::move(kind), std::move(map)};
}

namespace {

using clock = work_queue::clock;

// A worker runs one reconcile at a time on its own thread and answers with its outcome.
using worker_actor =
    caf::typed_actor<caf::replies_to<atoms::reconcile_atom, std::string>::with<reconcile_outcome>>;

reconcile_outcome run_reconciler(const reconciler& reconcile, const std::string& key) {
  reconcile_outcome out;
  try {
    auto result = reconcile(reconcile_request::from_key(key));
    if (!result) {
      out.ok = false;
      out.error = result.err().message;
      return out;
    }
    out.requeue = result->requeue;
    out.requeue_after = result->requeue_after;
  } catch (const std::exception& e) {
    out.ok = false;
    out.error = std::string("the reconciler threw: ") + e.what();
  } catch (...) {
    out.ok = false;
    out.error = "the reconciler threw";
  }
  return out;
}

worker_actor::behavior_type reconcile_worker(worker_actor::pointer, reconciler reconcile) {
  return {[reconcile](atoms::reconcile_atom, const std::string& key) {
    return run_reconciler(reconcile, key);
  }};
}

struct controller_state {
  // Not an aggregate: CAF would otherwise try to construct the state from the actor pointer.
  controller_state() = default;

  static inline const char* name = "kinformer.controller";

  controller_options options;
  std::unique_ptr<work_queue> queue;
  std::vector<worker_actor> workers;
  std::vector<worker_actor> idle_workers;
  std::size_t source_count = 0;
  std::vector<bool> source_synced;
  std::size_t synced_sources = 0;
  std::optional<clock::time_point> timer_due; // the earliest timer in flight
  controller_stats stats;
  // Stopping: workers are told to stop, and the controller ends once the last one has (a
  // reconcile in progress finishes first), so whoever watches the controller knows that no
  // reconcile runs any more once it is down.
  std::vector<caf::actor> sources;
  std::size_t live_workers = 0;
  std::optional<caf::error> stop_reason;
};

using controller_pointer = controller_actor::stateful_pointer<controller_state>;

bool sources_synced(const controller_state& st) {
  return st.synced_sources == st.source_count;
}

// Arms a timer for the earliest delayed key, unless one at least as early is in flight.
void arm_timer(controller_pointer self, clock::time_point now) {
  auto& st = self->state;
  auto due = st.queue->next_due();
  if (!due || (st.timer_due && *st.timer_due <= *due))
    return;
  st.timer_due = due;
  auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(*due - now);
  self->delayed_send(self, std::max(wait, std::chrono::nanoseconds(0)), atoms::timer_atom::value);
}

void dispatch(controller_pointer self);

// controller-runtime's reconcileHandler: what the outcome means for the key.
void on_reconciled(controller_pointer self, worker_actor worker, const std::string& key,
                   const reconcile_outcome& outcome, clock::time_point started) {
  auto& st = self->state;
  if (st.stop_reason)
    return;
  auto now = clock::now();
  st.stats.reconcile_seconds.observe(std::chrono::duration<double>(now - started).count());
  if (!outcome.ok) {
    ++st.stats.reconciles_failed;
    st.stats.last_error = key + ": " + outcome.error;
    st.queue->add_rate_limited(key, now);
  } else if (outcome.requeue_after > std::chrono::nanoseconds(0)) {
    ++st.stats.reconciles_requeued_after;
    st.queue->forget(key);
    st.queue->add_after(key, outcome.requeue_after, now);
  } else if (outcome.requeue) {
    ++st.stats.reconciles_requeued;
    st.queue->add_rate_limited(key, now);
  } else {
    ++st.stats.reconciles_succeeded;
    st.queue->forget(key);
  }
  st.queue->done(key, now);
  st.idle_workers.push_back(std::move(worker));
  dispatch(self);
}

// Hands ready keys to idle workers (once every source has synced), then arms the timer for
// the next delayed key.
void dispatch(controller_pointer self) {
  auto& st = self->state;
  if (st.stop_reason)
    return;
  auto now = clock::now();
  while (sources_synced(st) && !st.idle_workers.empty()) {
    auto key = st.queue->get(now);
    if (!key)
      break;
    auto worker = std::move(st.idle_workers.back());
    st.idle_workers.pop_back();
    self->request(worker, caf::infinite, atoms::reconcile_atom::value, *key)
        .then(
            [self, worker, key = *key, now](const reconcile_outcome& outcome) {
              on_reconciled(self, worker, key, outcome, now);
            },
            [self, worker, key = *key, now](const caf::error& err) {
              reconcile_outcome failed;
              failed.ok = false;
              failed.error = "worker failed: " + self->system().render(err);
              on_reconciled(self, worker, key, failed, now);
            });
  }
  arm_timer(self, now);
}

// A source: a handler subscribed through the cache that maps each batch's deltas to request
// keys and sends them to the controller in one message, then says when it has synced.
handler_actor spawn_source(controller_pointer self, cache_actor cache, watch_source source,
                           std::uint64_t index) {
  auto keys = std::make_shared<std::vector<std::string>>();
  auto controller = caf::actor_cast<controller_actor>(self);
  handler_callbacks callbacks;
  callbacks.on_delta = [keys, map = std::move(source.map)](const delta& d) {
    for (auto& request : map(d))
      keys->push_back(request.key());
  };
  callbacks.on_batch_end = [keys, controller] {
    if (keys->empty())
      return;
    caf::anon_send(controller, atoms::enqueue_atom::value, std::move(*keys));
    keys->clear();
  };
  callbacks.on_synced = [controller, index] {
    caf::anon_send(controller, atoms::synced_atom::value, index);
  };
  auto options = source.subscription;
  if (options.name.empty())
    options.name = self->state.options.name + "/" + source.kind.describe();
  return spawn_handler(self->system(), std::move(cache), std::move(source.kind),
                       std::move(callbacks), std::move(options));
}

// Stops the sources and the workers; the controller ends with `reason` once no worker runs.
void begin_stop(controller_pointer self, caf::error reason) {
  auto& st = self->state;
  if (st.stop_reason)
    return;
  st.stop_reason = std::move(reason);
  for (auto& source : st.sources)
    self->send_exit(source, *st.stop_reason);
  // A busy worker handles its exit after the reconcile it is running.
  for (auto& worker : st.workers)
    self->send_exit(worker, *st.stop_reason);
  st.idle_workers.clear();
  if (st.live_workers == 0)
    self->quit(*st.stop_reason);
}

// A worker ended: expected while stopping; otherwise the controller cannot go on without it.
void on_worker_down(controller_pointer self, const caf::down_msg& down) {
  auto& st = self->state;
  if (st.live_workers > 0)
    --st.live_workers;
  if (!st.stop_reason)
    begin_stop(self, down.reason ? down.reason : caf::error(caf::exit_reason::unknown));
  else if (st.live_workers == 0)
    self->quit(*st.stop_reason);
}

controller_actor::behavior_type controller_behavior(controller_pointer self, cache_actor cache,
                                                    controller_spec spec) {
  auto& st = self->state;
  st.options = spec.options;
  st.queue = std::make_unique<work_queue>(rate_limiter(spec.options.rate_limits));
  st.stats.name = spec.options.name;
  st.stats.workers = std::max<std::size_t>(1, spec.options.workers);
  // Monitored, not linked: the controller outlives its workers while they finish.
  for (std::size_t i = 0; i < st.stats.workers; ++i)
    st.workers.push_back(
        self->spawn<caf::detached + caf::monitored>(reconcile_worker, spec.reconcile));
  st.idle_workers = st.workers;
  st.live_workers = st.workers.size();
  st.source_count = spec.sources.size();
  st.source_synced.assign(st.source_count, false);
  // Linked: a source the cache refuses stops the controller with its error.
  for (std::size_t i = 0; i < spec.sources.size(); ++i) {
    auto source =
        caf::actor_cast<caf::actor>(spawn_source(self, cache, std::move(spec.sources[i]), i));
    self->link_to(source);
    st.sources.push_back(std::move(source));
  }
  // Every exit, a shutdown or a source's failure, stops the workers first.
  self->set_exit_handler([self](caf::exit_msg& msg) { begin_stop(self, std::move(msg.reason)); });
  self->set_down_handler([self](caf::down_msg& down) { on_worker_down(self, down); });
  return {
      [self](atoms::enqueue_atom, std::vector<std::string>& keys) {
        auto now = clock::now();
        for (auto& key : keys)
          self->state.queue->add(key, now);
        dispatch(self);
      },
      [self](atoms::synced_atom, std::uint64_t index) {
        auto& st = self->state;
        if (index < st.source_synced.size() && !st.source_synced[index]) {
          st.source_synced[index] = true;
          ++st.synced_sources;
        }
        dispatch(self);
      },
      [self](atoms::timer_atom) {
        self->state.timer_due.reset();
        dispatch(self);
      },
      [self](atoms::stats_atom) {
        auto& st = self->state;
        auto now = clock::now();
        controller_stats out = st.stats;
        out.busy_workers = st.stop_reason ? 0 : st.workers.size() - st.idle_workers.size();
        out.sources_synced = sources_synced(st);
        out.queue = st.queue->stats();
        out.queue_depth = st.queue->depth();
        out.queue_delayed = st.queue->delayed();
        out.unfinished_work_seconds = st.queue->unfinished_work_seconds(now);
        out.longest_running_seconds = st.queue->longest_running_seconds(now);
        return out;
      },
  };
}

} // namespace

controller_actor spawn_controller(caf::actor_system& system, cache_actor cache,
                                  controller_spec spec) {
  return system.spawn(controller_behavior, std::move(cache), std::move(spec));
}

} // namespace kinformer
