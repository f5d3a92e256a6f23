#include "app/kinformerd/health.hpp"

namespace kinformer {

namespace {

std::string describe(const cache_informer_stats& info) {
  return info.namespace_.empty() ? info.kind : info.kind + " in namespace " + info.namespace_;
}

} // namespace

probe_response liveness(const std::optional<cache_stats>& stats) {
  if (!stats)
    return {503, "not live: the cache did not answer\n"};
  return {200, "ok\n"};
}

probe_response readiness(const std::optional<cache_stats>& stats, const std::string& waiting) {
  if (!waiting.empty())
    return {503, "not ready: waiting for the API server: " + waiting + "\n"};
  if (!stats)
    return {503, "not ready: the cache did not answer\n"};
  std::string unsynced;
  std::size_t not_synced = 0;
  for (const auto& info : stats->informers) {
    if (info.stats.synced)
      continue;
    ++not_synced;
    unsynced += "  " + describe(info) + "\n";
  }
  if (not_synced > 0)
    return {503, "not ready: " + std::to_string(not_synced) + " of " +
                     std::to_string(stats->informers.size()) + " informers not synced:\n" +
                     unsynced};
  return {200, "ok: " + std::to_string(stats->informers.size()) + " informers synced\n"};
}

} // namespace kinformer
