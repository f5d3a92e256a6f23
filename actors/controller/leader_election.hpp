#pragma once
// client-go's leader election (tools/leaderelection with a LeaseLock) as a plain class with the
// time passed in; its owner (leader_elector.hpp) reads and writes the Lease and keeps the clock.
//
// Every retry period the candidate reads the Lease and asks `decide` what to write:
// - no Lease: create one naming itself;
// - held by another whose record has not changed for a whole lease duration (by this
//   candidate's clock, not the holder's: clocks differ): take it over, one more transition;
// - held by another and still fresh: nothing, wait;
// - held by itself: renew (renewTime now, acquireTime and transitions kept).
// A write that succeeds makes it the holder. A leader that has not renewed for `renew_deadline`
// stops leading, before the lease (longer) runs out for the others. Releasing on a clean stop
// writes an empty holder with a 1 s duration, so a successor takes over at once.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace kinformer {

struct leader_election_timings {
  std::chrono::milliseconds lease_duration{15000}; // how long a silent leader keeps the lease
  std::chrono::milliseconds renew_deadline{10000}; // a leader stops leading after this without
                                                   // a renewal
  std::chrono::milliseconds retry_period{2000};    // how often candidates and leaders try
};

// A Lease's spec (coordination.k8s.io/v1), times as MicroTime text.
struct lease_spec {
  std::string holder_identity;
  std::int64_t lease_duration_seconds = 0;
  std::string acquire_time;
  std::string renew_time;
  std::int64_t lease_transitions = 0;

  bool operator==(const lease_spec&) const = default;
};

// A Lease as read: its spec and the resourceVersion an update must name.
struct observed_lease {
  lease_spec spec;
  std::string resource_version;
};

// Reads a Lease object's JSON; nullopt when it is no Lease.
std::optional<observed_lease> parse_lease(std::string_view json);

// What to write: a new Lease, or an update at the version read.
struct lease_write {
  bool create = false;
  lease_spec spec;
  std::string resource_version; // update only: conditional on it
  // The Lease object to send, named `name` in `namespace_`.
  std::string body(const std::string& namespace_, const std::string& name) const;
};

class leader_election {
public:
  using clock = std::chrono::system_clock;
  using time_point = clock::time_point;

  leader_election(std::string identity, leader_election_timings timings);

  // After reading the Lease (nullopt: there is none): the write to try, or nothing when another
  // candidate holds it and it is still fresh.
  std::optional<lease_write> decide(const std::optional<observed_lease>& lease, time_point now);
  // The write `decide` asked for was accepted; `resource_version` is the Lease's new version.
  void written(const lease_write& w, std::string resource_version, time_point now);
  // Leading: the Lease names this candidate and it renewed within the renew deadline.
  bool leading(time_point now) const;
  // On a clean stop while leading: the write that hands the Lease on at once.
  std::optional<lease_write> release(time_point now) const;

  const std::string& identity() const { return identity_; }
  // Who holds the Lease, as last seen ("" for nobody).
  const std::string& holder() const { return observed_.spec.holder_identity; }
  std::int64_t transitions() const { return observed_.spec.lease_transitions; }

private:
  bool lease_fresh(time_point now) const;

  std::string identity_;
  leader_election_timings timings_;
  observed_lease observed_;
  bool observed_any_ = false;
  time_point observed_time_{}; // when the record last changed, by this candidate's clock
  std::optional<time_point> last_renewal_; // the last successful write as the holder
};

} // namespace kinformer
