#include "actors/cache.hpp"

#include "actors/cache_plan.hpp"
#include "actors/change_window.hpp"
#include "actors/error_bridge.hpp"
#include "actors/informer.hpp"
#include "actors/restart_backoff.hpp"
#include "actors/subscription_relay.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/rest_mapper.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>

namespace kinformer {

namespace {

// Cache -> its discovery helper.
using resolve_atom = caf::atom_constant<caf::atom("resolve")>;
// Cache -> itself: the restart backoff of a failed informer has elapsed.
using restart_atom = caf::atom_constant<caf::atom("restart")>;

// What the discovery helper answers: the kind's mapping and the by_object entry that applies.
struct resolved_kind {
  rest_mapping mapping;
  std::optional<std::size_t> by_object;
};

} // namespace

} // namespace kinformer

// Local to this file: the helper and the cache live in one process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::resolved_kind)

namespace kinformer {

namespace {

// ---- the discovery helper ----------------------------------------------------------------

// A detached actor: rest_mapper reads discovery with blocking GETs, which must not run on a
// scheduler thread. It owns the mapper, so discovery is read once and shared by every lookup.
caf::behavior discovery_helper(caf::event_based_actor*, std::shared_ptr<api_client> client,
                               std::vector<by_object_options> by_object) {
  auto mapper = std::make_shared<rest_mapper>(
      [client](const std::string& path) { return client->get_document_sync(path); });
  return {
      [mapper, by_object](resolve_atom, const kind_request& request) -> caf::result<resolved_kind> {
        auto mapping = resolve_kind(*mapper, request);
        if (!mapping)
          return to_caf_error(mapping.err());
        // Re-resolved on every kind: an entry for a CRD installed later starts to apply then.
        std::vector<std::optional<rest_mapping>> by_object_mappings;
        for (const auto& entry : by_object) {
          auto resolved = resolve_kind(*mapper, entry.kind);
          by_object_mappings.push_back(resolved ? std::optional(*resolved) : std::nullopt);
        }
        auto applies =
            find_by_object(by_object, by_object_mappings, *mapping, request.metadata_only);
        return resolved_kind{std::move(*mapping), applies};
      },
  };
}

// ---- the supervisor's state ----------------------------------------------------------------

// One informer the cache runs, across its restarts.
struct informer_slot {
  informer_actor informer; // while restart_pending: the one that failed
  // Tells this informer apart from the slot's earlier and later ones in late messages.
  std::uint64_t generation = 0;
  std::chrono::steady_clock::time_point started;
  bool synced = false;          // the informer said so (the cache asked at its start)
  bool restart_pending = false; // failed; the replacement waits for the backoff
  std::uint64_t restarts = 0;
  restart_backoff backoff;
};

// Everything the cache runs for one kind (a resource and a projection).
struct kind_entry {
  std::uint64_t id = 0; // tells a kind apart from one removed and started again
  kind_plan plan;
  std::vector<informer_slot> slots; // slot i runs plan.informers[i]
  std::vector<std::string> indexed_fields;
  std::vector<subscription_id> subscriptions;

  std::string key() const;
  bool all_running() const {
    return std::none_of(slots.begin(), slots.end(),
                        [](const informer_slot& s) { return s.restart_pending; });
  }
  std::vector<informer_actor> informers() const {
    std::vector<informer_actor> out;
    for (const auto& slot : slots)
      out.push_back(slot.informer);
    return out;
  }
};

struct relay_entry {
  relay_actor relay;
  std::string kind_key;
};

using resolve_callback = std::function<void(result<resolved_kind>)>;
using kind_callback = std::function<void(result<kind_entry*>)>;
// A request waiting for informers to start, sync or be replaced: it runs again after each such
// change and returns true once it has been answered.
using waiter = std::function<bool()>;

struct cache_state {
  // Not an aggregate: CAF would otherwise try to construct the state from the actor pointer.
  cache_state() = default;
  cache_state(const cache_state&) = delete;
  cache_state& operator=(const cache_state&) = delete;

  // Destroyed when the cache terminates, for whatever reason: nothing it started outlives it.
  ~cache_state() {
    for (auto& [id, entry] : relays)
      caf::anon_send_exit(entry.relay, caf::exit_reason::user_shutdown);
    for (auto& [key, entry] : kinds)
      for (auto& slot : entry.slots)
        caf::anon_send_exit(slot.informer, caf::exit_reason::user_shutdown);
    if (helper)
      caf::anon_send_exit(helper, caf::exit_reason::user_shutdown);
  }

  static inline const char* name = "kinformer.cache";

  std::shared_ptr<api_client> client;
  cache_options options;
  caf::actor helper;
  // Kind requests resolved so far, by their text; failures are not kept (a CRD may appear).
  std::map<std::string, resolved_kind> resolved;
  // Kind requests waiting for the helper, by their text.
  std::map<std::string, std::vector<resolve_callback>> resolving;
  std::map<std::string, kind_entry> kinds; // by kind_key()
  std::map<subscription_id, relay_entry> relays;
  subscription_id next_subscription = 1;
  std::uint64_t next_generation = 1; // kind ids and informer generations
  std::uint64_t restarts = 0;
  std::vector<waiter> waiters;
};

// The cache's public interface plus its own restart timer: (key, slot, generation of the
// informer that failed).
using cache_impl_actor =
    cache_actor::extend<caf::reacts_to<restart_atom, std::string, std::size_t, std::uint64_t>>;
using cache_pointer = cache_impl_actor::stateful_pointer<cache_state>;

std::string kind_key(const rest_mapping& mapping, bool metadata_only) {
  return mapping.resource.to_string() + (metadata_only ? "#metadata" : "");
}

std::string kind_entry::key() const {
  return kind_key(plan.mapping, plan.metadata_only);
}

// The kind `key` if it is still the one with `id`.
kind_entry* find_kind(cache_state& st, const std::string& key, std::uint64_t id) {
  auto it = st.kinds.find(key);
  return it != st.kinds.end() && it->second.id == id ? &it->second : nullptr;
}

// Runs `attempt` now, and again after every informer change until it returns true.
void when(cache_pointer self, waiter attempt) {
  if (!attempt())
    self->state.waiters.push_back(std::move(attempt));
}

// An informer started, synced or was replaced: give every waiting request another try.
void wake(cache_pointer self) {
  auto pending = std::move(self->state.waiters);
  self->state.waiters.clear();
  for (auto& attempt : pending)
    if (!attempt())
      self->state.waiters.push_back(std::move(attempt));
}

// A request to an informer that terminated before it was processed.
bool informer_gone(const caf::error& err) {
  return err.category() == caf::atom("system") &&
         err.code() == static_cast<std::uint8_t>(caf::sec::request_receiver_down);
}

// ---- fan-out -------------------------------------------------------------------------------

template <class T>
struct gathered {
  std::vector<std::optional<T>> replies; // one per target; empty where the target failed
  std::vector<caf::error> errors;        // one per target; set where the target failed
  caf::error first_error;
};

// Sends the same request to every informer in `targets` and calls `done` once all have
// answered (or failed).
template <class T, class... Ts>
void ask_all(cache_pointer self, const std::vector<informer_actor>& targets,
             std::function<void(gathered<T>&)> done, const Ts&... xs) {
  struct progress {
    gathered<T> result;
    std::size_t pending = 0;
    std::function<void(gathered<T>&)> done;
  };
  auto state = std::make_shared<progress>();
  state->result.replies.resize(targets.size());
  state->result.errors.resize(targets.size());
  state->pending = targets.size();
  state->done = std::move(done);
  if (targets.empty()) {
    state->done(state->result);
    return;
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    self->request(targets[i], caf::infinite, xs...)
        .then(
            [state, i](T& value) {
              state->result.replies[i] = std::move(value);
              if (--state->pending == 0)
                state->done(state->result);
            },
            [state, i](caf::error& err) {
              state->result.errors[i] = err;
              if (!state->result.first_error)
                state->result.first_error = err;
              if (--state->pending == 0)
                state->done(state->result);
            });
  }
}

// ---- kinds ---------------------------------------------------------------------------------

void resolve(cache_pointer self, const kind_request& request, resolve_callback then) {
  auto& st = self->state;
  auto text = request.describe();
  if (auto it = st.resolved.find(text); it != st.resolved.end()) {
    then(it->second);
    return;
  }
  auto& waiters = st.resolving[text];
  waiters.push_back(std::move(then));
  if (waiters.size() > 1)
    return; // a lookup is on its way
  auto finish = [self, text](result<resolved_kind> outcome) {
    auto& st = self->state;
    if (outcome)
      st.resolved[text] = *outcome;
    auto node = st.resolving.extract(text);
    for (auto& waiter : node.mapped())
      waiter(outcome);
  };
  self->request(st.helper, caf::infinite, resolve_atom::value, request)
      .then([finish](resolved_kind& kind) { finish(std::move(kind)); },
            [finish](caf::error& err) { finish(from_caf_error(err)); });
}

void add_field_index(cache_pointer self, const informer_actor& informer, const std::string& field,
                     std::function<void(gathered<bool>&)> done) {
  ask_all<bool>(self, {informer}, std::move(done), atoms::add_index_atom::value,
                field_index_name(field), make_field_index_func(field_path_extractor(field)));
}

// How long the cache waits for an informer's synced before asking again. Bounded, because a
// promise of an informer that terminates is never answered (CAF 0.17): an unbounded request
// would stay in the cache for good.
constexpr std::chrono::seconds sync_probe_timeout{30};

// Learns when the slot's current informer has synced, so reads and wait_sync can wait for it.
void probe_sync(cache_pointer self, const std::string& key, std::uint64_t kind_id,
                std::size_t index, std::uint64_t generation) {
  auto* entry = find_kind(self->state, key, kind_id);
  if (!entry || entry->slots[index].generation != generation)
    return;
  self->request(entry->slots[index].informer, sync_probe_timeout, atoms::wait_sync_atom::value)
      .then(
          [self, key, kind_id, index, generation](bool) {
            auto* entry = find_kind(self->state, key, kind_id);
            if (!entry || entry->slots[index].generation != generation)
              return;
            entry->slots[index].synced = true;
            wake(self);
          },
          [self, key, kind_id, index, generation](caf::error& err) {
            if (err.category() == caf::atom("system") &&
                err.code() == static_cast<std::uint8_t>(caf::sec::request_timeout))
              probe_sync(self, key, kind_id, index, generation);
            // Any other failure: the informer is gone and the down handler replaces it.
          });
}

// Starts the informer of slot `index` (first start or replacement) with the kind's indexes.
void start_slot(cache_pointer self, kind_entry& entry, std::size_t index) {
  auto& st = self->state;
  auto& slot = entry.slots[index];
  slot.informer = spawn_informer(self->system(), st.client, entry.plan.informers[index].config);
  self->monitor(slot.informer);
  slot.generation = st.next_generation++;
  slot.started = std::chrono::steady_clock::now();
  slot.synced = false;
  slot.restart_pending = false;
  // Requests from one sender arrive in order: the indexes exist before any read sent later.
  for (const auto& field : entry.indexed_fields)
    add_field_index(self, slot.informer, field, [](gathered<bool>&) {});
  probe_sync(self, entry.key(), entry.id, index, slot.generation);
}

kind_entry& start_kind(cache_pointer self, const resolved_kind& kind, bool metadata_only) {
  auto& st = self->state;
  const by_object_options* by_object =
      kind.by_object ? &st.options.by_object[*kind.by_object] : nullptr;
  auto& entry = st.kinds[kind_key(kind.mapping, metadata_only)];
  entry.id = st.next_generation++;
  entry.plan = plan_kind(st.options, kind.mapping, metadata_only, by_object);
  entry.slots.assign(entry.plan.informers.size(), informer_slot{});
  for (std::size_t i = 0; i < entry.slots.size(); ++i) {
    entry.slots[i].backoff = restart_backoff(st.options.restart);
    start_slot(self, entry, i);
  }
  return entry;
}

// Calls `then` with the kind's entry, starting its informers first when `start` is set (else a
// kind with no informers is an error).
void with_kind(cache_pointer self, const kind_request& request, bool start, kind_callback then) {
  resolve(self, request,
          [self, start, metadata_only = request.metadata_only,
           then = std::move(then)](result<resolved_kind> kind) {
            if (!kind) {
              then(std::move(kind).err());
              return;
            }
            auto& kinds = self->state.kinds;
            if (auto it = kinds.find(kind_key(kind->mapping, metadata_only)); it != kinds.end()) {
              then(&it->second);
              return;
            }
            if (!start) {
              then(make_error(errc::not_cached,
                              kind_request{kind->mapping.kind, {}, metadata_only}.describe() +
                                  " is not cached: reader_fail_on_missing_informer is set and "
                                  "nothing started its informers (get_informer does)"));
              return;
            }
            then(&start_kind(self, *kind, metadata_only));
          });
}

void stop_kind(cache_pointer self, std::map<std::string, kind_entry>::iterator it) {
  auto& st = self->state;
  for (auto id : it->second.subscriptions) {
    if (auto relay = st.relays.find(id); relay != st.relays.end()) {
      self->send(relay->second.relay, atoms::unsubscribe_atom::value, id);
      st.relays.erase(relay);
    }
  }
  for (auto& slot : it->second.slots) {
    self->demonitor(slot.informer.address());
    self->send_exit(slot.informer, caf::exit_reason::user_shutdown);
  }
  st.kinds.erase(it);
  wake(self); // requests waiting for the kind learn that it is gone
}

// ---- supervision ---------------------------------------------------------------------------

// The slot's informer failed: restart it after the slot's backoff. Called from the down
// handler and from requests that found the informer gone, whichever comes first.
void slot_failed(cache_pointer self, kind_entry& entry, std::size_t index) {
  auto& slot = entry.slots[index];
  if (slot.restart_pending)
    return;
  slot.restart_pending = true;
  slot.synced = false;
  auto uptime = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - slot.started);
  auto delay = slot.backoff.on_failure(uptime);
  if (delay.count() == 0)
    self->send(self, restart_atom::value, entry.key(), index, slot.generation);
  else
    self->delayed_send(self, delay, restart_atom::value, entry.key(), index, slot.generation);
}

// `informer` failed, if it is still the running informer of one of the cache's slots.
void informer_failed(cache_pointer self, const caf::actor_addr& informer) {
  for (auto& [key, entry] : self->state.kinds)
    for (std::size_t i = 0; i < entry.slots.size(); ++i)
      if (entry.slots[i].informer.address() == informer) {
        slot_failed(self, entry, i);
        return;
      }
}

void restart(cache_pointer self, const std::string& key, std::size_t index,
             std::uint64_t generation) {
  auto& st = self->state;
  auto it = st.kinds.find(key);
  // The kind was removed, or started again, since the failure.
  if (it == st.kinds.end() || index >= it->second.slots.size())
    return;
  auto& entry = it->second;
  auto& slot = entry.slots[index];
  if (!slot.restart_pending || slot.generation != generation)
    return;
  start_slot(self, entry, index);
  ++slot.restarts;
  ++st.restarts;
  for (auto id : entry.subscriptions)
    if (auto relay = st.relays.find(id); relay != st.relays.end())
      self->send(relay->second.relay, atoms::rebind_atom::value, index, slot.informer);
  wake(self);
}

void on_down(cache_pointer self, const caf::down_msg& down) {
  auto& st = self->state;
  for (auto it = st.relays.begin(); it != st.relays.end(); ++it) {
    if (it->second.relay.address() != down.source)
      continue;
    // The subscription ended (its handler terminated).
    if (auto kind = st.kinds.find(it->second.kind_key); kind != st.kinds.end())
      std::erase(kind->second.subscriptions, it->first);
    st.relays.erase(it);
    return;
  }
  informer_failed(self, down.source);
}

// ---- reads ---------------------------------------------------------------------------------

using ready_callback = std::function<void(result<std::vector<informer_actor>>)>;

error removed_meanwhile(const std::string& kind) {
  return make_error(errc::not_cached,
                    "the informers of " + kind + " were removed while a read waited for them");
}

// Calls `read` with the informers of `slots` of the kind (`key`, `id`) once all of them run and
// have synced, as controller-runtime's reads wait for the informer they start: a read never
// answers from a store that is still filling, nor from a failed informer (it waits for the
// replacement). Fails when the kind is removed meanwhile.
void when_ready(cache_pointer self, std::string key, std::uint64_t id,
                std::vector<std::size_t> slots, ready_callback read) {
  when(
      self,
      [self, key = std::move(key), id, slots = std::move(slots), read = std::move(read)]() -> bool {
        auto* entry = find_kind(self->state, key, id);
        if (!entry) {
          read(removed_meanwhile(key));
          return true;
        }
        std::vector<informer_actor> targets;
        for (auto index : slots) {
          const auto& slot = entry->slots[index];
          if (slot.restart_pending || !slot.synced)
            return false;
          targets.push_back(slot.informer);
        }
        read(std::move(targets));
        return true;
      });
}

// Marks the targets that terminated under a request as failed; true if there were any. The
// read is then repeated: it waits for the replacements.
bool note_gone(cache_pointer self, const std::vector<informer_actor>& targets,
               const std::vector<caf::error>& errors) {
  bool any = false;
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (errors[i] && informer_gone(errors[i])) {
      informer_failed(self, targets[i].address());
      any = true;
    }
  return any;
}

struct get_read {
  std::string kind; // kind_entry::key()
  std::uint64_t kind_id;
  std::size_t slot;
  std::string key; // the object's
  std::string what;
};

void get_object(cache_pointer self, get_read read,
                caf::typed_response_promise<object_ptr> promise) {
  auto kind = read.kind;
  auto id = read.kind_id;
  std::vector<std::size_t> slots{read.slot};
  when_ready(
      self, std::move(kind), id, std::move(slots),
      [self, read = std::move(read), promise](result<std::vector<informer_actor>> ready) mutable {
        if (!ready) {
          promise.deliver(to_caf_error(ready.err()));
          return;
        }
        auto informer = ready->front();
        self->request(informer, caf::infinite, atoms::get_atom::value, read.key)
            .then(
                [promise, what = read.what](object_ptr& obj) mutable {
                  if (obj)
                    promise.deliver(std::move(obj));
                  else
                    promise.deliver(to_caf_error(make_error(errc::not_found, what + " not found")));
                },
                [self, informer, read, promise](caf::error& err) mutable {
                  if (note_gone(self, {informer}, {err}))
                    get_object(self, std::move(read), std::move(promise));
                  else
                    promise.deliver(std::move(err));
                });
      });
}

struct list_read {
  std::string kind; // kind_entry::key()
  std::uint64_t kind_id;
  std::vector<std::size_t> slots;
  list_options options;
};

// The informers' answers to a list, merged: the items in order up to the limit (and, for a
// versioned list, the oldest of the snapshots' versions).
object_list merge_replies(std::vector<object_list> parts, std::size_t limit) {
  return merge_lists(std::move(parts), limit);
}

versioned_list merge_replies(std::vector<versioned_list> parts, std::size_t limit) {
  versioned_list out;
  std::vector<object_list> items;
  std::optional<std::uint64_t> oldest;
  for (auto& part : parts) {
    auto rv = parse_revision(part.resource_version);
    if (out.resource_version.empty() || (rv && oldest && *rv < *oldest)) {
      out.resource_version = part.resource_version;
      oldest = rv;
    }
    items.push_back(std::move(part.items));
  }
  out.items = merge_lists(std::move(items), limit);
  return out;
}

// Lists from the kind's informers once they have synced; `tag...` picks the reply (a plain or a
// versioned list).
template <class Reply, class... Tag>
void list_objects(cache_pointer self, list_read read, caf::typed_response_promise<Reply> promise,
                  Tag... tag) {
  auto kind = read.kind;
  auto id = read.kind_id;
  auto slots = read.slots;
  when_ready(self, std::move(kind), id, std::move(slots),
             [self, read = std::move(read), promise,
              tag...](result<std::vector<informer_actor>> ready) mutable {
               if (!ready) {
                 promise.deliver(to_caf_error(ready.err()));
                 return;
               }
               auto targets = std::move(*ready);
               ask_all<Reply>(
                   self, targets,
                   [self, targets, read, promise, tag...](gathered<Reply>& answers) mutable {
                     if (note_gone(self, targets, answers.errors)) {
                       list_objects(self, std::move(read), std::move(promise), tag...);
                       return;
                     }
                     if (answers.first_error) {
                       promise.deliver(std::move(answers.first_error));
                       return;
                     }
                     std::vector<Reply> parts;
                     for (auto& reply : answers.replies)
                       parts.push_back(std::move(*reply));
                     promise.deliver(merge_replies(std::move(parts), read.options.limit));
                   },
                   atoms::list_atom::value, read.options, tag...);
             });
}

// A failed kind lookup, for a promise of any type.
template <class T>
void fail(caf::typed_response_promise<T>& promise, const error& err) {
  promise.deliver(to_caf_error(err));
}

} // namespace

cache_actor spawn_cache(caf::actor_system& system, std::shared_ptr<api_client> client,
                        cache_options options) {
  auto behavior = [](cache_pointer self, std::shared_ptr<api_client> client,
                     cache_options options) -> cache_impl_actor::behavior_type {
    auto& st = self->state;
    st.client = client;
    st.options = std::move(options);
    st.helper = self->system().spawn<caf::detached>(discovery_helper, std::move(client),
                                                    st.options.by_object);
    self->set_down_handler([self](caf::down_msg& down) { on_down(self, down); });
    return {
        [self](atoms::get_informer_atom, const kind_request& kind) -> caf::result<informer_set> {
          auto promise = self->make_response_promise<informer_set>();
          with_kind(self, kind, true, [self, promise](result<kind_entry*> entry) mutable {
            if (!entry)
              return fail(promise, entry.err());
            // Handles of running informers only: a failed one's replacement is waited for.
            when(self, [self, promise, key = (*entry)->key(), id = (*entry)->id]() mutable {
              auto* entry = find_kind(self->state, key, id);
              if (!entry) {
                fail(promise, removed_meanwhile(key));
                return true;
              }
              if (!entry->all_running())
                return false;
              informer_set out;
              for (std::size_t i = 0; i < entry->slots.size(); ++i)
                out.push_back({entry->plan.informers[i].namespace_, entry->slots[i].informer});
              promise.deliver(std::move(out));
              return true;
            });
          });
          return promise;
        },
        [self](atoms::remove_informer_atom, const kind_request& kind) -> caf::result<bool> {
          auto promise = self->make_response_promise<bool>();
          resolve(self, kind,
                  [self, promise,
                   metadata_only = kind.metadata_only](result<resolved_kind> resolved) mutable {
                    if (!resolved)
                      return fail(promise, resolved.err());
                    auto& kinds = self->state.kinds;
                    auto it = kinds.find(kind_key(resolved->mapping, metadata_only));
                    if (it == kinds.end()) {
                      promise.deliver(false);
                      return;
                    }
                    stop_kind(self, it);
                    promise.deliver(true);
                  });
          return promise;
        },
        [self](atoms::get_atom, const cache_get_request& request) -> caf::result<object_ptr> {
          auto promise = self->make_response_promise<object_ptr>();
          bool start = !self->state.options.reader_fail_on_missing_informer;
          with_kind(self, request.kind, start,
                    [self, promise, request](result<kind_entry*> entry) mutable {
                      if (!entry)
                        return fail(promise, entry.err());
                      const auto& plan = (*entry)->plan;
                      auto slot = route_get(plan, request.namespace_);
                      if (!slot)
                        return fail(promise, slot.err());
                      auto key = plan.cluster_scoped()
                                     ? request.name
                                     : make_object_key(request.namespace_, request.name);
                      auto what = plan.describe() + " \"" + key + "\"";
                      get_object(
                          self,
                          {(*entry)->key(), (*entry)->id, *slot, std::move(key), std::move(what)},
                          std::move(promise));
                    });
          return promise;
        },
        [self](atoms::list_atom, const cache_list_request& request) -> caf::result<object_list> {
          auto promise = self->make_response_promise<object_list>();
          bool start = !self->state.options.reader_fail_on_missing_informer;
          with_kind(self, request.kind, start,
                    [self, promise, options = request.options](result<kind_entry*> entry) mutable {
                      if (!entry)
                        return fail(promise, entry.err());
                      auto slots = route_list((*entry)->plan, options, (*entry)->indexed_fields);
                      if (!slots)
                        return fail(promise, slots.err());
                      list_objects(self,
                                   {(*entry)->key(), (*entry)->id, std::move(*slots), options},
                                   std::move(promise));
                    });
          return promise;
        },
        [self](atoms::list_atom, const cache_list_request& request,
               atoms::snapshot_atom tag) -> caf::result<versioned_list> {
          auto promise = self->make_response_promise<versioned_list>();
          bool start = !self->state.options.reader_fail_on_missing_informer;
          with_kind(
              self, request.kind, start,
              [self, promise, tag, options = request.options](result<kind_entry*> entry) mutable {
                if (!entry)
                  return fail(promise, entry.err());
                auto slots = route_list((*entry)->plan, options, (*entry)->indexed_fields);
                if (!slots)
                  return fail(promise, slots.err());
                list_objects(self, {(*entry)->key(), (*entry)->id, std::move(*slots), options},
                             std::move(promise), tag);
              });
          return promise;
        },
        [self](atoms::wait_sync_atom) -> caf::result<bool> {
          auto promise = self->make_response_promise<bool>();
          when(self, [self, promise]() mutable {
            for (const auto& [key, entry] : self->state.kinds)
              for (const auto& slot : entry.slots)
                if (slot.restart_pending || !slot.synced)
                  return false;
            promise.deliver(true);
            return true;
          });
          return promise;
        },
        [self](atoms::index_field_atom, const kind_request& kind,
               const std::string& field) -> caf::result<bool> {
          auto promise = self->make_response_promise<bool>();
          with_kind(self, kind, true, [self, promise, field](result<kind_entry*> entry) mutable {
            if (!entry)
              return fail(promise, entry.err());
            auto& fields = (*entry)->indexed_fields;
            if (field.empty())
              return fail(promise, make_error(errc::invalid_argument, "index_field: empty field"));
            if (std::find(fields.begin(), fields.end(), field) != fields.end())
              return fail(promise,
                          make_error(errc::invalid_argument, "field \"" + field + "\" of " +
                                                                 (*entry)->plan.describe() +
                                                                 " is already indexed"));
            fields.push_back(field);
            // Informers that failed get the index with their replacement (start_slot).
            std::vector<informer_actor> running;
            for (const auto& slot : (*entry)->slots)
              if (!slot.restart_pending)
                running.push_back(slot.informer);
            ask_all<bool>(
                self, running,
                [self, promise, running](gathered<bool>& answers) mutable {
                  note_gone(self, running, answers.errors);
                  for (const auto& err : answers.errors)
                    if (err && !informer_gone(err)) {
                      promise.deliver(err);
                      return;
                    }
                  promise.deliver(true);
                },
                atoms::add_index_atom::value, field_index_name(field),
                make_field_index_func(field_path_extractor(field)));
          });
          return promise;
        },
        [self](atoms::subscribe_atom, const kind_request& kind, const handler_actor& handler,
               const subscription_options& options) -> caf::result<subscription_id> {
          auto promise = self->make_response_promise<subscription_id>();
          // Resuming needs each informer's own answer, which a relay spanning restarts cannot
          // give: subscribe to the informers themselves (get_informer) for that.
          if (options.resume_from || options.from_now) {
            fail(promise, make_error(errc::invalid_argument,
                                     "resume_from, from_now: subscribe to the kind's informers "
                                     "directly (the cache's subscriptions outlive them)"));
            return promise;
          }
          with_kind(self, kind, true,
                    [self, promise, handler,
                     options = subscription_options{options}](result<kind_entry*> entry) mutable {
                      if (!entry)
                        return fail(promise, entry.err());
                      auto& st = self->state;
                      if (options.resync_period.count() == 0)
                        options.resync_period = (*entry)->plan.sync_period;
                      auto id = st.next_subscription++;
                      // A failed informer's slot waits for the rebind its restart sends.
                      auto relay = spawn_subscription_relay(self->system(), id, handler,
                                                            (*entry)->informers(), options);
                      self->monitor(relay);
                      st.relays[id] = {relay, (*entry)->key()};
                      (*entry)->subscriptions.push_back(id);
                      promise.deliver(id);
                    });
          return promise;
        },
        [self](atoms::unsubscribe_atom, subscription_id id) {
          auto& st = self->state;
          auto it = st.relays.find(id);
          if (it == st.relays.end())
            return;
          self->demonitor(it->second.relay.address());
          self->send(it->second.relay, atoms::unsubscribe_atom::value, id);
          if (auto kind = st.kinds.find(it->second.kind_key); kind != st.kinds.end())
            std::erase(kind->second.subscriptions, id);
          st.relays.erase(it);
        },
        [self](restart_atom, const std::string& key, std::size_t slot, std::uint64_t generation) {
          restart(self, key, slot, generation);
        },
        [self](atoms::stats_atom) -> caf::result<cache_stats> {
          auto promise = self->make_response_promise<cache_stats>();
          auto& st = self->state;
          cache_stats base;
          base.restarts = st.restarts;
          std::vector<informer_actor> targets;
          std::vector<std::size_t> asked; // base.informers index of each target
          for (const auto& [key, entry] : st.kinds)
            for (std::size_t i = 0; i < entry.slots.size(); ++i) {
              const auto& slot = entry.slots[i];
              cache_informer_stats info;
              info.kind = entry.plan.describe();
              info.namespace_ = entry.plan.informers[i].namespace_;
              info.restarts = slot.restarts;
              info.restart_delay = slot.backoff.last_delay();
              info.restart_pending = slot.restart_pending;
              if (!slot.restart_pending) {
                asked.push_back(base.informers.size());
                targets.push_back(slot.informer);
              }
              base.informers.push_back(std::move(info));
            }
          ask_all<informer_stats>(
              self, targets,
              [promise, base, asked](gathered<informer_stats>& answers) mutable {
                // An informer that failed just now reports empty stats until its replacement
                // answers.
                for (std::size_t i = 0; i < answers.replies.size(); ++i)
                  if (answers.replies[i])
                    base.informers[asked[i]].stats = std::move(*answers.replies[i]);
                promise.deliver(std::move(base));
              },
              atoms::stats_atom::value);
          return promise;
        },
    };
  };
  return caf::actor_cast<cache_actor>(
      system.spawn(behavior, std::move(client), std::move(options)));
}

} // namespace kinformer
