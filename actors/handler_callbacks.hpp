#pragma once
// What a handler does with its deltas: plain functions, the C++ counterpart of client-go's
// ResourceEventHandlerFuncs. No CAF here, so non-actor code (actors/cache_client.hpp) can name
// it; actors/handler.hpp runs them in a handler actor.

#include "actors/delta.hpp"

#include <functional>

namespace kinformer {

struct handler_callbacks {
  // Every delta, in order: added (initial_list on the first state), updated, deleted
  // (final_state_unknown when inferred on relist), sync (resync or unchanged on relist).
  std::function<void(const delta&)> on_delta;
  // Once: every object in the store at subscription time has been delivered.
  std::function<void()> on_synced;
  // After the deltas of each batch (a handler that writes can flush here, not per delta).
  std::function<void()> on_batch_end;
};

} // namespace kinformer
