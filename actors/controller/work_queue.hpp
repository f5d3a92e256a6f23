#pragma once
// A rate-limited work queue with client-go's semantics (util/workqueue: queue.go,
// delaying_queue.go, rate_limiting_queue.go), as a plain single-threaded class: its owner (the
// reconcile runner actor) serialises every call and passes the time in, so it is deterministic
// and testable without threads or clocks.
//
// The guarantees client-go's queue gives, and this one keeps:
//   - de-duplication: a key added again before it is handed out is queued once;
//   - never twice at once: a key added while it is being processed is not handed out again
//     until done() is called for it; it is then queued once more (it changed meanwhile);
//   - FIFO among ready keys;
//   - add_after() delays a key; a key already waiting keeps the earlier of the two times;
//   - add_rate_limited() delays it by the rate limiter (per-key exponential backoff and an
//     overall token bucket); forget() clears the key's backoff after a success;
//   - after shut_down() nothing more is accepted; keys already queued are still handed out so
//     that the owner can drain.

#include "actors/controller/rate_limiter.hpp"
#include "actors/histogram.hpp"
#include "actors/string_hash.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace kinformer {

// client-go's workqueue metrics, as plain data.
struct work_queue_stats {
  std::uint64_t adds = 0;    // keys that became dirty (workqueue_adds_total)
  std::uint64_t retries = 0; // add_after / add_rate_limited calls (workqueue_retries_total)
  histogram queue_seconds;   // from add to hand-out (workqueue_queue_duration_seconds)
  histogram work_seconds;    // from hand-out to done (workqueue_work_duration_seconds)

  work_queue_stats();
};

// Bucket bounds of the two histograms, client-go's: 1 ns to 10 s, powers of ten.
std::vector<double> work_queue_duration_bounds();

class work_queue {
public:
  using clock = std::chrono::steady_clock;

  explicit work_queue(rate_limiter limiter = rate_limiter{});

  // Queues `key` unless it is already waiting to be handed out (or the queue is shut down).
  void add(std::string_view key, clock::time_point now);
  // Queues `key` once `delay` has passed (at once when it is not positive).
  void add_after(std::string_view key, std::chrono::nanoseconds delay, clock::time_point now);
  // Queues `key` after the wait its rate limiter gives (one more failure recorded).
  void add_rate_limited(std::string_view key, clock::time_point now);
  // The key succeeded: its backoff starts over.
  void forget(std::string_view key) { limiter_.forget(key); }
  std::uint32_t num_requeues(std::string_view key) const { return limiter_.num_requeues(key); }

  // Moves the delayed keys due at `now` into the queue, then hands out the oldest ready key,
  // which counts as processing until done(). Empty when no key is ready.
  std::optional<std::string> get(clock::time_point now);
  // The owner finished `key`: if it was added meanwhile, it is queued again.
  void done(std::string_view key, clock::time_point now);

  // When the earliest delayed key falls due (the owner arms a timer for it); empty if none.
  std::optional<clock::time_point> next_due() const;

  void shut_down() noexcept { shutting_down_ = true; }
  bool shutting_down() const noexcept { return shutting_down_; }

  // Keys added and not handed out yet (workqueue_depth).
  std::size_t depth() const noexcept { return dirty_.size(); }
  // Keys ready to be handed out now.
  std::size_t ready() const noexcept { return queue_.size(); }
  // Keys waiting for their delay.
  std::size_t delayed() const noexcept { return waiting_.size(); }
  // Keys handed out and not done yet.
  std::size_t processing() const noexcept { return processing_.size(); }
  // How long the keys in processing have run, in all and the longest
  // (workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds).
  double unfinished_work_seconds(clock::time_point now) const;
  double longest_running_seconds(clock::time_point now) const;

  const work_queue_stats& stats() const noexcept { return stats_; }
  const rate_limiter& limiter() const noexcept { return limiter_; }

private:
  template <class V>
  using key_map = std::unordered_map<std::string, V, string_hash, std::equal_to<>>;

  void move_due(clock::time_point now);

  rate_limiter limiter_;
  std::deque<std::string> queue_;
  key_map<clock::time_point> dirty_;      // added, not handed out: when it was added
  key_map<clock::time_point> processing_; // handed out, not done: when it was handed out
  key_map<clock::time_point> due_at_;     // delayed keys and when they fall due
  std::set<std::pair<clock::time_point, std::string>> waiting_; // the same, ordered by time
  work_queue_stats stats_;
  bool shutting_down_ = false;
};

} // namespace kinformer
