#include "actors/handler.hpp"

#include <caf/all.hpp>

namespace kinformer {

namespace {

struct handler_state {
  // Not an aggregate: CAF would otherwise try to construct the state from the actor pointer
  // (C++20 allows parenthesised aggregate initialisation).
  handler_state() = default;

  static inline const char* name = "kinformer.handler";
  informer_actor informer;
  handler_callbacks callbacks;
  subscription_id id = 0;
};

using handler_pointer = handler_actor::stateful_pointer<handler_state>;

} // namespace

handler_actor spawn_handler(caf::actor_system& system, informer_actor informer,
                            handler_callbacks callbacks, subscription_options options) {
  auto behavior = [](handler_pointer self, informer_actor informer, handler_callbacks callbacks,
                     subscription_options options) -> handler_actor::behavior_type {
    auto& st = self->state;
    st.informer = informer;
    st.callbacks = std::move(callbacks);
    self->request(informer, caf::infinite, atoms::subscribe_atom::value,
                  caf::actor_cast<handler_actor>(self), std::move(options))
        .then([self](subscription_id id) { self->state.id = id; },
              [self](const caf::error& err) { self->quit(err); });
    self->attach_functor([informer, self] {
      if (self->state.id != 0)
        caf::anon_send(informer, atoms::unsubscribe_atom::value, self->state.id);
    });
    return {
        [self](atoms::deliver_atom, subscription_id id, const delta_batch& batch) {
          auto& st = self->state;
          if (st.callbacks.on_delta)
            for (const auto& d : batch)
              st.callbacks.on_delta(d);
          self->send(st.informer, atoms::ack_atom::value, id,
                     static_cast<std::uint64_t>(batch.size()));
        },
        [self](atoms::synced_atom, subscription_id) {
          if (self->state.callbacks.on_synced)
            self->state.callbacks.on_synced();
        },
    };
  };
  return system.spawn(behavior, std::move(informer), std::move(callbacks), std::move(options));
}

} // namespace kinformer
