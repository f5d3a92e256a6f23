#pragma once
// A second watcher on the simulator's storage that sees exactly the lines the informer's watch
// is sent (the same projection: full objects or PartialObjectMetadata), counts them and their
// bytes, and keeps every n-th line for the Boost.JSON limit. Keeping all of them is not an
// option: a million 3.5 KB lines are 3.5 GB.

#include "app/kubesim/storage.hpp"
#include "tests/bench/parse_ceiling.hpp"

#include <cstdint>

namespace kinformer::bench {

class watch_tap {
public:
  watch_tap() = default;
  watch_tap(const watch_tap&) = delete;
  watch_tap& operator=(const watch_tap&) = delete;

  // Watches `gvr` from the storage's current resourceVersion on. `sample_every` >= 1.
  status_result start(sim::storage& store, const group_version_resource& gvr, bool metadata_only,
                      std::uint64_t sample_every);
  // No line is counted after stop() returns; the figures below are then final.
  void stop() { handle_.stop(); }

  std::uint64_t events() const { return events_; }
  std::uint64_t bytes() const { return bytes_; }
  const json_documents& samples() const { return samples_; }

private:
  sim::watch_handle handle_;
  std::uint64_t sample_every_ = 1;
  // Written by the storage's writing thread (the sink runs under its lock); read after stop().
  std::uint64_t events_ = 0;
  std::uint64_t bytes_ = 0;
  json_documents samples_;
};

} // namespace kinformer::bench
