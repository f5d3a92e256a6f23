#pragma once
// An informer's most recent changes, so that a watch resumed from resourceVersion N can be
// replayed every change after N, in order, as the API server's watch cache replays its window of
// events: additions, updates (with the state before) and deletions. A reader that narrows the
// changes by a selection then also sees the objects that entered or left it while it was away
// (watch_projection.hpp), and a client that resumes from any event's resourceVersion has been
// sent everything below it.
//
// The window is complete from `covers_from()`: it holds every change with a resourceVersion
// greater than that. It starts at the resourceVersion of the list the informer last synced from
// (a relist's inferred changes have no real resourceVersion, so a relist starts a new window),
// and moves forward to the resourceVersion of each entry evicted past the count bound. Each entry
// holds its object and the state before it alive: the bound is what it costs.
//
// resourceVersions are compared as integers (etcd revisions). When the list's or a change's
// resourceVersion is not an integer, or changes arrive out of order, the window cannot answer
// until the next relist.
//
// Plain C++, not thread-safe: owned by the informer actor.

#include "actors/delta.hpp"
#include "protocol/result.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

namespace kinformer {

// A resourceVersion as an integer; nullopt when it is not one.
std::optional<std::uint64_t> parse_revision(std::string_view resource_version);

class change_window {
public:
  // `capacity`: changes kept (at least 1).
  explicit change_window(std::size_t capacity);

  // A (re)list at `resource_version`: forgets every change; complete from there.
  void reset(std::string_view resource_version);
  // Records one change a watch event made (added, updated or deleted); its object's
  // resourceVersion is the change's. Other deltas are ignored.
  void record(const delta& change);

  // Every change after `resource_version`, oldest first, flagged initial_list (a resumed
  // subscriber's replay). Fails when the window does not reach back that far, or when either
  // resourceVersion is not an integer: the caller must then relist.
  result<std::vector<delta>> changes_since(std::string_view resource_version) const;

  // The resourceVersion from which the window is complete; nullopt before the first reset, or
  // after a change it could not place.
  std::optional<std::uint64_t> covers_from() const noexcept { return covers_from_; }
  std::size_t size() const noexcept { return entries_.size(); }
  std::size_t capacity() const noexcept { return capacity_; }

private:
  struct entry {
    std::uint64_t resource_version;
    delta change;
  };
  std::size_t capacity_;
  std::deque<entry> entries_; // in the order recorded, i.e. ascending resourceVersion
  std::optional<std::uint64_t> covers_from_;
};

} // namespace kinformer
