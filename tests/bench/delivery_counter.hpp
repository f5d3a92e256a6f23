#pragma once
// Counts deltas a handler has received, and lets one thread block until the count reaches a
// target. The handler's side is a single atomic increment per delta; it touches the mutex only
// when it crosses the target a waiter registered, so a million deltas cost a million atomic adds,
// not a million wake-ups.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>

namespace kinformer::bench {

class delivery_counter {
public:
  void add(std::uint64_t n = 1) {
    auto now = count_.fetch_add(n) + n;
    if (now >= wake_at_.load()) {
      std::lock_guard lock(mutex_);
      reached_.notify_all();
    }
  }

  std::uint64_t count() const { return count_.load(); }

  // Blocks until count() >= target. Gives up (returns false) once the count has not moved for
  // `idle_timeout`: the producer stalled. One waiter at a time.
  bool wait_for_count(std::uint64_t target, std::chrono::milliseconds idle_timeout) {
    std::unique_lock lock(mutex_);
    // Published before the count is re-checked, so add() either sees it or we see its count.
    wake_at_.store(target);
    std::uint64_t seen = count_.load();
    bool reached = true;
    while (seen < target) {
      if (reached_.wait_for(lock, idle_timeout, [&] { return count_.load() >= target; }))
        break;
      auto now = count_.load();
      if (now == seen) {
        reached = false;
        break;
      }
      seen = now;
    }
    wake_at_.store(no_waiter);
    return reached;
  }

private:
  static constexpr std::uint64_t no_waiter = std::numeric_limits<std::uint64_t>::max();

  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> wake_at_{no_waiter};
  std::mutex mutex_;
  std::condition_variable reached_;
};

} // namespace kinformer::bench
