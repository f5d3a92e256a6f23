#include "app/kinformerd/continue_snapshots.hpp"

#include <algorithm>
#include <utility>

namespace kinformer::service {

continue_snapshots::continue_snapshots(std::size_t capacity, std::chrono::seconds max_age)
    : capacity_(std::max<std::size_t>(1, capacity)), max_age_(max_age) {}

void continue_snapshots::evict_expired(clock::time_point now) {
  while (!kept_.empty() && now - kept_.front().taken > max_age_)
    kept_.pop_front();
}

std::uint64_t continue_snapshots::keep(std::shared_ptr<const page_snapshot> snapshot,
                                       clock::time_point now) {
  std::lock_guard lock(mutex_);
  evict_expired(now);
  const auto id = next_id_++;
  kept_.push_back(kept{id, now, std::move(snapshot)});
  while (kept_.size() > capacity_)
    kept_.pop_front();
  return id;
}

std::shared_ptr<const page_snapshot> continue_snapshots::find(std::uint64_t id,
                                                              clock::time_point now) {
  std::lock_guard lock(mutex_);
  evict_expired(now);
  for (const auto& k : kept_)
    if (k.id == id)
      return k.snapshot;
  return nullptr;
}

void continue_snapshots::release(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  std::erase_if(kept_, [id](const kept& k) { return k.id == id; });
}

std::size_t continue_snapshots::size() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

} // namespace kinformer::service
