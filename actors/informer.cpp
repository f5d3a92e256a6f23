#include "actors/informer.hpp"

#include "actors/change_window.hpp"
#include "actors/error_bridge.hpp"
#include "actors/reflector.hpp"
#include "actors/subscription_queue.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <deque>
#include <map>
#include <optional>

namespace kinformer {

namespace {

struct subscription {
  handler_actor handler;
  subscription_options options;
  subscription_queue queue;
  bool synced_sent = false;
  bool overflowing = false; // reported to the observer; cleared once the queue drains
  // Batches sent and not yet acknowledged: when, and how many deltas.
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::size_t>> in_flight;
  histogram delivery_lag{delivery_lag_bounds()};

  subscription(handler_actor h, subscription_options o)
      : handler(std::move(h)), options(std::move(o)),
        queue(std::max<std::size_t>(1, options.queue_bound)) {
    queue.grant(std::max<std::size_t>(1, options.window));
  }
};

struct informer_state {
  // Not an aggregate: CAF would otherwise try to construct the state from the actor pointer
  // (C++20 allows parenthesised aggregate initialisation).
  informer_state() = default;

  static inline const char* name = "kinformer.informer";

  informer_config config;
  std::unique_ptr<kinformer::store> objects;
  std::uint64_t replace_list = 0; // the reflector's list whose batches the store is applying
  // Filled with the store's objects while a relist runs, so that its decode thread hands on
  // unchanged items as the objects stored instead of making them again; emptied when it ends.
  std::shared_ptr<held_objects_slot> held = std::make_shared<held_objects_slot>();
  std::optional<change_window> changes; // for subscriptions resuming from a resourceVersion
  reflector_actor reflector;
  std::map<subscription_id, subscription> subscriptions;
  subscription_id next_subscription = 1;
  std::vector<caf::typed_response_promise<bool>> sync_waiters;
  informer_stats stats;
  // Events processed but not yet acknowledged to the reflector.
  std::uint64_t unacknowledged = 0;
};

using informer_pointer = informer_actor::stateful_pointer<informer_state>;

// Sends what the subscription's credit allows, then the synced marker once its initial deltas
// are all out.
void pump(informer_pointer self, subscription_id id, subscription& sub) {
  while (sub.queue.ready()) {
    delta_batch batch;
    batch.reserve(std::min(sub.queue.depth(), sub.options.max_batch));
    while (batch.size() < sub.options.max_batch) {
      auto next = sub.queue.pop();
      if (!next)
        break;
      batch.push_back(std::move(*next));
    }
    sub.in_flight.emplace_back(std::chrono::steady_clock::now(), batch.size());
    self->send(sub.handler, atoms::deliver_atom::value, id, std::move(batch));
  }
  if (sub.queue.depth() == 0)
    sub.overflowing = false;
  if (!sub.synced_sent && self->state.objects->has_synced() && sub.queue.initial_pending() == 0) {
    sub.synced_sent = true;
    self->send(sub.handler, atoms::synced_atom::value, id);
  }
}

void fan_out(informer_pointer self, const delta& d) {
  auto& st = self->state;
  for (auto& [id, sub] : st.subscriptions) {
    // A relist's unchanged objects (sync) go only to handlers that asked for resyncs, for whom
    // a relist is one. client-go sends them to the listeners whose resync was due at its last
    // check; a handler without a resync period never sees one either way.
    if (d.type == delta_type::sync && sub.options.resync_period.count() == 0)
      continue;
    if (d.old_object && !sub.options.old_objects.keeps(*d.old_object))
      sub.queue.push(delta{d.type, d.object, nullptr, d.initial_list, d.final_state_unknown});
    else
      sub.queue.push(d);
    if (!sub.overflowing && sub.queue.depth() >= sub.options.queue_bound) {
      sub.overflowing = true;
      if (st.config.observer && st.config.observer->on_overflow)
        st.config.observer->on_overflow(st.config, sub.options.name);
    }
  }
}

// Matches an acknowledgement of `n` deltas to the batches in flight, oldest first, and records
// how long each fully acknowledged batch took.
void record_acknowledged(subscription& sub, std::uint64_t n) {
  auto now = std::chrono::steady_clock::now();
  while (n > 0 && !sub.in_flight.empty()) {
    auto& [sent, count] = sub.in_flight.front();
    if (count > n) {
      count -= n;
      return;
    }
    n -= count;
    sub.delivery_lag.observe(std::chrono::duration<double>(now - sent).count());
    sub.in_flight.pop_front();
  }
}

void pump_all(informer_pointer self) {
  for (auto& [id, sub] : self->state.subscriptions)
    pump(self, id, sub);
}

// Applies one watch event to the store and queues its delta; false when it changed nothing.
bool apply_watch_event(informer_pointer self, const informer_event& ev) {
  auto& st = self->state;
  auto applied = st.objects->apply(ev.type, ev.object);
  if (!applied)
    return false;
  switch (ev.type) {
  case event_type::added:
    ++st.stats.events_added;
    break;
  case event_type::modified:
    ++st.stats.events_modified;
    break;
  case event_type::deleted:
    ++st.stats.events_deleted;
    break;
  default:
    break;
  }
  if (st.changes)
    st.changes->record(*applied);
  st.stats.last_event = std::chrono::steady_clock::now();
  fan_out(self, *applied);
  return true;
}

void acknowledge(informer_pointer self) {
  auto& st = self->state;
  ++st.unacknowledged;
  if (st.unacknowledged >= std::max<std::size_t>(1, st.config.event_window / 4)) {
    self->send(st.reflector, atoms::credit_atom::value, st.unacknowledged);
    st.unacknowledged = 0;
  }
}

void queue_initial_state(subscription& sub, const kinformer::store& objects) {
  for (auto& obj : objects.list()) {
    delta d;
    d.type = delta_type::added;
    d.object = std::move(obj);
    d.initial_list = true;
    sub.queue.push(std::move(d));
  }
}

void queue_resync(subscription& sub, const kinformer::store& objects) {
  for (auto& obj : objects.list()) {
    delta d;
    d.type = delta_type::sync;
    d.old_object = obj;
    d.object = std::move(obj);
    sub.queue.push(std::move(d));
  }
}

} // namespace

informer_actor spawn_informer(caf::actor_system& system, std::shared_ptr<api_client> client,
                              informer_config config) {
  auto behavior = [](informer_pointer self, std::shared_ptr<api_client> client,
                     informer_config config) -> informer_actor::behavior_type {
    auto& st = self->state;
    st.config = std::move(config);
    st.objects = std::make_unique<kinformer::store>(st.config.store);
    if (st.config.change_window > 0)
      st.changes.emplace(st.config.change_window);
    st.reflector = spawn_reflector(self, std::move(client), st.config, self, st.held);
    self->send(st.reflector, atoms::start_atom::value);
    self->set_down_handler([self](const caf::down_msg& down) {
      auto& subs = self->state.subscriptions;
      for (auto it = subs.begin(); it != subs.end();) {
        if (it->second.handler.address() == down.source)
          it = subs.erase(it);
        else
          ++it;
      }
    });
    return {
        // ---- handlers ----
        [self](atoms::subscribe_atom, handler_actor handler,
               subscription_options options) -> caf::result<subscription_id> {
          auto& st = self->state;
          std::vector<delta> replay;
          if (options.resume_from && !options.from_now) {
            // Before the first list there is no history to resume from.
            if (!st.objects->has_synced())
              return to_caf_error(
                  make_error(errc::expired, "too old resource version: " + *options.resume_from +
                                                " (the informer has not listed yet)"));
            if (!st.changes)
              return to_caf_error(make_error(
                  errc::expired, "too old resource version: " + *options.resume_from +
                                     " (the informer keeps no changes: its change_window is 0)"));
            auto found = st.changes->changes_since(*options.resume_from);
            if (!found)
              return to_caf_error(found.err());
            replay = std::move(found).value();
          }
          auto id = st.next_subscription++;
          self->monitor(handler);
          auto period = options.resync_period;
          auto [it, _] = st.subscriptions.try_emplace(id, std::move(handler), std::move(options));
          if (it->second.options.from_now) {
            // Nothing before this moment: the subscription is synced at once, empty.
          } else if (it->second.options.resume_from) {
            // The subscriber holds the state at that version: only what changed since.
            for (auto& d : replay)
              it->second.queue.push(std::move(d));
          } else if (st.objects->has_synced() || st.objects->replacing()) {
            // Mid-list, what the batches stored so far; the rest of the list follows as deltas.
            queue_initial_state(it->second, *st.objects);
          }
          if (period.count() > 0)
            self->delayed_send(self, period, atoms::resync_atom::value, id);
          // Deliveries go out after the reply: CAF keeps the order of one sender's messages.
          self->send(self, atoms::ack_atom::value, id, std::uint64_t{0});
          st.stats.subscriptions = st.subscriptions.size();
          return id;
        },
        [self](atoms::unsubscribe_atom, subscription_id id) {
          auto& st = self->state;
          st.subscriptions.erase(id);
          st.stats.subscriptions = st.subscriptions.size();
        },
        [self](atoms::ack_atom, subscription_id id, std::uint64_t n) {
          auto& subs = self->state.subscriptions;
          auto it = subs.find(id);
          if (it == subs.end())
            return;
          record_acknowledged(it->second, n);
          it->second.queue.grant(n);
          pump(self, id, it->second);
        },
        [self](atoms::resync_atom, subscription_id id) {
          auto& st = self->state;
          auto it = st.subscriptions.find(id);
          if (it == st.subscriptions.end())
            return;
          if (st.objects->has_synced()) {
            queue_resync(it->second, *st.objects);
            pump(self, id, it->second);
          }
          self->delayed_send(self, it->second.options.resync_period, atoms::resync_atom::value, id);
        },
        [self](atoms::progress_atom, subscription_id id) -> std::string {
          auto& st = self->state;
          auto it = st.subscriptions.find(id);
          if (it == st.subscriptions.end() || it->second.queue.depth() > 0 ||
              !it->second.synced_sent)
            return {};
          return st.objects->resource_version();
        },
        // ---- reads ----
        [self](atoms::get_atom, const std::string& key) -> object_ptr {
          return self->state.objects->get(key);
        },
        [self](atoms::list_atom, list_options& options) -> caf::result<object_list> {
          // The snapshot costs O(#shards); walking it is O(n), so a short-lived worker does
          // that while the informer goes on applying events.
          auto promise = self->make_response_promise<object_list>();
          self->spawn([promise, snapshot = self->state.objects->snapshot(),
                       options = std::move(options)](caf::event_based_actor*) mutable {
            auto items = snapshot.list(options.namespace_, options.labels, options.fields);
            if (options.limit > 0 && items.size() > options.limit)
              items.resize(options.limit);
            promise.deliver(std::move(items));
          });
          return promise;
        },
        [self](atoms::list_atom, list_options& options,
               atoms::snapshot_atom) -> caf::result<versioned_list> {
          auto promise = self->make_response_promise<versioned_list>();
          self->spawn([promise, snapshot = self->state.objects->snapshot(),
                       options = std::move(options)](caf::event_based_actor*) mutable {
            versioned_list out{snapshot.list(options.namespace_, options.labels, options.fields),
                               snapshot.resource_version()};
            if (options.limit > 0 && out.items.size() > options.limit)
              out.items.resize(options.limit);
            promise.deliver(std::move(out));
          });
          return promise;
        },
        [self](atoms::snapshot_atom) -> store_snapshot { return self->state.objects->snapshot(); },
        [self](atoms::stats_atom) -> informer_stats {
          auto& st = self->state;
          st.stats.synced = st.objects->has_synced();
          st.stats.objects = st.objects->size();
          st.stats.resource_version = st.objects->resource_version();
          st.stats.list_items_reused = st.objects->listed_as_stored();
          st.stats.queues.clear();
          for (const auto& [id, sub] : st.subscriptions) {
            auto q = sub.queue.stats();
            st.stats.queues.push_back({id, sub.options.name, q.depth, q.high_water, q.delivered,
                                       q.coalesced, q.over_bound, sub.synced_sent,
                                       sub.delivery_lag});
          }
          return st.stats;
        },
        [self](atoms::wait_sync_atom) -> caf::result<bool> {
          auto& st = self->state;
          if (st.objects->has_synced())
            return true;
          auto promise = self->make_response_promise<bool>();
          st.sync_waiters.push_back(promise);
          return promise;
        },
        [self](atoms::add_index_atom, std::string& name, index_func& fn) -> caf::result<bool> {
          auto added = self->state.objects->add_index(std::move(name), std::move(fn));
          if (!added)
            return to_caf_error(added.err());
          return true;
        },
        // ---- from the reflector ----
        [self](atoms::list_batch_atom, std::uint64_t list, object_list& items) {
          auto& st = self->state;
          if (list != st.replace_list || !st.objects->replacing()) {
            st.objects->begin_replace(); // an earlier list that broke off is dropped
            st.replace_list = list;
          }
          for (const auto& d : st.objects->replace_batch(items))
            fan_out(self, d);
          pump_all(self);
        },
        [self](atoms::replace_atom, std::uint64_t list, object_list& items,
               std::string& resource_version) {
          auto& st = self->state;
          bool first = !st.objects->has_synced();
          if (list != st.replace_list || !st.objects->replacing()) {
            st.objects->begin_replace();
            st.replace_list = list;
          }
          auto deltas = st.objects->replace_batch(items);
          auto deletions = st.objects->finish_replace(std::move(resource_version));
          st.held->empty(); // the old shards and objects it kept can go
          deltas.insert(deltas.end(), std::make_move_iterator(deletions.begin()),
                        std::make_move_iterator(deletions.end()));
          // Deletions inferred by a relist have no resourceVersion: history restarts here.
          if (st.changes)
            st.changes->reset(st.objects->resource_version());
          for (const auto& d : deltas)
            fan_out(self, d);
          ++st.stats.lists;
          if (!first)
            ++st.stats.relists;
          pump_all(self);
          if (first) {
            for (auto& promise : st.sync_waiters)
              promise.deliver(true);
            st.sync_waiters.clear();
          }
        },
        [self](atoms::event_atom, informer_event& ev) {
          if (apply_watch_event(self, ev))
            pump_all(self);
          acknowledge(self);
        },
        // A socket read's worth of events: applied in order, delivered in one pump.
        [self](atoms::events_atom, std::vector<informer_event>& events) {
          bool changed = false;
          for (auto& ev : events) {
            changed = apply_watch_event(self, ev) || changed;
            acknowledge(self);
          }
          if (changed)
            pump_all(self);
        },
        [self](atoms::bookmark_atom, std::string& resource_version) {
          auto& st = self->state;
          st.objects->set_resource_version(std::move(resource_version));
          ++st.stats.bookmarks;
          st.stats.last_event = std::chrono::steady_clock::now();
          acknowledge(self);
        },
        [self](atoms::report_atom, const reflector_report& r) {
          auto& st = self->state;
          switch (r.kind) {
          case reflector_report::what::list_started:
            if (r.reason != restart_reason::initial)
              ++st.stats.relists_by_reason[to_string(r.reason)];
            // Before the list's first bytes, most likely: the report went out before its request.
            if (st.objects->size() > 0)
              st.held->fill(st.objects->held_view());
            break;
          case reflector_report::what::list_completed:
            st.stats.list_seconds.observe(std::chrono::duration<double>(r.duration).count());
            break;
          case reflector_report::what::watch_started:
            ++st.stats.watch_starts_by_reason[to_string(r.reason)];
            break;
          case reflector_report::what::watch_ended:
            ++st.stats.watch_restarts;
            break;
          case reflector_report::what::retry_scheduled:
            ++st.stats.retries;
            st.held->empty(); // a failed list holds nothing back until the next one starts
            break;
          default:
            break;
          }
          if (st.config.observer && st.config.observer->on_report)
            st.config.observer->on_report(st.config, r);
        },
    };
  };
  return system.spawn(behavior, std::move(client), std::move(config));
}

} // namespace kinformer
