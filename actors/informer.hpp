#pragma once
// The informer actor: one per resource and scope. It owns the store and its indexes, is fed by
// its reflector (spawned and linked at start), fans every change out to its subscribed handlers
// and answers reads.
//
// Delivery guarantee, per subscription:
// - Deltas of one object arrive in the order the store applied them; each batch is one message.
// - The first deltas a subscription sees are `added` with initial_list=true for every object in
//   the store when it subscribed (or, before the first list completes, the first list itself);
//   (synced_atom) follows once all of those are delivered.
// - At most `window` deltas are in flight; past `queue_bound` queued deltas, deltas of the same
//   object coalesce (see subscription_queue.hpp), so a slow handler still converges to the latest
//   state of every object, deletes included, and never slows the informer or other handlers.
// - A relist that finds an object gone delivers `deleted` with final_state_unknown=true carrying
//   the last known state (client-go's DeletedFinalStateUnknown).
// - With subscription_options::resume_from = N, the initial deltas are instead every change after
//   N (initial_list=true), in resourceVersion order, from the informer's window of recent changes
//   (change_window.hpp). The subscribe fails (errc expired, "too old resource version") when the
//   window does not reach back to N or the informer has not listed yet, and (errc
//   invalid_argument) when N is not an integer.

#include "actors/interfaces.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace kinformer {

class api_client;

// Spawns an informer for `config`; it starts listing at once.
informer_actor spawn_informer(caf::actor_system& system, std::shared_ptr<api_client> client,
                              informer_config config);

} // namespace kinformer
