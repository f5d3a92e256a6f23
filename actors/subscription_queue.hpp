#pragma once
// One handler subscription's delivery queue: ordered, credit-based, bounded by coalescing.
//
// The informer actor pushes every delta; the subscriber grants credit; each pop spends one
// credit. While the queue holds fewer than `bound` deltas, every delta is delivered as pushed.
// At the bound, a new delta is folded into the latest pending delta for the same key, so the
// handler still converges to the latest state of every key, and never misses a creation or a
// deletion (controllers count both: ReplicaSet and Job "expectations"):
//
//   pending  + new      -> pending becomes
//   added    + updated  -> added(new object)            (sync likewise)
//   added    + deleted  -> not merged: the handler gets the add, then the delete
//   updated  + updated  -> updated(old of the first, object of the last)   (sync likewise)
//   updated  + deleted  -> deleted(new object, old of the first): the handler had seen it
//   sync     + updated  -> updated(old of the sync, new object)
//   sync     + sync     -> sync(new object);  sync + deleted -> deleted(new)
//   deleted  + deleted  -> the later delete
//   deleted  + added    -> not merged: a recreated object is a new identity (new uid), so the
//                          handler gets the delete and then the add
//
// So each identity of a key has at most one pending added (or updated) followed by at most one
// deleted: intermediate updates merge, creations and deletions never do. Per-key order is kept;
// deltas of different keys may overtake each other only by merging into an earlier position.
// When a delta cannot merge (its key has nothing pending, added + deleted, deleted + added), it
// is appended anyway and counted in `over_bound`: the bound limits the deltas per object, not
// the number of objects. Depth past the bound is then at most two deltas per identity, i.e.
// proportional to the objects, which the queue shares rather than copies. No final state is
// ever dropped, and no "resync" is ever needed.
//
// Not thread-safe: owned by the informer actor. Without overflow, push and pop allocate nothing
// once the ring has grown to the working depth.

#include "actors/delta.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace kinformer {

struct subscription_queue_stats {
  std::uint64_t pushed = 0;     // deltas given to push()
  std::uint64_t delivered = 0;  // deltas returned by pop()
  std::uint64_t coalesced = 0;  // deltas folded into another
  std::uint64_t over_bound = 0; // deltas appended at the bound because they could not merge
  std::size_t depth = 0;        // deltas waiting: pushed = delivered + coalesced + depth
  std::size_t high_water = 0;   // the largest depth seen
};

class subscription_queue {
public:
  // `bound` is at least 1.
  explicit subscription_queue(std::size_t bound);

  // Queues `d`. Refuses (returns false, queues nothing) a delta without an object.
  bool push(delta d);
  // The subscriber allows `n` more deliveries.
  void grant(std::size_t n) noexcept { credit_ += n; }
  // The next delta, when one is waiting and credit remains; spends one credit.
  std::optional<delta> pop();

  bool ready() const noexcept { return credit_ > 0 && depth_ > 0; }
  std::size_t depth() const noexcept { return depth_; }
  // Queued deltas flagged initial_list: zero once a subscriber has received its initial state.
  std::size_t initial_pending() const noexcept { return initial_pending_; }
  std::size_t credit() const noexcept { return credit_; }
  std::size_t bound() const noexcept { return bound_; }
  subscription_queue_stats stats() const noexcept;

private:
  struct slot {
    delta d;
  };

  enum class merge_result { merged, not_mergeable };

  slot& at(std::uint64_t seq) { return ring_[seq & (ring_.size() - 1)]; }
  void append(delta d);
  void grow();
  void build_key_index();
  // Makes slot `seq` its key's latest pending slot.
  void set_latest(std::uint64_t seq);
  static merge_result merge(delta& pending, delta& next);

  std::size_t bound_;
  std::size_t credit_ = 0;
  std::size_t depth_ = 0;
  std::size_t initial_pending_ = 0;
  std::vector<slot> ring_; // a power-of-two ring, indexed by sequence number
  std::uint64_t head_ = 0; // sequence number of the oldest slot
  std::uint64_t tail_ = 0; // sequence number the next push gets
  // Each key's latest pending slot. `key` views that slot's object; when the slot's object is
  // replaced by one with the same key text, the view is re-pointed in place (same text, same
  // hash, same position), hence mutable.
  struct latest_slot {
    mutable std::string_view key;
    mutable std::uint64_t seq;
  };
  struct latest_hash {
    using is_transparent = void;
    // Not noexcept, so the set caches hashes (see string_hash in cow_shards.hpp).
    std::size_t operator()(std::string_view key) const;
    std::size_t operator()(const latest_slot& l) const { return (*this)(l.key); }
  };
  struct latest_equal {
    using is_transparent = void;
    static std::string_view key(std::string_view k) noexcept { return k; }
    static std::string_view key(const latest_slot& l) noexcept { return l.key; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const noexcept {
      return key(a) == key(b);
    }
  };
  // Built only when the bound is first reached (so the common, keeping-up case pays nothing),
  // and dropped when the queue drains.
  std::unordered_set<latest_slot, latest_hash, latest_equal> latest_;
  bool indexed_ = false;
  subscription_queue_stats stats_;
};

} // namespace kinformer
