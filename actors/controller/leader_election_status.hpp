#pragma once
// Where a leader elector stands (actors/controller/leader_elector.hpp).

#include <cstdint>
#include <string>

namespace kinformer {

struct leader_election_status {
  std::string identity;
  bool leading = false;
  std::string holder;                // who holds the Lease, as last seen
  std::int64_t transitions = 0;      // the Lease's leaseTransitions
  std::uint64_t leadership_won = 0;  // times this candidate became the leader
  std::uint64_t leadership_lost = 0; // times it stopped leading without a release
  std::string last_error;
};

} // namespace kinformer
