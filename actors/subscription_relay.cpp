#include "actors/subscription_relay.hpp"

#include "actors/string_hash.hpp"
#include "protocol/json_string.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <deque>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace kinformer {

namespace {

// What the handler has of one key: its resourceVersion, and the object itself only when the
// handler reads it as a state before a change (its old_object_policy keeps it). Kept for every
// handler, each delivered object stayed in memory until the handler was sent its next change: a
// slow webhook, after a relist that changed most objects, pinned a second copy of them.
struct known_version {
  object_ptr object; // null: not kept
  std::string resource_version;
};

// One informer the relay subscribes to. `generation` changes on every rebind, so that acks for
// batches of a replaced informer are never credited to its replacement.
struct slot {
  informer_actor informer;
  subscription_id informer_id = 0; // the informer's id for the relay's subscription
  std::uint64_t generation = 0;
  bool synced = false;
  // After a rebind, until the replacement's synced: its deltas are reconciled against `known`,
  // and `listed` collects the keys it reported.
  bool reconciling = false;
  std::unordered_set<std::string, string_hash, std::equal_to<>> listed;
  // The last version delivered to the handler, per key: what the handler believes.
  std::unordered_map<std::string, known_version, string_hash, std::equal_to<>> known;
  // Of the objects delivered: for a delete whose last object was not kept (identity_object).
  std::string kind, api_version;
};

// A batch forwarded to the handler, not yet fully acknowledged by it.
struct in_flight {
  std::size_t slot = 0;
  std::uint64_t generation = 0;
  subscription_id informer_id = 0;
  std::uint64_t informer_count = 0; // deltas to acknowledge to the informer (0: relay-made)
  std::uint64_t forwarded = 0;      // deltas the handler must acknowledge first
};

struct relay_state {
  // Not an aggregate: CAF would otherwise try to construct the state from the actor pointer
  // (C++20 allows parenthesised aggregate initialisation).
  relay_state() = default;

  static inline const char* name = "kinformer.relay";
  subscription_id id = 0;
  handler_actor handler;
  subscription_options options;
  std::vector<slot> slots;
  std::deque<in_flight> pending;
  std::uint64_t acked = 0; // handler acks not yet matched to a whole pending batch
  bool synced_sent = false;
};

using relay_pointer = relay_actor::stateful_pointer<relay_state>;

constexpr std::size_t no_slot = std::numeric_limits<std::size_t>::max();

std::size_t slot_of_sender(relay_pointer self) {
  const auto& sender = self->current_sender();
  auto& slots = self->state.slots;
  for (std::size_t i = 0; i < slots.size(); ++i)
    if (sender && caf::actor_cast<caf::strong_actor_ptr>(slots[i].informer) == sender)
      return i;
  return no_slot;
}

void subscribe(relay_pointer self, std::size_t index) {
  auto& s = self->state.slots[index];
  auto generation = s.generation;
  self->request(s.informer, caf::infinite, atoms::subscribe_atom::value,
                caf::actor_cast<handler_actor>(self), self->state.options)
      .then(
          [self, index, generation](subscription_id informer_id) {
            auto& s = self->state.slots[index];
            if (s.generation == generation)
              s.informer_id = informer_id;
          },
          // A failed informer is not the relay's failure: the supervisor rebinds the slot.
          [](const caf::error&) {});
}

void unsubscribe(slot& s) {
  if (s.informer && s.informer_id != 0)
    caf::anon_send(s.informer, atoms::unsubscribe_atom::value, s.informer_id);
}

// Heterogeneous erase is C++23: find, then erase.
template <class Container>
void erase_key(Container& c, std::string_view key) {
  if (auto it = c.find(key); it != c.end())
    c.erase(it);
}

// Records `d` as what the handler now has.
void remember(slot& s, const delta& d, const old_object_policy& policy) {
  const object& obj = *d.object;
  if (d.type == delta_type::deleted) {
    erase_key(s.known, obj.key());
    return;
  }
  if (s.kind.empty()) {
    s.kind = obj.kind();
    s.api_version = obj.api_version();
  }
  const std::string_view version = obj.meta().resource_version;
  object_ptr kept = policy.keeps(obj) ? d.object : nullptr;
  // A key already known (every change but an add) is neither copied nor hashed twice.
  if (auto it = s.known.find(obj.key()); it != s.known.end()) {
    it->second.object = std::move(kept);
    it->second.resource_version.assign(version);
  } else {
    s.known.emplace(std::string(obj.key()), known_version{std::move(kept), std::string(version)});
  }
}

// An object that says only which one it was, for the final-state-unknown delete of a key whose
// last object the handler's policy did not keep: kind, apiVersion, name, namespace and
// resourceVersion, as a PartialObjectMetadata would.
object_ptr identity_object(const slot& s, std::string_view key, std::string_view resource_version) {
  const auto slash = key.find('/');
  std::string text = "{";
  if (!s.kind.empty()) {
    text += "\"apiVersion\":";
    append_json_string(text, s.api_version);
    text += ",\"kind\":";
    append_json_string(text, s.kind);
    text += ',';
  }
  text += "\"metadata\":{\"name\":";
  append_json_string(text, slash == std::string_view::npos ? key : key.substr(slash + 1));
  if (slash != std::string_view::npos) {
    text += ",\"namespace\":";
    append_json_string(text, key.substr(0, slash));
  }
  text += ",\"resourceVersion\":";
  append_json_string(text, resource_version);
  text += "}}";
  auto made = object::parse(text);
  // The key and version came from objects that parsed: this text always does.
  return made ? *made : nullptr;
}

// Turns a replacement informer's delta into what the handler must see, given what it has:
// nothing for an object it already has at that version, `updated` from what it had for a
// changed one, `added` for a new one.
std::optional<delta> reconcile(slot& s, delta d, bool initial) {
  const std::string_view key = d.object->key();
  auto had = s.known.find(key);
  if (d.type == delta_type::deleted) {
    erase_key(s.listed, key);
    if (had == s.known.end())
      return std::nullopt; // the handler never saw it
    d.old_object = had->second.object;
    return d;
  }
  s.listed.emplace(key);
  if (had == s.known.end()) {
    d.type = delta_type::added;
    d.old_object = nullptr;
    d.initial_list = initial;
    return d;
  }
  if (had->second.resource_version == d.object->meta().resource_version) {
    if (d.type != delta_type::sync)
      return std::nullopt; // the handler already has this version
  } else {
    d.type = delta_type::updated;
  }
  d.old_object = had->second.object;
  d.initial_list = false;
  return d;
}

void forward(relay_pointer self, delta_batch batch, in_flight entry) {
  auto& st = self->state;
  entry.forwarded = batch.size();
  if (entry.forwarded == 0) {
    // Nothing for the handler to acknowledge: credit the informer at once.
    if (entry.informer_count > 0)
      self->send(st.slots[entry.slot].informer, atoms::ack_atom::value, entry.informer_id,
                 entry.informer_count);
    return;
  }
  st.pending.push_back(entry);
  self->send(st.handler, atoms::deliver_atom::value, st.id, std::move(batch));
}

// Sends the handler synced once every slot has synced at least once.
void maybe_send_synced(relay_pointer self) {
  auto& st = self->state;
  if (st.synced_sent)
    return;
  if (std::all_of(st.slots.begin(), st.slots.end(), [](const slot& s) { return s.synced; })) {
    st.synced_sent = true;
    self->send(st.handler, atoms::synced_atom::value, st.id);
  }
}

// The replacement has listed everything: keys the handler has that it did not list are gone.
void finish_reconcile(relay_pointer self, std::size_t index) {
  auto& st = self->state;
  auto& s = st.slots[index];
  s.reconciling = false;
  delta_batch gone;
  for (auto it = s.known.begin(); it != s.known.end();) {
    if (s.listed.count(it->first)) {
      ++it;
      continue;
    }
    const known_version& had = it->second;
    delta d;
    d.type = delta_type::deleted;
    d.object = had.object ? had.object : identity_object(s, it->first, had.resource_version);
    d.old_object = had.object;
    d.final_state_unknown = true;
    if (d.object)
      gone.push_back(std::move(d));
    it = s.known.erase(it);
  }
  s.listed.clear();
  auto max_batch = std::max<std::size_t>(1, st.options.max_batch);
  for (std::size_t from = 0; from < gone.size(); from += max_batch) {
    auto to = std::min(gone.size(), from + max_batch);
    delta_batch part(std::make_move_iterator(gone.begin() + from),
                     std::make_move_iterator(gone.begin() + to));
    forward(self, std::move(part), in_flight{index, s.generation, 0, 0, 0});
  }
}

void quit_relay(relay_pointer self, caf::error reason = {}) {
  for (auto& s : self->state.slots)
    unsubscribe(s);
  self->state.slots.clear();
  self->quit(std::move(reason));
}

} // namespace

relay_actor spawn_subscription_relay(caf::actor_system& system, subscription_id id,
                                     handler_actor handler, std::vector<informer_actor> informers,
                                     subscription_options options) {
  auto behavior = [](relay_pointer self, subscription_id id, handler_actor handler,
                     std::vector<informer_actor> informers,
                     subscription_options options) -> relay_actor::behavior_type {
    auto& st = self->state;
    st.id = id;
    st.handler = std::move(handler);
    st.options = std::move(options);
    st.slots.resize(informers.size());
    for (std::size_t i = 0; i < informers.size(); ++i)
      st.slots[i].informer = std::move(informers[i]);
    self->monitor(st.handler);
    self->set_down_handler([self](const caf::down_msg& down) {
      if (down.source == self->state.handler.address())
        quit_relay(self);
    });
    // Also when stopped with an exit message (the cache ending it): unsubscribe first.
    self->set_exit_handler([self](caf::exit_msg& msg) { quit_relay(self, std::move(msg.reason)); });
    for (std::size_t i = 0; i < st.slots.size(); ++i)
      subscribe(self, i);
    maybe_send_synced(self); // no informers at all: synced at once
    return {
        [self](atoms::deliver_atom, subscription_id informer_id, delta_batch& batch) {
          auto index = slot_of_sender(self);
          if (index == no_slot)
            return; // a replaced informer's late delivery
          auto& st = self->state;
          auto& s = st.slots[index];
          delta_batch out;
          out.reserve(batch.size());
          auto count = static_cast<std::uint64_t>(batch.size());
          for (auto& d : batch) {
            if (!d.object)
              continue;
            if (s.reconciling) {
              if (auto mapped = reconcile(s, std::move(d), !st.synced_sent)) {
                remember(s, *mapped, st.options.old_objects);
                out.push_back(std::move(*mapped));
              }
            } else {
              remember(s, d, st.options.old_objects);
              out.push_back(std::move(d));
            }
          }
          forward(self, std::move(out), in_flight{index, s.generation, informer_id, count, 0});
        },
        [self](atoms::synced_atom, subscription_id) {
          auto index = slot_of_sender(self);
          if (index == no_slot)
            return;
          auto& s = self->state.slots[index];
          if (s.reconciling)
            finish_reconcile(self, index);
          s.synced = true;
          maybe_send_synced(self);
        },
        [self](atoms::ack_atom, subscription_id, std::uint64_t n) {
          auto& st = self->state;
          st.acked += n;
          while (!st.pending.empty() && st.pending.front().forwarded <= st.acked) {
            auto done = st.pending.front();
            st.pending.pop_front();
            st.acked -= done.forwarded;
            if (done.informer_count == 0 || done.slot >= st.slots.size())
              continue;
            const auto& s = st.slots[done.slot];
            if (s.generation == done.generation)
              self->send(s.informer, atoms::ack_atom::value, done.informer_id, done.informer_count);
          }
        },
        [self](atoms::unsubscribe_atom, subscription_id) { quit_relay(self); },
        [self](atoms::rebind_atom, std::size_t index, informer_actor replacement) {
          auto& st = self->state;
          if (index >= st.slots.size() || !replacement)
            return;
          auto& s = st.slots[index];
          unsubscribe(s); // in case the old informer still runs
          s.informer = std::move(replacement);
          s.informer_id = 0;
          ++s.generation;
          s.reconciling = true;
          s.listed.clear();
          subscribe(self, index);
        },
    };
  };
  return system.spawn(behavior, id, std::move(handler), std::move(informers), std::move(options));
}

} // namespace kinformer
