#pragma once
// The probes kinformerd serves: /healthz (live) and /readyz (every informer synced), as a status
// code and a plain-text body for the HTTP server.

#include "actors/cache_messages.hpp"

#include <optional>
#include <string>

namespace kinformer {

struct probe_response {
  int status = 200;
  std::string body;
};

// Live while the cache answers: `stats` is nullopt when the cache did not reply in time.
probe_response liveness(const std::optional<cache_stats>& stats);

// Ready once every informer the cache runs has synced; the body names those that have not.
// A cache with no informers is ready: nothing is waiting for a list. While `waiting` is not empty
// (start-up has not reached the API server yet: why), not ready.
probe_response readiness(const std::optional<cache_stats>& stats, const std::string& waiting = {});

} // namespace kinformer
