#include "actors/remote_subscriber.hpp"

#include "actors/error_bridge.hpp"
#include "actors/interfaces.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <chrono>

namespace kinformer {

namespace {

std::optional<delta_type> delta_type_from(std::string_view text) {
  for (auto t : {delta_type::added, delta_type::updated, delta_type::deleted, delta_type::sync})
    if (text == to_string(t))
      return t;
  return std::nullopt;
}

// A wire delta parsed back into a delta.
result<delta> from_wire(const wire_delta& w) {
  auto type = delta_type_from(w.type);
  if (!type)
    return error{errc::invalid_object, "unknown delta type \"" + w.type + "\""};
  auto obj = object::parse(w.object_json);
  if (!obj)
    return std::move(obj).err();
  delta d;
  d.type = *type;
  d.object = std::move(obj).value();
  if (!w.old_object_json.empty()) {
    auto old = object::parse(w.old_object_json);
    if (!old)
      return std::move(old).err();
    d.old_object = std::move(old).value();
  }
  d.initial_list = w.initial_list;
  d.final_state_unknown = w.final_state_unknown;
  return d;
}

struct remote_handler_state {
  remote_handler_state() = default; // not an aggregate (see actors/handler.cpp)
  static inline const char* name = "kinformer.remote_handler";
  remote_callbacks callbacks;
};

using remote_handler_pointer = remote_handler_actor::stateful_pointer<remote_handler_state>;

remote_handler_actor::behavior_type remote_handler(remote_handler_pointer self,
                                                   remote_callbacks callbacks) {
  self->state.callbacks = std::move(callbacks);
  return {
      [self](atoms::remote_deliver_atom, subscription_id id, const wire_batch& batch) {
        auto& cb = self->state.callbacks;
        for (const auto& w : batch) {
          auto d = from_wire(w);
          if (!d) {
            if (cb.on_error)
              cb.on_error(d.err());
            continue;
          }
          if (cb.on_delta)
            cb.on_delta(*d);
        }
        // Acknowledge to whoever delivered: the gateway's bridge for this subscription.
        self->send(caf::actor_cast<ack_receiver_actor>(self->current_sender()),
                   atoms::ack_atom::value, id, static_cast<std::uint64_t>(batch.size()));
      },
      [self](atoms::synced_atom, subscription_id) {
        if (self->state.callbacks.on_synced)
          self->state.callbacks.on_synced();
      },
  };
}

} // namespace

result<remote_subscription> subscribe_remote(caf::actor_system& system, const std::string& host,
                                             std::uint16_t port, bool tls,
                                             remote_subscription_request request,
                                             remote_callbacks callbacks) {
  auto where = host + ":" + std::to_string(port);
  // caf::openssl throws when this node's TLS settings are unusable (no certificate, say).
  caf::expected<gateway_actor> gateway = caf::sec::runtime_error;
  try {
    gateway = tls ? caf::openssl::remote_actor<gateway_actor>(system, host, port)
                  : system.middleman().remote_actor<gateway_actor>(host, port);
  } catch (const std::exception& e) {
    return error{errc::tls, "cannot reach the gateway at " + where + ": " + e.what()};
  }
  if (!gateway)
    return error{errc::io,
                 "cannot reach the gateway at " + where + ": " + system.render(gateway.error())};
  auto on_error = callbacks.on_error;
  auto handler = system.spawn(remote_handler, std::move(callbacks));
  caf::scoped_actor self{system};
  std::optional<error> failure;
  subscription_id id = 0;
  // The gateway answers once the cache has registered the subscription, which can wait behind the
  // replay of a big store: 30 s was not enough under TSan on 2 cores (kinformerd_e2e_test).
  self->request(*gateway, std::chrono::seconds(120), atoms::remote_subscribe_atom::value,
                std::move(request), caf::actor_cast<caf::actor>(handler))
      .receive([&](subscription_id granted) { id = granted; },
               [&](caf::error& err) { failure = from_caf_error(err); });
  if (failure) {
    caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
    return *failure;
  }
  // Losing the gateway (the service stopped, the connection broke) ends the handler.
  auto watcher = system.spawn(
      [handler, on_error, where](caf::event_based_actor* w, caf::actor gw) -> caf::behavior {
        w->monitor(gw);
        w->monitor(handler);
        w->set_down_handler([w, handler, on_error, where, gw](const caf::down_msg& down) {
          if (down.source == gw.address()) {
            if (on_error)
              on_error(error{errc::io, "lost the connection to the gateway at " + where});
            caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
          }
          w->quit();
        });
        return {[](caf::unit_t) {}};
      },
      caf::actor_cast<caf::actor>(*gateway));
  (void)watcher;
  return remote_subscription{caf::actor_cast<caf::actor>(handler),
                             caf::actor_cast<caf::actor>(*gateway), id};
}

void unsubscribe_remote(const remote_subscription& subscription) {
  // Sent as the handler: the gateway accepts an unsubscribe only from the subscriber.
  if (subscription.gateway && subscription.handler)
    caf::send_as(subscription.handler, caf::actor_cast<gateway_actor>(subscription.gateway),
                 atoms::unsubscribe_atom::value, subscription.id);
  if (subscription.handler)
    caf::anon_send_exit(subscription.handler, caf::exit_reason::user_shutdown);
}

} // namespace kinformer
