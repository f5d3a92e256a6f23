#pragma once
// Lease-based leader election (coordination.k8s.io/v1) as an actor: client-go's LeaderElector
// with a LeaseLock, its timings by default (lease 15 s, renew deadline 10 s, retry 2 s). The
// decisions are leader_election.hpp's; this actor reads and writes the Lease on the client's I/O
// thread, keeps the clock, and tells `listener` (leading_atom, true) when this candidate becomes
// the leader and (leading_atom, false) when it stops leading. A candidate that lost keeps
// campaigning. `release_atom` hands the Lease on at once (on a clean stop) and ends the elector;
// an elector that just dies (a killed process) leaves the Lease to expire.

#include "actors/controller/leader_election.hpp"
#include "actors/interfaces.hpp"

#include <caf/fwd.hpp>

#include <memory>
#include <string>

namespace kinformer {

class api_client;

struct leader_elector_options {
  std::string lease_namespace = "default";
  std::string lease_name;
  std::string identity; // unique per candidate: a pod name
  leader_election_timings timings;
};

leader_elector_actor spawn_leader_elector(caf::actor_system& system,
                                          std::shared_ptr<api_client> client,
                                          leader_elector_options options, caf::actor listener);

} // namespace kinformer
