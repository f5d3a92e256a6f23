#pragma once
// A ready-made handler actor that calls plain functions: the C++ counterpart of client-go's
// ResourceEventHandlerFuncs. It subscribes itself to an informer when spawned, acknowledges
// every batch after running the callbacks (so a slow callback slows only this subscription),
// and unsubscribes when it terminates.

#include "actors/interfaces.hpp"

#include <caf/fwd.hpp>

#include <functional>

namespace kinformer {

struct handler_callbacks {
  // Every delta, in order: added (initial_list on the first state), updated, deleted
  // (final_state_unknown when inferred on relist), sync (resync or unchanged on relist).
  std::function<void(const delta&)> on_delta;
  // Once: every object in the store at subscription time has been delivered.
  std::function<void()> on_synced;
};

handler_actor spawn_handler(caf::actor_system& system, informer_actor informer,
                            handler_callbacks callbacks, subscription_options options = {});

} // namespace kinformer
