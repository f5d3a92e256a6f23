#pragma once
// A ready-made handler actor that calls plain functions: the C++ counterpart of client-go's
// ResourceEventHandlerFuncs. It subscribes itself when spawned (to one informer, or through the
// cache to every informer of a kind), acknowledges every batch after running the callbacks (so a
// slow callback slows only this subscription) and unsubscribes when it terminates.
//
// Batches are acknowledged to the actor that delivered them, so the same handler works behind
// an informer, a subscription relay or a remote gateway.

#include "actors/cache_messages.hpp"
#include "actors/handler_callbacks.hpp"
#include "actors/interfaces.hpp"

#include <caf/fwd.hpp>

namespace kinformer {

// Subscribes to one informer.
handler_actor spawn_handler(caf::actor_system& system, informer_actor informer,
                            handler_callbacks callbacks, subscription_options options = {});

// Subscribes through the cache to every informer of `kind` (starting them if needed); the
// subscription survives informer restarts (see actors/subscription_relay.hpp). If the cache
// refuses the subscription, the handler terminates with the cache's error.
handler_actor spawn_handler(caf::actor_system& system, cache_actor cache, kind_request kind,
                            handler_callbacks callbacks, subscription_options options = {});

} // namespace kinformer
