#include "actors/controller/work_queue.hpp"

#include <algorithm>

namespace kinformer {

namespace {

double seconds_between(work_queue::clock::time_point from, work_queue::clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

} // namespace

std::vector<double> work_queue_duration_bounds() {
  return {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10};
}

work_queue_stats::work_queue_stats()
    : queue_seconds(work_queue_duration_bounds()), work_seconds(work_queue_duration_bounds()) {}

work_queue::work_queue(rate_limiter limiter) : limiter_(std::move(limiter)) {}

void work_queue::add(std::string_view key, clock::time_point now) {
  if (shutting_down_ || dirty_.find(key) != dirty_.end())
    return;
  ++stats_.adds;
  dirty_.emplace(std::string(key), now);
  // A key being processed waits for done(): it must not be handed out twice at once.
  if (processing_.find(key) == processing_.end())
    queue_.emplace_back(key);
}

void work_queue::add_after(std::string_view key, std::chrono::nanoseconds delay,
                           clock::time_point now) {
  if (shutting_down_)
    return;
  ++stats_.retries;
  if (delay <= std::chrono::nanoseconds(0)) {
    add(key, now);
    return;
  }
  auto due = now + std::chrono::duration_cast<clock::duration>(delay);
  if (auto it = due_at_.find(key); it != due_at_.end()) {
    if (due >= it->second)
      return; // already waiting, and due sooner
    waiting_.erase({it->second, it->first});
    it->second = due;
    waiting_.emplace(due, it->first);
    return;
  }
  auto [it, inserted] = due_at_.emplace(std::string(key), due);
  waiting_.emplace(due, it->first);
}

void work_queue::add_rate_limited(std::string_view key, clock::time_point now) {
  if (shutting_down_)
    return;
  add_after(key, limiter_.when(key, now), now);
}

void work_queue::move_due(clock::time_point now) {
  while (!waiting_.empty() && waiting_.begin()->first <= now) {
    auto node = waiting_.extract(waiting_.begin());
    due_at_.erase(node.value().second);
    add(node.value().second, now);
  }
}

std::optional<std::string> work_queue::get(clock::time_point now) {
  move_due(now);
  if (queue_.empty())
    return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  if (auto it = dirty_.find(key); it != dirty_.end()) {
    stats_.queue_seconds.observe(seconds_between(it->second, now));
    dirty_.erase(it);
  }
  processing_.emplace(key, now);
  return key;
}

void work_queue::done(std::string_view key, clock::time_point now) {
  auto it = processing_.find(key);
  if (it == processing_.end())
    return;
  stats_.work_seconds.observe(seconds_between(it->second, now));
  processing_.erase(it);
  // Added while it was processed: now it may go out again.
  if (dirty_.find(key) != dirty_.end())
    queue_.emplace_back(key);
}

std::optional<work_queue::clock::time_point> work_queue::next_due() const {
  if (waiting_.empty())
    return std::nullopt;
  return waiting_.begin()->first;
}

double work_queue::unfinished_work_seconds(clock::time_point now) const {
  double total = 0;
  for (const auto& [key, started] : processing_)
    total += seconds_between(started, now);
  return total;
}

double work_queue::longest_running_seconds(clock::time_point now) const {
  double longest = 0;
  for (const auto& [key, started] : processing_)
    longest = std::max(longest, seconds_between(started, now));
  return longest;
}

} // namespace kinformer
