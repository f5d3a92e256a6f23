#pragma once
// The subscriber's side of a remote subscription: connect to a kinformerd's gateway, subscribe a
// local handler actor, and get back the same deltas a local handler gets, objects parsed again
// from their wire form (actors/remote_messages.hpp). Used by kinformer-subscribe (app/subscribe).

#include "actors/delta.hpp"
#include "actors/remote_messages.hpp"
#include "protocol/result.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace kinformer {

struct remote_callbacks {
  // Every delta, in order, as a local handler sees it (old_object only when the request asked
  // for include_old_objects).
  std::function<void(const delta&)> on_delta;
  // Once every object the subscription started with has been delivered.
  std::function<void()> on_synced;
  // A delta whose object could not be parsed (it is skipped, and acknowledged), or the
  // connection to the gateway was lost (then nothing more arrives).
  std::function<void(const error&)> on_error;
};

struct remote_subscription {
  caf::actor handler; // the local handler actor; ends when the gateway is lost
  caf::actor gateway; // the gateway's proxy
  std::uint64_t id = 0;
};

// Connects to the gateway at host:port (TLS when the system was configured with it, see
// actors/remote_setup.hpp), spawns the handler and subscribes it. Blocks: call it from a plain
// thread (main), not from an actor.
result<remote_subscription> subscribe_remote(caf::actor_system& system, const std::string& host,
                                             std::uint16_t port, bool tls,
                                             remote_subscription_request request,
                                             remote_callbacks callbacks);

// Ends the subscription at the gateway and stops the local handler.
void unsubscribe_remote(const remote_subscription& subscription);

} // namespace kinformer
