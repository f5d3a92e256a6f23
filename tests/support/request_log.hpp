#pragma once
// Test support: every list and watch of one resource the simulator answered, in arrival order
// (fed by storage::observe_requests), with waits on a condition variable and the counts the
// fault tables report.

#include "app/kubesim/storage.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace kinformer::testing {

// "list rv=\"0\" limit=7 -> 200", "list continue limit=7 -> 410", "watch rv=\"12\" -> 200".
inline std::string describe(const sim::request_record& r) {
  std::string out = r.kind == sim::request_record::verb::list ? "list" : "watch";
  if (r.continued)
    out += " continue";
  else
    out += " rv=\"" + r.resource_version + "\"";
  if (r.limit > 0)
    out += " limit=" + std::to_string(r.limit);
  if (r.send_initial_events)
    out += " sendInitialEvents";
  return out + " -> " + std::to_string(r.code);
}

inline std::size_t count_of(const std::vector<sim::request_record>& records,
                            sim::request_record::verb kind) {
  return static_cast<std::size_t>(
      std::count_if(records.begin(), records.end(),
                    [&](const sim::request_record& r) { return r.kind == kind; }));
}

// What a server saw, as the fault tables count it.
struct request_counts {
  std::size_t lists = 0;          // first pages (and unpaged lists)
  std::size_t continue_pages = 0; // pages asked for with a continue token
  std::size_t watches = 0;        // streaming lists included
};

inline request_counts count_requests(const std::vector<sim::request_record>& records) {
  request_counts out;
  for (const auto& r : records) {
    if (r.kind == sim::request_record::verb::watch)
      ++out.watches;
    else if (r.continued)
      ++out.continue_pages;
    else
      ++out.lists;
  }
  return out;
}

class request_log {
public:
  explicit request_log(group_version_resource resource) : resource_(std::move(resource)) {}

  void record(const sim::request_record& r) {
    if (r.gvr != resource_)
      return;
    std::lock_guard lock(mutex_);
    records_.push_back(r);
    changed_.notify_all();
  }

  // Waits until `pred(records)` holds; returns whether it did before the timeout.
  template <class Pred>
  bool wait_for(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return pred(records_); });
  }

  std::vector<sim::request_record> copy() const {
    std::lock_guard lock(mutex_);
    return records_;
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return records_.size();
  }

  // One line per request, for failure messages.
  std::string text() const {
    std::string out;
    for (const auto& r : copy())
      out += describe(r) + "\n";
    return out;
  }

private:
  const group_version_resource resource_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<sim::request_record> records_;
};

} // namespace kinformer::testing
