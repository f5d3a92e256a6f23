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

void subscription_queue::set_latest(std::uint64_t seq) {
  std::string_view key = at(seq).d.object->key();
  auto [it, inserted] = latest_.insert(latest_slot{key, seq});
  if (inserted)
    return;
  // The older slot stays queued, so its view was valid for the lookup; now view the newer one.
  it->key = key;
  it->seq = seq;
}

void subscription_queue::build_key_index() {
  for (std::uint64_t seq = head_; seq < tail_; ++seq)
    set_latest(seq);
  indexed_ = true;
}

void subscription_queue::append(delta d) {
  if (tail_ - head_ == ring_.size())
    grow();
  std::uint64_t seq = tail_++;
  slot& s = at(seq);
  s.d = std::move(d);
  if (indexed_)
    set_latest(seq);
  ++depth_;
  initial_pending_ += s.d.initial_list;
  stats_.high_water = std::max(stats_.high_water, depth_);
}

subscription_queue::merge_result subscription_queue::merge(delta& pending, delta& next) {
  using t = delta_type;
  switch (pending.type) {
  case t::added:
    if (next.type == t::deleted || next.type == t::added)
      return merge_result::not_mergeable; // a creation is never hidden

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
  std::uint64_t seq = head_++;
  slot& s = at(seq);
  if (indexed_) {
    auto it = latest_.find(s.d.object->key());
    if (it != latest_.end() && it->seq == seq)
      latest_.erase(it);
  }
  delta out = std::move(s.d);
  s.d = delta{};
  --depth_;
  initial_pending_ -= out.initial_list;
  --credit_;
  ++stats_.delivered;
  if (depth_ == 0) {
    // Drained: forget the key index until the bound is reached again.
    latest_.clear();
    indexed_ = false;
  }
  return out;
}

} // namespace kinformer
