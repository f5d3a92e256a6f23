#pragma once
// One handler subscription's delivery queue: ordered, credit-based, bounded by coalescing.
//
// The informer actor pushes every delta; the subscriber grants credit; each pop spends one
// credit. While the queue holds fewer than `bound` deltas, every delta is delivered as pushed.
// At the bound, a new delta is folded into the latest pending delta for the same key, so the
// handler still converges to the latest state of every key (deletes included):
//
//   pending  + new      -> pending becomes
//   added    + updated  -> added(new object)            (sync likewise)
//   added    + deleted  -> nothing: both are dropped; the handler never saw the object, and
//                          after both it is gone again, so there is nothing to observe
//   updated  + updated  -> updated(old of the first, object of the last)   (sync likewise)
//   updated  + deleted  -> deleted(new object, old of the first)
//   sync     + updated  -> updated(old of the sync, new object)
//   sync     + sync     -> sync(new object);  sync + deleted -> deleted(new)
//   deleted  + deleted  -> the later delete
//   deleted  + added    -> not merged: a recreated object is a new identity (new uid), so the
//                          handler gets the delete and then the add
//
// Per-key order is kept; deltas of different keys may overtake each other only by merging
// into an earlier position. When a delta cannot merge (its key has nothing pending, or
// deleted + added), it is appended anyway and counted in `over_bound`: the bound limits the
// deltas per key, not the number of keys. Depth past the bound is then at most two deltas per
// distinct key (a delete and a re-add), i.e. proportional to the store, whose objects the queue
// shares rather than copies. No final state is ever dropped, and no "resync" is ever needed.
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
  std::uint64_t coalesced = 0;  // deltas folded into another, or cancelled in pairs
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
  // Queued deltas flagged initial_list: zero once a subscriber has received its initial state
  // (an initial add cancelled by a delete counts as received).
  std::size_t initial_pending() const noexcept { return initial_pending_; }
  std::size_t credit() const noexcept { return credit_; }
  std::size_t bound() const noexcept { return bound_; }
  subscription_queue_stats stats() const noexcept;

private:
  static constexpr std::uint64_t no_slot = ~std::uint64_t{0};

  struct slot {
    delta d;
    std::uint64_t previous_same_key = no_slot; // the key's pending slot before this one
    bool live = false;                         // false once popped or cancelled
  };

  enum class merge_result { merged, cancelled, not_mergeable };

  slot& at(std::uint64_t seq) { return ring_[seq & (ring_.size() - 1)]; }
  void append(delta d);
  void grow();
  void build_key_index();
  // Makes slot `seq` its key's latest pending slot; returns the one before (no_slot if none).
  std::uint64_t set_latest(std::uint64_t seq);
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
