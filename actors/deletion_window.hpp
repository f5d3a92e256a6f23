#pragma once
// An informer's most recent deletions, so that a watch resumed from resourceVersion N can still
// be told about objects deleted after N (the API server's watch cache keeps such a window of
// events for the same reason). Only deletions are kept: every other change is visible in the
// store itself.
//
// The window is complete from `covers_from()`: it holds every deletion with a resourceVersion
// greater than that. It starts at the resourceVersion of the list the informer last synced from
// (a relist's inferred deletions have no real resourceVersion, so a relist starts a new window),
// and moves forward to the resourceVersion of each entry evicted past the count bound.
//
// resourceVersions are compared as integers (etcd revisions). When the list's or a deletion's
// resourceVersion is not an integer, the window cannot answer until the next relist.
//
// Plain C++, not thread-safe: owned by the informer actor.

#include "protocol/object.hpp"
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

class deletion_window {
public:
  // `capacity`: deletions kept (at least 1).
  explicit deletion_window(std::size_t capacity);

  // A (re)list at `resource_version`: forgets every deletion; complete from there.
  void reset(std::string_view resource_version);

  // Records a deletion; `final_object` is the DELETED event's object, whose resourceVersion is
  // the deletion's. Null objects are ignored.
  void record(object_ptr final_object);

  // The final state of every object deleted after `resource_version`, oldest deletion first, one
  // per key (its first deletion after `resource_version`: the object a client that read at
  // `resource_version` may hold). Fails when the window does not reach back that far, or when
  // either resourceVersion is not an integer: the caller must then relist.
  result<std::vector<object_ptr>> deleted_since(std::string_view resource_version) const;

  // The resourceVersion from which the window is complete; nullopt before the first reset, or
  // after a non-integer resourceVersion.
  std::optional<std::uint64_t> covers_from() const noexcept { return covers_from_; }
  std::size_t size() const noexcept { return entries_.size(); }
  std::size_t capacity() const noexcept { return capacity_; }

private:
  struct entry {
    std::uint64_t resource_version;
    object_ptr object;
  };

  std::size_t capacity_;
  std::deque<entry> entries_; // in the order recorded, i.e. ascending resourceVersion
  std::optional<std::uint64_t> covers_from_;
};

} // namespace kinformer
