#pragma once
// The remote gateway: lets handler actors in other processes subscribe to the cache over CAF's
// network layer. kinformerd spawns one and publishes it (publish_gateway); kinformer-subscribe
// (app/subscribe) is the example subscriber, actors/remote_subscriber.hpp its library side.
//
// Each remote subscription is a cache subscription (so it survives informer restarts, see
// actors/subscription_relay.hpp) plus a bridge actor in this process that
// - keeps only the requested namespace and labels (acknowledging what it drops at once),
// - turns each delta into its wire form (the object's JSON text, see actors/remote_messages.hpp),
// - forwards each batch as one message and acknowledges it upstream only once the remote handler
//   has acknowledged it: the remote handler sees the same ordered stream, the same synced and the
//   same bounded, coalescing backlog as a local one.
// A subscriber that disconnects (its handler goes down) ends its subscription.

#include "actors/interfaces.hpp"
#include "protocol/result.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <string>

namespace kinformer {

// `shared_secret`: when not empty, requests must carry it (compared in constant time).
gateway_actor spawn_remote_gateway(caf::actor_system& system, cache_actor cache,
                                   std::string shared_secret);

// Publishes `gateway` on `address:port` (port 0 picks one) over TLS when the system was
// configured with it (configure_remote with tls), else in plaintext. Returns the bound port.
result<std::uint16_t> publish_gateway(caf::actor_system& system, const gateway_actor& gateway,
                                      const std::string& address, std::uint16_t port, bool tls);

} // namespace kinformer
