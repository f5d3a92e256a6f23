#include "actors/cache.hpp"

#include "actors/cache_plan.hpp"
#include "actors/error_bridge.hpp"
#include "actors/informer.hpp"
#include "actors/subscription_relay.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/rest_mapper.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

namespace kinformer {

namespace {

// Cache -> its discovery helper.
using resolve_atom = caf::atom_constant<caf::atom("resolve")>;

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

// Everything the cache runs for one kind (a resource and a projection).
struct kind_entry {
  kind_plan plan;
  std::vector<informer_actor> informers; // slot i runs plan.informers[i]
  std::vector<std::uint64_t> restarts;   // per slot
  std::vector<std::string> indexed_fields;
  std::vector<subscription_id> subscriptions;
};

struct relay_entry {
  relay_actor relay;
  std::string kind_key;
};

using resolve_callback = std::function<void(result<resolved_kind>)>;
using kind_callback = std::function<void(result<kind_entry*>)>;

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
      for (auto& informer : entry.informers)
        caf::anon_send_exit(informer, caf::exit_reason::user_shutdown);
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
  std::uint64_t restarts = 0;
  // wait_sync requests that met a failed informer: checked again after the next restart.
  std::vector<caf::typed_response_promise<bool>> sync_retries;
};

using cache_pointer = cache_actor::stateful_pointer<cache_state>;

std::string kind_key(const rest_mapping& mapping, bool metadata_only) {
  return mapping.resource.to_string() + (metadata_only ? "#metadata" : "");
}

// ---- fan-out -------------------------------------------------------------------------------

template <class T>
struct gathered {
  std::vector<std::optional<T>> replies; // one per target; empty where the target failed
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
            [state](caf::error& err) {
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

kind_entry& start_kind(cache_pointer self, const resolved_kind& kind, bool metadata_only) {
  auto& st = self->state;
  const by_object_options* by_object =
      kind.by_object ? &st.options.by_object[*kind.by_object] : nullptr;
  auto& entry = st.kinds[kind_key(kind.mapping, metadata_only)];
  entry.plan = plan_kind(st.options, kind.mapping, metadata_only, by_object);
  for (const auto& planned : entry.plan.informers) {
    auto informer = spawn_informer(self->system(), st.client, planned.config);
    self->monitor(informer);
    entry.informers.push_back(std::move(informer));
    entry.restarts.push_back(0);
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
              then(make_error(errc::invalid_argument,
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
  for (auto& informer : it->second.informers) {
    self->demonitor(informer.address());
    self->send_exit(informer, caf::exit_reason::user_shutdown);
  }
  st.kinds.erase(it);
}

// ---- supervision ---------------------------------------------------------------------------

bool is_current(const cache_state& st, const caf::actor_addr& addr) {
  for (const auto& [key, entry] : st.kinds)
    for (const auto& informer : entry.informers)
      if (informer.address() == addr)
        return true;
  return false;
}

std::vector<informer_actor> every_informer(const cache_state& st) {
  std::vector<informer_actor> out;
  for (const auto& [key, entry] : st.kinds)
    out.insert(out.end(), entry.informers.begin(), entry.informers.end());
  return out;
}

void check_sync(cache_pointer self, caf::typed_response_promise<bool> promise) {
  auto targets = every_informer(self->state);
  ask_all<bool>(
      self, targets,
      [self, promise, targets](gathered<bool>& answers) mutable {
        if (!answers.first_error) {
          promise.deliver(true);
          return;
        }
        // An informer failed under us. Ask its replacement: now, when the restart already
        // happened, else after it.
        bool all_current = std::all_of(targets.begin(), targets.end(), [&](const auto& t) {
          return is_current(self->state, t.address());
        });
        if (all_current)
          self->state.sync_retries.push_back(std::move(promise));
        else
          check_sync(self, std::move(promise));
      },
      atoms::wait_sync_atom::value);
}

void add_field_index(cache_pointer self, const informer_actor& informer, const std::string& field,
                     std::function<void(gathered<bool>&)> done) {
  ask_all<bool>(self, {informer}, std::move(done), atoms::add_index_atom::value,
                field_index_name(field), make_field_index_func(field_path_extractor(field)));
}

void restart(cache_pointer self, kind_entry& entry, std::size_t slot) {
  auto& st = self->state;
  auto replacement = spawn_informer(self->system(), st.client, entry.plan.informers[slot].config);
  self->monitor(replacement);
  entry.informers[slot] = replacement;
  ++entry.restarts[slot];
  ++st.restarts;
  // Requests from one sender arrive in order: the indexes exist before any read sent later.
  for (const auto& field : entry.indexed_fields)
    add_field_index(self, replacement, field, [](gathered<bool>&) {});
  for (auto id : entry.subscriptions)
    if (auto relay = st.relays.find(id); relay != st.relays.end())
      self->send(relay->second.relay, atoms::rebind_atom::value, slot, replacement);
  auto retries = std::move(st.sync_retries);
  st.sync_retries.clear();
  for (auto& promise : retries)
    check_sync(self, std::move(promise));
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
  for (auto& [key, entry] : st.kinds)
    for (std::size_t slot = 0; slot < entry.informers.size(); ++slot)
      if (entry.informers[slot].address() == down.source) {
        restart(self, entry, slot);
        return;
      }
}

// ---- reads ---------------------------------------------------------------------------------

// Runs `read` once every informer in `targets` has synced, as controller-runtime's reads wait
// for the informer they start: a read never answers from a store that is still filling. An
// informer that fails meanwhile fails the read.
void when_synced(cache_pointer self, const std::vector<informer_actor>& targets,
                 std::function<void(caf::error)> read) {
  ask_all<bool>(
      self, targets,
      [read = std::move(read)](gathered<bool>& answers) { read(std::move(answers.first_error)); },
      atoms::wait_sync_atom::value);
}

void get_object(cache_pointer self, kind_entry& entry, const cache_get_request& request,
                caf::typed_response_promise<object_ptr> promise) {
  auto slot = route_get(entry.plan, request.namespace_);
  if (!slot) {
    promise.deliver(to_caf_error(slot.err()));
    return;
  }
  auto key = entry.plan.cluster_scoped() ? request.name
                                         : make_object_key(request.namespace_, request.name);
  auto what = entry.plan.describe() + " \"" + key + "\"";
  auto informer = entry.informers[*slot];
  when_synced(self, {informer}, [self, informer, key, what, promise](caf::error err) mutable {
    if (err) {
      promise.deliver(std::move(err));
      return;
    }
    self->request(informer, caf::infinite, atoms::get_atom::value, key)
        .then(
            [promise, what](object_ptr& obj) mutable {
              if (obj)
                promise.deliver(std::move(obj));
              else
                promise.deliver(to_caf_error(make_error(errc::not_found, what + " not found")));
            },
            [promise](caf::error& err) mutable { promise.deliver(std::move(err)); });
  });
}

void list_objects(cache_pointer self, kind_entry& entry, const list_options& options,
                  caf::typed_response_promise<object_list> promise) {
  auto slots = route_list(entry.plan, options, entry.indexed_fields);
  if (!slots) {
    promise.deliver(to_caf_error(slots.err()));
    return;
  }
  std::vector<informer_actor> targets;
  for (auto slot : *slots)
    targets.push_back(entry.informers[slot]);
  when_synced(self, targets, [self, targets, options, promise](caf::error err) mutable {
    if (err) {
      promise.deliver(std::move(err));
      return;
    }
    ask_all<object_list>(
        self, targets,
        [promise, limit = options.limit](gathered<object_list>& answers) mutable {
          if (answers.first_error) {
            promise.deliver(std::move(answers.first_error));
            return;
          }
          std::vector<object_list> parts;
          for (auto& reply : answers.replies)
            parts.push_back(std::move(*reply));
          promise.deliver(merge_lists(std::move(parts), limit));
        },
        atoms::list_atom::value, options);
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
                     cache_options options) -> cache_actor::behavior_type {
    auto& st = self->state;
    st.client = client;
    st.options = std::move(options);
    st.helper = self->system().spawn<caf::detached>(discovery_helper, std::move(client),
                                                    st.options.by_object);
    self->set_down_handler([self](caf::down_msg& down) { on_down(self, down); });
    return {
        [self](atoms::get_informer_atom, const kind_request& kind) -> caf::result<informer_set> {
          auto promise = self->make_response_promise<informer_set>();
          with_kind(self, kind, true, [promise](result<kind_entry*> entry) mutable {
            if (!entry)
              return fail(promise, entry.err());
            informer_set out;
            for (std::size_t i = 0; i < (*entry)->informers.size(); ++i)
              out.push_back({(*entry)->plan.informers[i].namespace_, (*entry)->informers[i]});
            promise.deliver(std::move(out));
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
                      get_object(self, **entry, request, std::move(promise));
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
                      list_objects(self, **entry, options, std::move(promise));
                    });
          return promise;
        },
        [self](atoms::wait_sync_atom) -> caf::result<bool> {
          auto promise = self->make_response_promise<bool>();
          check_sync(self, promise);
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
            ask_all<bool>(
                self, (*entry)->informers,
                [promise](gathered<bool>& answers) mutable {
                  if (answers.first_error)
                    promise.deliver(std::move(answers.first_error));
                  else
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
          with_kind(self, kind, true,
                    [self, promise, handler,
                     options = subscription_options{options}](result<kind_entry*> entry) mutable {
                      if (!entry)
                        return fail(promise, entry.err());
                      auto& st = self->state;
                      if (options.resync_period.count() == 0)
                        options.resync_period = (*entry)->plan.sync_period;
                      auto id = st.next_subscription++;
                      auto relay = spawn_subscription_relay(self->system(), id, handler,
                                                            (*entry)->informers, options);
                      self->monitor(relay);
                      st.relays[id] = {
                          relay, kind_key((*entry)->plan.mapping, (*entry)->plan.metadata_only)};
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
        [self](atoms::stats_atom) -> caf::result<cache_stats> {
          auto promise = self->make_response_promise<cache_stats>();
          auto& st = self->state;
          cache_stats base;
          base.restarts = st.restarts;
          std::vector<informer_actor> targets;
          for (const auto& [key, entry] : st.kinds)
            for (std::size_t i = 0; i < entry.informers.size(); ++i) {
              base.informers.push_back({entry.plan.describe(),
                                        entry.plan.informers[i].namespace_,
                                        entry.restarts[i],
                                        {}});
              targets.push_back(entry.informers[i]);
            }
          ask_all<informer_stats>(
              self, targets,
              [promise, base](gathered<informer_stats>& answers) mutable {
                // An informer that failed just now reports empty stats until its replacement
                // answers.
                for (std::size_t i = 0; i < answers.replies.size(); ++i)
                  if (answers.replies[i])
                    base.informers[i].stats = std::move(*answers.replies[i]);
                promise.deliver(std::move(base));
              },
              atoms::stats_atom::value);
          return promise;
        },
    };
  };
  return system.spawn(behavior, std::move(client), std::move(options));
}

} // namespace kinformer
