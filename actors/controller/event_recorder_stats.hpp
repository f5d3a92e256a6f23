#pragma once
// What the event recorder has done (actors/controller/event_recorder.hpp).

#include <cstdint>
#include <string>

namespace kinformer {

struct event_recorder_stats {
  std::uint64_t recorded = 0;       // occurrences given to the recorder
  std::uint64_t created = 0;        // Events created on the server
  std::uint64_t series_patched = 0; // series counts written
  std::uint64_t retried = 0;        // writes sent again after a failure that may pass
  std::uint64_t failed = 0;         // writes given up (refused, or out of attempts)
  std::uint64_t dropped = 0;        // occurrences dropped because too many writes were pending
  std::uint64_t pending = 0;        // writes queued or in flight
  std::uint64_t tracked = 0;        // Events remembered for series
  std::string last_error;
};

} // namespace kinformer
