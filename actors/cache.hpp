#pragma once
// The cache supervisor: controller-runtime's informerCache, multiNamespaceCache and
// delegatingByGVKCache as one actor implementing `cache_actor` (actors/interfaces.hpp). The
// decisions (which informers a kind gets, which answer a read) are in actors/cache_plan.hpp.
//
// - Kinds are resolved through discovery (protocol/rest_mapper) on a detached helper actor, so
//   no blocking call runs on a scheduler thread. A kind's informers start on its first
//   get_informer, index_field, subscribe, or read (unless reader_fail_on_missing_informer).
// - Reads wait until the informers they read from have synced, as controller-runtime's do, so
//   a read never answers from a store that is still filling; bound them with a request timeout.
// - Informers are monitored. One that terminates without being removed is replaced by an
//   informer with the same config and the same field indexes after a restart backoff
//   (cache_options::restart, actors/restart_backoff.hpp: 100 ms doubling to 30 s, reset once an
//   informer stayed up 60 s), so an informer failing on every start does not spin. The restart
//   is counted (per informer and in total), its delay shows in cache_stats, and every
//   subscription relay of the kind is told to rebind, so subscriptions made through the cache
//   survive (see actors/subscription_relay.hpp for exactly what a handler sees).
// - Reads, wait_sync and get_informer that meet a failed informer (pending restart, or gone
//   under a request) wait for its replacement and are answered by it; subscribe does not wait
//   (the relay's slot waits for the rebind). The cache learns "synced" from each informer
//   itself, because a promise of an informer that terminates is never answered in CAF 0.17.
// - When the cache terminates, it stops its informers, relays and helper.
//
// Where we deliberately differ from controller-runtime:
// - Reads never deep-copy: objects are immutable and shared (no UnsafeDisableDeepCopy option).
// - Cache reads that cannot be served fail with their own codes (actors/error_bridge.hpp) where
//   controller-runtime returns distinct errors: errc::not_cached (a kind not cached with
//   reader_fail_on_missing_informer: ErrResourceNotCached), errc::namespace_not_covered (its
//   unknown-namespace error), errc::no_index ("index does not exist"); non-exact field
//   selectors are errc::invalid_argument. A get miss is errc::not_found (NewNotFound).
// - A namespace in a read of a cluster-scoped kind is ignored (controller-runtime would look
//   up a "namespace/name" key that cannot exist), and by_object namespaces of a cluster-scoped
//   kind are ignored rather than refused: kinds are resolved lazily, so there is no start-up
//   moment at which to refuse them.
// - sync_period is the default resync period of subscriptions made through the cache (client-go's
//   handler resync), with no jitter; controller-runtime's 10 h default is not applied: zero
//   means no resync.
// - index_field of a field already indexed for the kind fails (client-go's "indexer conflict"),
//   also when the informers were started afterwards: indexes belong to the kind, not to one
//   informer, and are re-added to every restarted informer.
// - remove_informer also ends the kind's subscriptions made through the cache (their relays).

#include "actors/interfaces.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace kinformer {

class api_client;

cache_actor spawn_cache(caf::actor_system& system, std::shared_ptr<api_client> client,
                        cache_options options);

} // namespace kinformer
