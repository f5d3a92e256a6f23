#include "actors/subscription_queue.hpp"

#include <algorithm>
#include <utility>

namespace kinformer {

subscription_queue::subscription_queue(std::size_t bound)
    : bound_(std::max<std::size_t>(bound, 1)), ring_(16) {}

subscription_queue_stats subscription_queue::stats() const noexcept {
  auto s = stats_;
  s.depth = depth_;
  return s;
}

void subscription_queue::grow() {
  std::vector<slot> bigger(ring_.size() * 2);
  for (std::uint64_t seq = head_; seq < tail_; ++seq)
    bigger[seq & (bigger.size() - 1)] = std::move(at(seq));
  ring_ = std::move(bigger);
}

std::size_t subscription_queue::latest_hash::operator()(std::string_view key) const {
  return std::hash<std::string_view>{}(key);
}

std::uint64_t subscription_queue::set_latest(std::uint64_t seq) {
  std::string_view key = at(seq).d.object->key();
  auto [it, inserted] = latest_.insert(latest_slot{key, seq});
  if (inserted)
    return no_slot;
  // The older slot stays queued, so its view was valid for the lookup; now view the newer one.
  it->key = key;
  return std::exchange(it->seq, seq);
}

void subscription_queue::build_key_index() {
  for (std::uint64_t seq = head_; seq < tail_; ++seq)
    if (at(seq).live)
      at(seq).previous_same_key = set_latest(seq);
  indexed_ = true;
}

void subscription_queue::append(delta d) {
  if (tail_ - head_ == ring_.size())
    grow();
  std::uint64_t seq = tail_++;
  slot& s = at(seq);
  s.d = std::move(d);
  s.live = true;
  s.previous_same_key = indexed_ ? set_latest(seq) : no_slot;
  ++depth_;
  initial_pending_ += s.d.initial_list;
  stats_.high_water = std::max(stats_.high_water, depth_);
}

subscription_queue::merge_result subscription_queue::merge(delta& pending, delta& next) {
  using t = delta_type;
  switch (pending.type) {
  case t::added:
    if (next.type == t::deleted)
      return merge_result::cancelled;
    if (next.type == t::added)
      return merge_result::not_mergeable;
    pending.object = std::move(next.object); // still an add, of the latest state
    return merge_result::merged;
  case t::updated:
  case t::sync:
    if (next.type == t::added)
      return merge_result::not_mergeable;
    if (next.type == t::deleted) {
      pending.type = t::deleted;
      pending.final_state_unknown = next.final_state_unknown;
    } else if (next.type == t::updated) {
      pending.type = t::updated;
    }
    // old_object stays: the handler last saw the state before the pending delta.
    pending.object = std::move(next.object);
    return merge_result::merged;
  case t::deleted:
    if (next.type != t::deleted)
      return merge_result::not_mergeable;
    pending = std::move(next);
    return merge_result::merged;
  }
  return merge_result::not_mergeable;
}

bool subscription_queue::push(delta d) {
  if (!d.object)
    return false; // every delta names its object's key; one without is a caller bug
  ++stats_.pushed;
  if (depth_ < bound_) {
    append(std::move(d));
    return true;
  }
  if (!indexed_)
    build_key_index();
  if (auto it = latest_.find(d.object->key()); it != latest_.end()) {
    slot& pending = at(it->seq);
    const bool was_initial = pending.d.initial_list;
    switch (merge(pending.d, d)) {
    case merge_result::merged:
      initial_pending_ = initial_pending_ - was_initial + pending.d.initial_list;
      // The pending object may have been replaced (and the old one released): re-point the view
      // before anything reads it.
      it->key = pending.d.object->key();
      ++stats_.coalesced;
      return true;
    case merge_result::cancelled: {
      // The key's previous pending slot, if still queued, becomes its latest again. Done while
      // the pending object, whose key the entry views, is still alive.
      std::uint64_t prev = pending.previous_same_key;
      if (prev != no_slot && prev >= head_ && at(prev).live) {
        it->key = at(prev).d.object->key();
        it->seq = prev;
      } else {
        latest_.erase(it);
      }
      initial_pending_ -= was_initial;
      pending.d = delta{};
      pending.live = false;
      if (--depth_ == 0)
        head_ = tail_; // only cancelled slots remain
      stats_.coalesced += 2;
      return true;
    }
    case merge_result::not_mergeable:
      break;
    }
  }
  ++stats_.over_bound;
  append(std::move(d));
  return true;
}

std::optional<delta> subscription_queue::pop() {
  if (credit_ == 0 || depth_ == 0)
    return std::nullopt;
  while (!at(head_).live)
    ++head_;
  std::uint64_t seq = head_++;
  slot& s = at(seq);
  if (indexed_) {
    auto it = latest_.find(s.d.object->key());
    if (it != latest_.end() && it->seq == seq)
      latest_.erase(it);
  }
  delta out = std::move(s.d);
  s.d = delta{};
  s.live = false;
  --depth_;
  initial_pending_ -= out.initial_list;
  --credit_;
  ++stats_.delivered;
  if (depth_ == 0) {
    // Only cancelled slots may remain: skip them, and forget the key index.
    head_ = tail_;
    latest_.clear();
    indexed_ = false;
  }
  return out;
}

} // namespace kinformer
