#pragma once
// The read API's paged lists, kept for their continue tokens.
//
// A paged list's first page sorts the whole selection once and keeps it as a snapshot; later
// pages are cut from it, so every page shows the same instant. A snapshot holds a reference to
// every object it listed, and so keeps alive each version the store has since replaced: under
// churn, one snapshot of 50,000 pods comes to pin most of a second copy of them. So a snapshot is
// kept only while a client can still be paging through it:
// - until its last page is served (a client that asks for that page again gets 410 Expired and
//   relists, as after a compaction);
// - at most `max_age` after it was taken (the API server's continue tokens likewise expire when
//   etcd compacts their revision, every 5 minutes);
// - at most `capacity` at a time, the oldest evicted first.
// A token whose snapshot is gone is answered with 410 Expired.
//
// Thread-safe: the read API's I/O threads and helper actors share one.

#include "protocol/object.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kinformer::service {

// The full, sorted result of a paged list.
struct page_snapshot {
  std::string selection; // path and selectors: a token is valid only for the same list
  std::string resource_version;
  std::vector<object_ptr> items;
};

class continue_snapshots {
public:
  using clock = std::chrono::steady_clock;

  continue_snapshots(std::size_t capacity, std::chrono::seconds max_age);

  // Keeps `snapshot` taken at `now`; returns its id (never 0) for continue tokens.
  std::uint64_t keep(std::shared_ptr<const page_snapshot> snapshot, clock::time_point now);
  // The snapshot `id`, unless it was released, evicted or is older than max_age at `now`.
  std::shared_ptr<const page_snapshot> find(std::uint64_t id, clock::time_point now);
  // Forgets `id`: its last page has been served.
  void release(std::uint64_t id);

  std::size_t size() const;

private:
  struct kept {
    std::uint64_t id;
    clock::time_point taken;
    std::shared_ptr<const page_snapshot> snapshot;
  };

  // Drops snapshots older than max_age at `now` (the deque is in the order taken).
  void evict_expired(clock::time_point now);

  const std::size_t capacity_;
  const std::chrono::seconds max_age_;
  mutable std::mutex mutex_;
  std::deque<kept> kept_; // oldest first
  std::uint64_t next_id_ = 1;
};

} // namespace kinformer::service
