#pragma once
// Copy-on-write sharded hash containers: the one writer mutates in place what no snapshot shares,
// and copies a shard (or a bucket) only the first time it writes to it after a snapshot.
//
// A snapshot copies the array of shard pointers (O(#shards)), never the entries; the next write
// to a shard copies that shard alone (O(entries / #shards)).

#include "actors/string_hash.hpp"

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

// Under ThreadSanitizer (g++ says so with __SANITIZE_THREAD__, clang with __has_feature).
#if defined(__SANITIZE_THREAD__)
#define KINFORMER_COW_SHARDS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KINFORMER_COW_SHARDS_TSAN 1
#endif
#endif

namespace kinformer {

// Makes `p` the only owner of its value, copying the value when someone else shares it.
//
// Why use_count() is a safe test here: references to shards and buckets are only ever created
// by the writer thread (snapshots are taken on it), so other threads can only drop references:
// the count can fall concurrently but never rise. A count of 1 therefore means no snapshot can
// reach the value any more; a stale count above 1 only costs one needless copy. The acquire
// fence pairs with the release in the readers' shared_ptr decrement, so their last reads happen
// before our writes.
template <class T>
T& ensure_exclusive(std::shared_ptr<T>& p) {
  if (p.use_count() > 1)
    p = std::make_shared<T>(*p);
  else
#if defined(KINFORMER_COW_SHARDS_TSAN)
    // ThreadSanitizer does not model fences. A copy and release of `p` is an acq_rel
    // read-modify-write of the same count the readers released, which it does see.
    std::shared_ptr<T>(p).reset();
#else
    std::atomic_thread_fence(std::memory_order_acquire);
#endif
  return *p;
}

// Which of `shard_count` (a power of two) shards holds `key`. Uses the high bits of the hash:
// the maps inside a shard bucket by the low ones.
inline std::size_t shard_of(std::string_view key, std::size_t shard_count) noexcept {
  return (string_hash{}(key) >> 16) & (shard_count - 1);
}

// `Map` is any hash container searchable by std::string_view (its hash must agree with
// string_hash on the key text, which picks the shard).
template <class Map>
class cow_shards {
public:
  using map_type = Map;
  // What a snapshot holds: immutable shards, shared with the writer until it writes to them.
  using frozen = std::vector<std::shared_ptr<const map_type>>;

  // `shard_count` is rounded up to a power of two.
  explicit cow_shards(std::size_t shard_count) {
    std::size_t n = 1;
    while (n < shard_count)
      n <<= 1;
    shards_.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      shards_.push_back(std::make_shared<map_type>());
  }

  const map_type& shard_for(std::string_view key) const {
    return *shards_[shard_of(key, shards_.size())];
  }
  // The shard holding `key`, made exclusive to the writer first.
  map_type& mutable_shard_for(std::string_view key) {
    return ensure_exclusive(shards_[shard_of(key, shards_.size())]);
  }

  std::size_t shard_count() const noexcept { return shards_.size(); }
  const map_type& shard(std::size_t i) const { return *shards_[i]; }
  map_type& mutable_shard(std::size_t i) { return ensure_exclusive(shards_[i]); }

  frozen freeze() const { return frozen(shards_.begin(), shards_.end()); }

private:
  std::vector<std::shared_ptr<map_type>> shards_;
};

// Reads a frozen shard array the same way the writer reads its live one.
template <class Map>
const Map& frozen_shard_for(const std::vector<std::shared_ptr<const Map>>& shards,
                            std::string_view key) {
  return *shards[shard_of(key, shards.size())];
}

} // namespace kinformer
