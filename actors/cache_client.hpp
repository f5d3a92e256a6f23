#pragma once
// The cache for code that is not an actor: blocking calls with a timeout that return
// kinformer::result<T>, over the cache actor (actors/cache.hpp). The counterpart of
// controller-runtime's cache.Cache (Get, List, GetInformer, WaitForCacheSync, RemoveInformer,
// IndexField) and of client-go's AddEventHandler / RemoveEventHandler.
//
// Thread-safe: every call makes its own short-lived scoped actor, so any number of threads may
// call at once. Never call it from inside an actor (it blocks). Event handler callbacks run on
// the actor system's threads, one subscription at a time, in order.
//
// This header includes no CAF beyond caf/fwd.hpp: it is what non-actor code includes.

#include "actors/cache_messages.hpp"
#include "actors/handler_callbacks.hpp"
#include "protocol/result.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace kinformer {

class api_client;
struct informer_handle; // actors/interfaces.hpp

// What get_informer returns: the kind's informers, one per namespace the cache covers.
struct kind_informers {
  kind_request kind;
  std::vector<std::string> namespaces; // "" = all namespaces, or a cluster-scoped kind
  // The actor handles, for actor code (include actors/interfaces.hpp to use them).
  std::shared_ptr<const std::vector<informer_handle>> handles;
};

// One handler added with add_event_handler; pass it to remove_event_handler. Copies refer to
// the same handler.
class event_registration {
public:
  // client-go's HasSynced: the handler has received every object the kind's informers held
  // when it subscribed.
  bool has_synced() const;
  // Blocks until has_synced() or the timeout; returns has_synced().
  bool wait_for_sync(std::chrono::milliseconds timeout) const;

private:
  friend class cache_client;
  struct state;
  std::shared_ptr<state> state_;
};

struct cache_client_options {
  std::size_t threads = 2; // scheduler threads of the actor system the client owns
  std::chrono::milliseconds timeout{30'000}; // default timeout of every call
};

class cache_client {
public:
  // Starts an actor system of its own and a cache on it (actors/cache.hpp); the client owns
  // both and stops them when destroyed.
  cache_client(std::shared_ptr<api_client> client, cache_options options,
               cache_client_options settings = {});
  // Borrows `system` and `cache` (a cache_actor: `caf::actor_cast<caf::actor>(cache)`); both
  // must outlive the client.
  cache_client(caf::actor_system& system, const caf::actor& cache,
               cache_client_options settings = {});

  cache_client(const cache_client&) = delete;
  cache_client& operator=(const cache_client&) = delete;
  cache_client(cache_client&&) noexcept;
  cache_client& operator=(cache_client&&) noexcept;
  ~cache_client();

  using milliseconds = std::chrono::milliseconds;
  static constexpr milliseconds use_default{-1}; // the timeout from cache_client_options

  // Reads fail with a code to branch on: errc::not_cached (the kind has no informers and
  // reader_fail_on_missing_informer is set: call get_informer), errc::namespace_not_covered
  // (outside the cache's namespaces for the kind), errc::no_index (a field selector term needs
  // index_field first), errc::invalid_argument (a selector the cache never serves, such as
  // `!=` on a field), errc::no_match (an unknown kind), errc::timeout.
  //
  // One object ("" namespace for a cluster-scoped kind); errc::not_found when the cache does
  // not hold it.
  result<object_ptr> get(const kind_request& kind, const std::string& namespace_,
                         const std::string& name, milliseconds timeout = use_default) const;
  result<object_list> list(const kind_request& kind, const list_options& options = {},
                           milliseconds timeout = use_default) const;
  // Starts the kind's informers if needed.
  result<kind_informers> get_informer(const kind_request& kind,
                                      milliseconds timeout = use_default) const;
  // Succeeds once every informer started so far has synced; errc::timeout otherwise.
  status_result wait_for_cache_sync(milliseconds timeout = use_default) const;
  // Stops the kind's informers; false when it had none.
  result<bool> remove_informer(const kind_request& kind, milliseconds timeout = use_default) const;
  // controller-runtime's IndexField: the index "field:<path>" on the kind's informers.
  status_result index_field(const kind_request& kind, const std::string& field_path,
                            milliseconds timeout = use_default) const;
  // Runs `callbacks` for every delta of the kind, across informer restarts; fails (without
  // subscribing) when the cache cannot start the kind's informers.
  result<event_registration> add_event_handler(const kind_request& kind,
                                               handler_callbacks callbacks,
                                               subscription_options options = {},
                                               milliseconds timeout = use_default) const;
  // Ends the subscription; returns once its handler has stopped (no callback runs afterwards).
  status_result remove_event_handler(const event_registration& registration,
                                     milliseconds timeout = use_default) const;
  result<cache_stats> stats(milliseconds timeout = use_default) const;

private:
  struct impl;
  milliseconds effective(milliseconds timeout) const;
  std::unique_ptr<impl> impl_;
};

} // namespace kinformer
