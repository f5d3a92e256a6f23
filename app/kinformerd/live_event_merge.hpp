#pragma once
// The live events of one read-API watch fed by several informers (a kind cached per namespace),
// merged into resourceVersion order. A client resumes from the last event's resourceVersion, so
// nothing may reach it below one it has seen: an informer's delta is held until every other
// informer is known to be past it, by a delta of its own or by its progress (the version up to
// which it has delivered everything; a quiet informer advances by its watch's bookmarks).
//
// Each lane is one informer's deltas, in the order it delivered them. Plain data, no actors: the
// watch's actor feeds it and writes what it releases. Not thread-safe.

#include "actors/delta.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <string_view>
#include <vector>

namespace kinformer::service {

class live_event_merge {
public:
  using lane_key = std::uint64_t; // the informer's actor id

  // A lane that releases nothing until it has delivered or progressed (ensures an informer that
  // has not been heard from yet holds the others).
  void add_lane(lane_key lane);
  // A delta of `lane`; its resourceVersion also counts as that lane's progress.
  void push(lane_key lane, delta d);
  // `lane` has delivered everything up to `resource_version` (ignored unless an integer).
  void note_progress(lane_key lane, std::string_view resource_version);

  // Every held delta that no lane can still precede, in resourceVersion order. A delta whose
  // version is not an integer sorts first among the heads of the lanes. (A delete an informer
  // infers on relist carries the object's last known, older version: it goes out when it comes,
  // behind newer ones, as it would from one informer.)
  std::vector<delta> take_ready();
  // How many deltas are held.
  std::size_t held() const;

  // Whether deltas are held, and the lanes whose progress would release them (those with
  // nothing held: their deltas do not tell how far they are).
  bool holding() const;
  std::vector<lane_key> lanes_to_ask() const;

private:
  struct lane {
    std::deque<std::pair<std::uint64_t, delta>> held; // (resourceVersion, delta)
    std::uint64_t progress = 0;
  };
  std::map<lane_key, lane> lanes_;
};

} // namespace kinformer::service
