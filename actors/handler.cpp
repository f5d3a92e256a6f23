#include "actors/handler.hpp"

#include <caf/all.hpp>

namespace kinformer {

namespace {

struct handler_state {
  // Not an aggregate: CAF would otherwise try to construct the state from the actor pointer
  // (C++20 allows parenthesised aggregate initialisation).
  handler_state() = default;

  static inline const char* name = "kinformer.handler";
  // Where the subscription was made and is ended: an informer or the cache. Both accept
  // (unsubscribe_atom, subscription_id).
  caf::actor source;
  handler_callbacks callbacks;
  subscription_id id = 0;
};

using handler_pointer = handler_actor::stateful_pointer<handler_state>;

// What every deliverer of batches (informer, relay, gateway) accepts.
// The behaviour shared by both kinds of subscription; `subscribe` sends the subscribe request
// and returns its response handle.
template <class Subscribe>
handler_actor::behavior_type run_handler(handler_pointer self, caf::actor source,
                                         handler_callbacks callbacks, Subscribe subscribe) {
  auto& st = self->state;
  st.source = std::move(source);
  st.callbacks = std::move(callbacks);
  // The unsubscribe is attached once the id is known, with its own copies: the state is gone
  // by the time attached functors run.
  subscribe().then(
      [self](subscription_id id) {
        self->state.id = id;
        self->attach_functor([source = self->state.source, id] {
          caf::anon_send(source, atoms::unsubscribe_atom::value, id);
        });
      },
      [self](const caf::error& err) { self->quit(err); });
  return {
      [self](atoms::deliver_atom, subscription_id id, const delta_batch& batch) {
        auto& st = self->state;
        if (st.callbacks.on_delta)
          for (const auto& d : batch)
            st.callbacks.on_delta(d);
        if (st.callbacks.on_batch_end)
          st.callbacks.on_batch_end();
        // To whoever delivered the batch: the informer, a relay or a gateway.
        auto deliverer = caf::actor_cast<ack_receiver_actor>(self->current_sender());
        if (deliverer)
          self->send(deliverer, atoms::ack_atom::value, id,
                     static_cast<std::uint64_t>(batch.size()));
      },
      [self](atoms::synced_atom, subscription_id) {
        if (self->state.callbacks.on_synced)
          self->state.callbacks.on_synced();
      },
  };
}

} // namespace

handler_actor spawn_handler(caf::actor_system& system, informer_actor informer,
                            handler_callbacks callbacks, subscription_options options) {
  auto behavior = [](handler_pointer self, informer_actor informer, handler_callbacks callbacks,
                     subscription_options options) -> handler_actor::behavior_type {
    auto source = caf::actor_cast<caf::actor>(informer);
    return run_handler(self, std::move(source), std::move(callbacks), [=]() mutable {
      return self->request(informer, caf::infinite, atoms::subscribe_atom::value,
                           caf::actor_cast<handler_actor>(self), std::move(options));
    });
  };
  return system.spawn(behavior, std::move(informer), std::move(callbacks), std::move(options));
}

handler_actor spawn_handler(caf::actor_system& system, cache_actor cache, kind_request kind,
                            handler_callbacks callbacks, subscription_options options) {
  auto behavior = [](handler_pointer self, cache_actor cache, kind_request kind,
                     handler_callbacks callbacks,
                     subscription_options options) -> handler_actor::behavior_type {
    auto source = caf::actor_cast<caf::actor>(cache);
    return run_handler(self, std::move(source), std::move(callbacks), [=]() mutable {
      return self->request(cache, caf::infinite, atoms::subscribe_atom::value, std::move(kind),
                           caf::actor_cast<handler_actor>(self), std::move(options));
    });
  };
  return system.spawn(behavior, std::move(cache), std::move(kind), std::move(callbacks),
                      std::move(options));
}

} // namespace kinformer
