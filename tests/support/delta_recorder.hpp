#pragma once
// Test support: what one handler received, folded into the state it implies, with waits that
// block on a condition variable (never on a sleep).

#include "actors/delta.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kinformer::testing {

class delta_recorder {
public:
  void record(const delta& d) {
    std::lock_guard lock(mutex_);
    deltas_.push_back(d);
    std::string key(d.object->key());
    auto rv = std::string(d.object->meta().resource_version);
    // Every delivered version of one key must be newer than the last (order per object).
    auto last = last_version_.find(key);
    if (last != last_version_.end() && d.type != delta_type::sync &&
        std::stoull(rv) < std::stoull(last->second))
      out_of_order_.push_back(key + "@" + rv);
    last_version_[key] = rv;
    if (d.type == delta_type::deleted) {
      state_.erase(key);
      deleted_.push_back(key);
    } else {
      state_[key] = rv;
    }
    changed_.notify_all();
  }

  void mark_synced() {
    std::lock_guard lock(mutex_);
    ++synced_;
    changed_.notify_all();
  }

  // Waits until `pred(*this)` holds (checked under the lock after every delta), or the
  // deadline passes; returns whether it held.
  template <class Pred>
  bool wait_for(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return pred(*this); });
  }

  // Wakes waiters whose predicate depends on something outside the recorder.
  void poke() { changed_.notify_all(); }

  // Unlocked accessors, for use inside wait_for predicates (the lock is held there) or after
  // the handler is done.
  const std::map<std::string, std::string>& state() const { return state_; }
  const std::vector<delta>& deltas() const { return deltas_; }
  const std::vector<std::string>& deleted() const { return deleted_; }
  const std::vector<std::string>& out_of_order() const { return out_of_order_; }
  int synced() const { return synced_; }

  // Copies, taken under the lock.
  std::map<std::string, std::string> state_copy() const {
    std::lock_guard lock(mutex_);
    return state_;
  }
  std::vector<delta> deltas_copy() const {
    std::lock_guard lock(mutex_);
    return deltas_;
  }

private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<delta> deltas_;
  std::map<std::string, std::string> state_;
  std::map<std::string, std::string> last_version_;
  std::vector<std::string> deleted_;
  std::vector<std::string> out_of_order_;
  int synced_ = 0;
};

} // namespace kinformer::testing
