#include "app/kinformerd/webhook_handler.hpp"

#include "app/kinformerd/webhook_sender.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <deque>
#include <unordered_map>

namespace kinformer {

webhook_stats webhook_counters::snapshot() const {
  webhook_stats s;
  s.queue_depth = queue_depth.load();
  s.in_flight = in_flight.load();
  s.received = received.load();
  s.sent = sent.load();
  s.coalesced = coalesced.load();
  s.dropped = dropped.load();
  s.abandoned = abandoned.load();
  s.posts_ok = posts_ok.load();
  s.posts_failed = posts_failed.load();
  s.retries = retries.load();
  return s;
}

namespace {

// The handler's own messages (atoms at most 10 characters).
using posted_atom = caf::atom_constant<caf::atom("whposted")>;
using flush_atom = caf::atom_constant<caf::atom("whflush")>;
using retry_atom = caf::atom_constant<caf::atom("whretry")>;
using deadline_atom = caf::atom_constant<caf::atom("whdeadline")>;

using webhook_actor = handler_actor::extend<
    // A POST finished: its id, the HTTP status (0: none) and why there was none.
    caf::reacts_to<posted_atom, std::uint64_t, int, std::string>,
    // The flush timer of the given generation fired.
    caf::reacts_to<flush_atom, std::uint64_t>,
    // Time to repeat the failed POST of the given id.
    caf::reacts_to<retry_atom, std::uint64_t>,
    // Shutdown: stop waiting for the queue to drain.
    caf::reacts_to<deadline_atom>>;

// What every deliverer of batches (informer, relay, gateway) accepts.
using ack_receiver =
    caf::typed_actor<caf::reacts_to<atoms::ack_atom, subscription_id, std::uint64_t>>;

// Whom to acknowledge: a subscription at the actor that delivered its batches.
struct ack_target {
  caf::actor_addr deliverer;
  ack_receiver to;
  subscription_id id = 0;
  std::uint64_t owed = 0;
};

// One delta waiting for, or in, a POST.
struct waiting_delta {
  delta d;
  std::size_t target = 0; // index into webhook_state::targets
  std::string key;        // target + object key: coalescing never crosses subscriptions
  std::chrono::steady_clock::time_point arrived;
  bool live = true; // false once cancelled against a later delete
};

struct webhook_state {
  // Not an aggregate: CAF would otherwise try to construct the state from the actor pointer.
  webhook_state() = default;
  static inline const char* name = "kinformer.webhook";

  webhook_options options;
  std::shared_ptr<webhook_counters> counters;
  std::shared_ptr<webhook_sender> sender; // its only owner: shared just to pass it in
  std::unique_ptr<backoff> retry;
  std::vector<ack_target> targets;

  // Waiting deltas in arrival order; `head` is the sequence number of queue.front().
  std::deque<waiting_delta> queue;
  std::uint64_t head = 0;
  std::size_t live = 0;
  std::unordered_map<std::string, std::uint64_t> latest; // key -> its waiting delta's sequence

  // The POST in flight (or waiting for its retry).
  std::vector<waiting_delta> batch;
  std::string body;
  std::uint64_t post_id = 0;
  std::size_t attempts = 0;
  bool posting = false;

  std::uint64_t timer_generation = 0;
  bool timer_armed = false;

  bool draining = false;
  caf::error exit_reason;

  // Set when the handler subscribed itself (so it unsubscribes when it terminates).
  caf::actor source;
  subscription_id subscription = 0;
};

using webhook_pointer = webhook_actor::stateful_pointer<webhook_state>;

enum class merge_result { merged, cancelled, not_mergeable };

// Folds `next` into the waiting delta of the same object, as subscription_queue does.
merge_result merge(delta& pending, const delta& next) {
  if (pending.type == delta_type::deleted)
    return next.type == delta_type::deleted ? (pending = next, merge_result::merged)
                                            : merge_result::not_mergeable;
  if (next.type == delta_type::added)
    return merge_result::not_mergeable;
  if (pending.type == delta_type::added) {
    if (next.type == delta_type::deleted)
      return merge_result::cancelled;
    pending.object = next.object; // still new to the receiver
    return merge_result::merged;
  }
  if (next.type == delta_type::deleted) {
    auto old = pending.old_object;
    pending = next;
    pending.old_object = old;
    return merge_result::merged;
  }
  // updated/sync + updated/sync: an update if either changed anything.
  if (next.type == delta_type::updated)
    pending.type = delta_type::updated;
  pending.object = next.object;
  return merge_result::merged;
}

// [{"type":...,"key":...,"resourceVersion":...,"object":{...}}, ...]
// Written into one string: each object's text is copied once, into the body (a batch of 500
// pods is about 2 MB, and per-entry strings copied again into it doubled what a flush allocated).
std::string batch_body(const std::vector<waiting_delta>& batch, bool include_objects) {
  std::size_t size = 2;
  for (const auto& w : batch)
    size += 64 + w.d.object->key().size() + w.d.object->meta().resource_version.size() +
            (include_objects ? w.d.object->text_size() : 0);
  std::string body;
  body.reserve(size);
  body += '[';
  for (const auto& w : batch) {
    if (body.size() > 1)
      body += ',';
    boost::json::object entry{{"type", to_string(w.d.type)},
                              {"key", w.d.object->key()},
                              {"resourceVersion", w.d.object->meta().resource_version}};
    body += boost::json::serialize(entry);
    if (include_objects) {
      // The object's stored text, spliced in as it is.
      body.pop_back();
      body.append(",\"object\":").append(w.d.object->json_text()).append("}");
    }
  }
  body += ']';
  return body;
}

void publish_depths(webhook_state& st) {
  st.counters->queue_depth = st.live;
  st.counters->in_flight = st.batch.size();
}

void send_acks(webhook_pointer self) {
  for (auto& t : self->state.targets) {
    if (t.owed == 0)
      continue;
    self->send(t.to, atoms::ack_atom::value, t.id, t.owed);
    t.owed = 0;
  }
}

std::size_t target_of(webhook_pointer self, subscription_id id) {
  auto& targets = self->state.targets;
  auto sender = self->current_sender();
  auto addr = caf::actor_cast<caf::actor_addr>(sender);
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (targets[i].id == id && targets[i].deliverer == addr)
      return i;
  targets.push_back({addr, caf::actor_cast<ack_receiver>(sender), id, 0});
  return targets.size() - 1;
}

void post_batch(webhook_pointer self) {
  auto& st = self->state;
  st.posting = true;
  auto id = ++st.post_id;
  // A weak address: a POST in flight must not keep a terminated handler alive.
  st.sender->post(st.body, [addr = self->address(), id](post_outcome outcome) {
    if (auto handler = caf::actor_cast<caf::actor>(addr))
      caf::anon_send(handler, posted_atom::value, id, outcome.status, std::move(outcome.error));
  });
}

// Moves up to max_batch waiting deltas into a POST, when none is in flight.
void flush(webhook_pointer self) {
  auto& st = self->state;
  if (st.posting || !st.batch.empty() || st.live == 0)
    return;
  while (!st.queue.empty() && st.batch.size() < std::max<std::size_t>(1, st.options.max_batch)) {
    auto w = std::move(st.queue.front());
    st.queue.pop_front();
    auto seq = st.head++;
    if (!w.live)
      continue;
    --st.live;
    auto latest = st.latest.find(w.key);
    if (latest != st.latest.end() && latest->second == seq)
      st.latest.erase(latest);
    st.batch.push_back(std::move(w));
  }
  st.body = batch_body(st.batch, st.options.include_objects);
  st.attempts = 0;
  publish_depths(st);
  post_batch(self);
}

void arm_flush_timer(webhook_pointer self) {
  auto& st = self->state;
  if (st.timer_armed || st.live == 0)
    return;
  auto oldest = st.queue.front().arrived; // the front may be cancelled: close enough
  auto waited = std::chrono::steady_clock::now() - oldest;
  auto delay = std::max<std::chrono::steady_clock::duration>(
      std::chrono::steady_clock::duration::zero(), st.options.flush_interval - waited);
  st.timer_armed = true;
  self->delayed_send(self, std::chrono::duration_cast<std::chrono::microseconds>(delay),
                     flush_atom::value, ++st.timer_generation);
}

// What to do when the queue changed or a POST ended.
void schedule(webhook_pointer self) {
  auto& st = self->state;
  if (st.draining && st.live == 0 && st.batch.empty()) {
    self->quit(st.exit_reason);
    return;
  }
  if (st.posting || !st.batch.empty())
    return; // the end of the POST comes back here
  if (st.draining || st.live >= st.options.max_batch)
    flush(self);
  else
    arm_flush_timer(self);
}

void accept(webhook_pointer self, subscription_id id, const delta_batch& deltas) {
  auto& st = self->state;
  auto target = target_of(self, id);
  auto& owed = st.targets[target].owed;
  auto now = std::chrono::steady_clock::now();
  for (const auto& d : deltas) {
    ++st.counters->received;
    auto key = (std::to_string(target) + '\n').append(d.object->key());
    auto latest = st.latest.find(key);
    if (latest != st.latest.end()) {
      auto& pending = st.queue[latest->second - st.head];
      switch (merge(pending.d, d)) {
      case merge_result::merged:
        ++st.counters->coalesced;
        ++owed;
        continue;
      case merge_result::cancelled:
        pending.live = false;
        --st.live;
        st.latest.erase(latest);
        st.counters->coalesced += 2;
        owed += 2; // the waiting delta is acknowledged late, to its own target: same target
        continue;
      case merge_result::not_mergeable:
        break;
      }
    }
    if (st.live + st.batch.size() >= st.options.queue_bound) {
      // Only a deliverer that ignores its window gets here (see the header).
      ++st.counters->dropped;
      ++owed;
      continue;
    }
    st.latest[key] = st.head + st.queue.size();
    st.queue.push_back({d, target, std::move(key), now, true});
    ++st.live;
  }
  publish_depths(st);
  send_acks(self);
  schedule(self);
}

void finish_batch(webhook_pointer self, bool sent) {
  auto& st = self->state;
  for (const auto& w : st.batch)
    ++st.targets[w.target].owed;
  (sent ? st.counters->sent : st.counters->abandoned) += st.batch.size();
  st.batch.clear();
  st.body.clear();
  publish_depths(st);
  send_acks(self);
}

void on_posted(webhook_pointer self, std::uint64_t id, int status, const std::string& error) {
  auto& st = self->state;
  if (id != st.post_id || !st.posting)
    return;
  st.posting = false;
  post_outcome outcome{status, error};
  if (outcome.ok()) {
    ++st.counters->posts_ok;
    st.retry->reset();
    finish_batch(self, true);
    schedule(self);
    return;
  }
  ++st.counters->posts_failed;
  ++st.attempts;
  bool give_up = !outcome.retryable() ||
                 (st.options.max_attempts > 0 && st.attempts >= st.options.max_attempts);
  if (give_up) {
    finish_batch(self, false);
    schedule(self);
    return;
  }
  auto delay = st.retry->next_delay(std::chrono::steady_clock::now());
  self->delayed_send(self, delay, retry_atom::value, st.post_id);
}

webhook_actor::behavior_type webhook_behavior(webhook_pointer self) {
  self->set_exit_handler([self](const caf::exit_msg& msg) {
    auto& st = self->state;
    if (st.draining) {
      self->quit(msg.reason); // a second exit: stop now
      return;
    }
    st.draining = true;
    st.exit_reason = msg.reason;
    self->delayed_send(self, st.options.drain_timeout, deadline_atom::value);
    schedule(self);
  });
  return {
      [self](atoms::deliver_atom, subscription_id id, const delta_batch& deltas) {
        accept(self, id, deltas);
      },
      [](atoms::synced_atom, subscription_id) {},
      [self](posted_atom, std::uint64_t id, int status, const std::string& error) {
        on_posted(self, id, status, error);
      },
      [self](flush_atom, std::uint64_t generation) {
        auto& st = self->state;
        if (generation != st.timer_generation)
          return;
        st.timer_armed = false;
        flush(self);
      },
      [self](retry_atom, std::uint64_t id) {
        auto& st = self->state;
        if (id != st.post_id || st.posting || st.batch.empty())
          return;
        ++st.counters->retries;
        post_batch(self);
      },
      [self](deadline_atom) { self->quit(self->state.exit_reason); },
  };
}

void init_state(webhook_pointer self, webhook_options options,
                std::shared_ptr<webhook_sender> sender,
                std::shared_ptr<webhook_counters> counters) {
  auto& st = self->state;
  st.options = std::move(options);
  st.options.queue_bound = std::max<std::size_t>(1, st.options.queue_bound);
  st.counters = std::move(counters);
  st.retry = std::make_unique<backoff>(st.options.retry, st.options.jitter);
  st.sender = std::move(sender);
}

// Made before the actor, so a bad URL or unreadable TLS material fails the spawn.
result<std::shared_ptr<webhook_sender>> make_sender(const webhook_options& options) {
  auto endpoint = parse_webhook_url(options.url);
  if (!endpoint)
    return endpoint.err();
  auto sender = webhook_sender::create(std::move(*endpoint), options.request_timeout,
                                       options.headers, options.tls);
  if (!sender)
    return sender.err();
  return std::shared_ptr<webhook_sender>(std::move(*sender));
}

} // namespace

subscription_options webhook_subscription(const webhook_options& options,
                                          subscription_options subscription) {
  if (subscription.name.empty())
    subscription.name = options.name;
  subscription.window = std::clamp<std::size_t>(subscription.window, 1, options.queue_bound);
  subscription.old_objects.which = old_object_policy::keep::none;
  return subscription;
}

result<webhook_handler> spawn_webhook_handler(caf::actor_system& system, webhook_options options) {
  auto sender = make_sender(options);
  if (!sender)
    return sender.err();
  auto counters = options.counters ? options.counters : std::make_shared<webhook_counters>();
  auto actor = system.spawn(
      [](webhook_pointer self, webhook_options options, std::shared_ptr<webhook_sender> sender,
         std::shared_ptr<webhook_counters> counters) -> webhook_actor::behavior_type {
        init_state(self, std::move(options), std::move(sender), std::move(counters));
        return webhook_behavior(self);
      },
      std::move(options), std::move(*sender), counters);
  return webhook_handler{caf::actor_cast<handler_actor>(actor), counters};
}

result<webhook_handler> spawn_webhook_handler(caf::actor_system& system, informer_actor informer,
                                              webhook_options options,
                                              subscription_options subscription) {
  auto sender = make_sender(options);
  if (!sender)
    return sender.err();
  subscription = webhook_subscription(options, std::move(subscription));
  auto counters = options.counters ? options.counters : std::make_shared<webhook_counters>();
  auto actor = system.spawn(
      [](webhook_pointer self, informer_actor informer, webhook_options options,
         std::shared_ptr<webhook_sender> sender, std::shared_ptr<webhook_counters> counters,
         subscription_options subscription) -> webhook_actor::behavior_type {
        init_state(self, std::move(options), std::move(sender), std::move(counters));
        self->state.source = caf::actor_cast<caf::actor>(informer);
        // The unsubscribe at exit keeps its own copy of the id: CAF 0.17 destroys the state
        // before attached functors run.
        auto granted = std::make_shared<subscription_id>(0);
        self->request(informer, caf::infinite, atoms::subscribe_atom::value,
                      caf::actor_cast<handler_actor>(self), std::move(subscription))
            .then(
                [self, granted](subscription_id id) {
                  self->state.subscription = id;
                  *granted = id;
                },
                [self](const caf::error& err) { self->quit(err); });
        self->attach_functor([informer, granted] {
          if (*granted != 0)
            caf::anon_send(informer, atoms::unsubscribe_atom::value, *granted);
        });
        return webhook_behavior(self);
      },
      std::move(informer), std::move(options), std::move(*sender), counters,
      std::move(subscription));
  return webhook_handler{caf::actor_cast<handler_actor>(actor), counters};
}

} // namespace kinformer
