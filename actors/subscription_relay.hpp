#pragma once
// A subscription relay: one handler's subscription to several informers (the informers of one
// kind, one per namespace the cache covers) that survives informer restarts. The cache
// supervisor spawns one per subscribe request; the handler talks to it exactly as it would to an
// informer.
//
// Guarantee to the handler, for subscription `id`:
// - One ordered stream: the deltas of every informer ("slot"), each slot's deltas in the order
//   its informer sent them; batches are forwarded as they arrive (never merged or split).
// - One (synced_atom, id), once every slot's informer has reported synced. Replacements never
//   send a second one.
// - End-to-end credit: a slot's batch is acknowledged to its informer only once the handler has
//   acknowledged everything the relay forwarded of it, so the informer's bounded, coalescing
//   queue (not the relay) absorbs a slow handler. The relay itself buffers nothing.
// - Restarts without duplicates: on (rebind_atom, slot, replacement) the relay subscribes to the
//   replacement and reconciles its initial list against the last version it delivered per key
//   of that slot:
//     same key, same resourceVersion  -> nothing (the handler already has it);
//     same key, other resourceVersion -> `updated`, old_object = what the handler had (when its
//                                        old_object_policy keeps that state; null otherwise);
//     unknown key                     -> `added` with initial_list=false (true while the
//                                        handler has not had its synced yet);
//     a delete of a key the handler never had -> nothing;
//   and after the replacement's synced: `deleted` with final_state_unknown=true for every key
//   the handler had that the replacement's initial list did not contain. Its object is the last
//   one delivered, where the policy keeps it; otherwise one that names it (kind, apiVersion,
//   name, namespace, resourceVersion). The relay keeps what the policy keeps and, of the rest,
//   only resourceVersions: a replaced version never waits in it for the handler.
//   So the handler never sees a second Add for an object it already has.
// - Unsubscribe, or the handler terminating (the relay monitors it), unsubscribes from every
//   informer and ends the relay. A slot's informer terminating is not an error: its slot waits
//   for a rebind.

#include "actors/interfaces.hpp"

#include <caf/fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kinformer {

using relay_actor = caf::typed_actor<
    // From the informers (the relay is their handler).
    caf::reacts_to<atoms::deliver_atom, subscription_id, delta_batch>,
    caf::reacts_to<atoms::synced_atom, subscription_id>,
    // From the handler: acknowledges deltas the relay forwarded under the relay's id.
    caf::reacts_to<atoms::ack_atom, subscription_id, std::uint64_t>,
    // Ends the subscription.
    caf::reacts_to<atoms::unsubscribe_atom, subscription_id>,
    // The supervisor restarted the informer of slot `std::size_t` (an index into `informers`).
    caf::reacts_to<atoms::rebind_atom, std::size_t, informer_actor>>;

// Spawns a relay that subscribes to every informer in `informers` (slot i = informers[i]) and
// delivers to `handler` under `id`. `options` apply to each informer subscription (window,
// queue bound, batch size, resync period).
relay_actor spawn_subscription_relay(caf::actor_system& system, subscription_id id,
                                     handler_actor handler, std::vector<informer_actor> informers,
                                     subscription_options options);

} // namespace kinformer
