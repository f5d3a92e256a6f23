#pragma once
// kinformerd's handlers that act (webhooks), run on the leader only: an actor that starts them,
// subscribed through the cache, when the leader elector tells it (leading_atom, true), and stops
// them on (leading_atom, false). A new leader's webhooks start with the cache's whole state (an
// ADDED per object), as any new subscriber does. On exit it stops its webhooks and ends once
// they have drained (flushed their last POST), like the handlers of a replica without election.

#include "actors/cache_messages.hpp"
#include "actors/interfaces.hpp"
#include "app/kinformerd/webhook_handler.hpp"

#include <caf/fwd.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kinformer::service {

// One webhook to run: its options (with the counters it keeps across terms) and its
// subscription.
struct webhook_plan {
  webhook_options hook;
  kind_request kind;
  subscription_options subscription;
};

struct leader_only_options {
  std::vector<webhook_plan> webhooks;
  // Set while leading (for metrics and probes).
  std::shared_ptr<std::atomic<bool>> leading = std::make_shared<std::atomic<bool>>(false);
  // Told about leadership changes and webhooks the cache refused; called on the actor's thread.
  std::function<void(const std::string& event, const std::string& detail)> report;
};

caf::actor spawn_leader_only_handlers(caf::actor_system& system, cache_actor cache,
                                      leader_only_options options);

} // namespace kinformer::service
