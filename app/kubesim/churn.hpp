#pragma once
// Churn: a steady stream of realistic pod writes against a storage, as a busy cluster makes them.
// Creates, relabels, status updates, spec updates (the server bumps generation) and deletes, in a
// mix drawn from a seed, at a set rate or as fast as possible, for a count or a duration. Creates
// and deletes keep the pod population near where it started.
//
// Runs on its own thread (start/stop), or step by step on the caller's (run_steps) for
// deterministic tests.

#include "app/kubesim/object_generator.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kinformer::sim {

class storage;

struct churn_options {
  // Writes per second; 0 = as fast as possible.
  double rate = 100;
  // Stop after this many writes; 0 = no limit.
  std::uint64_t count = 0;
  // Stop after this long; zero = no limit.
  std::chrono::milliseconds duration{0};
  // The mix, as relative weights.
  unsigned create_weight = 15;
  unsigned delete_weight = 15;
  unsigned label_weight = 20;
  unsigned status_weight = 40;
  unsigned spec_weight = 10;
  // The population churn keeps pods near: 0 = the number of pods present when churn starts
  // (at least 1). Deletes never take it below half, creates never above one and a half times.
  std::size_t population = 0;
  // Namespaces new pods go to when the storage holds none: namespace_name(0 .. n-1).
  std::size_t namespaces = 1;
  // Seed and pod size of churn's own generator.
  generator_options generator;
};

struct churn_stats {
  std::uint64_t creates = 0;
  std::uint64_t deletes = 0;
  std::uint64_t label_updates = 0;
  std::uint64_t status_updates = 0;
  std::uint64_t spec_updates = 0;
  // Writes the storage refused (a conflict with another writer, an injected fault).
  std::uint64_t failures = 0;

  std::uint64_t writes() const {
    return creates + deletes + label_updates + status_updates + spec_updates;
  }
};

class churn {
public:
  churn(storage& store, churn_options options);
  // Stops the thread if it runs.
  ~churn();
  churn(const churn&) = delete;
  churn& operator=(const churn&) = delete;

  // Starts the background thread (no-op when running). The count and duration limits count
  // from here.
  void start();
  // Stops the thread and waits for it; returns at once when not running.
  void stop();
  // Waits until the thread has reached its count or duration limit (or was stopped).
  void wait();
  bool running() const;

  // Performs `steps` writes on the calling thread, unpaced (the churn must not be running).
  void run_steps(std::uint64_t steps);

  churn_stats stats() const;
  // The pods churn currently knows of.
  std::size_t population() const;
  const churn_options& options() const noexcept { return options_; }

private:
  struct pod_ref {
    std::string ns;
    std::string name;
  };
  enum class action { create, remove, relabel, restatus, respec };

  void load_population();
  // Reads the pods the storage holds now into pods_.
  void read_pods();
  action pick_action();
  void step();
  bool create_pod();
  bool remove_pod();
  bool update_pod(action what);
  void run(std::uint64_t limit, std::chrono::steady_clock::time_point deadline);

  storage& store_;
  churn_options options_;
  object_generator generator_;
  std::vector<pod_ref> pods_; // touched by one thread at a time (the worker, or run_steps)
  std::size_t target_population_ = 0;
  bool loaded_ = false;
  std::uint64_t restores_seen_ = 0; // the storage's backups_restored() when pods_ was read

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  churn_stats stats_;
  std::size_t population_ = 0;
  bool stop_requested_ = false;
  bool finished_ = true;
  std::thread worker_;
};

} // namespace kinformer::sim
