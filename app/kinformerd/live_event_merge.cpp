// A k-way merge of informers' deltas by resourceVersion, held back by the slowest informer's
// progress. See live_event_merge.hpp.

#include "app/kinformerd/live_event_merge.hpp"

#include "actors/change_window.hpp"
#include "protocol/object.hpp"

#include <algorithm>

namespace kinformer::service {

void live_event_merge::add_lane(lane_key lane) {
  lanes_.try_emplace(lane);
}

void live_event_merge::push(lane_key key, delta d) {
  auto& l = lanes_[key];
  // Not an integer: nothing to order it by, so it goes out first.
  const auto rv = parse_revision(d.object->meta().resource_version).value_or(0);
  l.progress = std::max(l.progress, rv);
  l.held.emplace_back(rv, std::move(d));
}

void live_event_merge::note_progress(lane_key key, std::string_view resource_version) {
  if (auto rv = parse_revision(resource_version)) {
    auto& l = lanes_[key];
    l.progress = std::max(l.progress, *rv);
  }
}

std::vector<delta> live_event_merge::take_ready() {
  std::vector<delta> out;
  for (;;) {
    // The lowest head of all lanes...
    lane* lowest = nullptr;
    for (auto& [key, l] : lanes_)
      if (!l.held.empty() &&
          (lowest == nullptr || l.held.front().first < lowest->held.front().first))
        lowest = &l;
    if (lowest == nullptr)
      return out;
    const std::uint64_t rv = lowest->held.front().first;
    // ...goes out when no other lane can still deliver below it: each has progressed to it (a
    // lane that holds a delta has progressed at least to that delta, past the lowest head).
    for (const auto& [key, l] : lanes_)
      if (&l != lowest && l.progress < rv && rv != 0)
        return out;
    out.push_back(std::move(lowest->held.front().second));
    lowest->held.pop_front();
  }
}

std::size_t live_event_merge::held() const {
  std::size_t count = 0;
  for (const auto& [key, l] : lanes_)
    count += l.held.size();
  return count;
}

bool live_event_merge::holding() const {
  return std::any_of(lanes_.begin(), lanes_.end(),
                     [](const auto& entry) { return !entry.second.held.empty(); });
}

std::vector<live_event_merge::lane_key> live_event_merge::lanes_to_ask() const {
  std::vector<lane_key> out;
  for (const auto& [key, l] : lanes_)
    if (l.held.empty())
      out.push_back(key);
  return out;
}

} // namespace kinformer::service
