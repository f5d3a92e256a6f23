#include "tests/bench/update_pump.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <thread>

namespace kinformer::bench {

using clock = std::chrono::steady_clock;

update_pump::update_pump(sim::storage& store, delivery_counter& delivered, pump_options options)
    : store_(store), delivered_(delivered), options_(std::move(options)),
      generator_(options_.generator) {}

status_result update_pump::write_one(const pod_key& pod) {
  auto current = store_.get(sim::pods_resource, pod.ns, pod.name);
  if (!current)
    return make_error(errc::status,
                      "get " + pod.ns + "/" + pod.name + ": " + current.failure().describe());
  // The copy carries metadata.resourceVersion, so this is a compare-and-swap update, as a
  // kubelet's status write is. It is parsed into a scratch arena and moved into the write, as
  // kubesim's churn does: a tree on the default heap, copied again by the write, cost the writer
  // 40% of its time, on the cores the informer shares.
  boost::json::value body =
      current->object->tree(boost::json::make_shared_resource<boost::json::monotonic_resource>());
  if (generator_.random().percent(options_.label_percent))
    generator_.change_labels(body);
  else
    generator_.change_status(body);
  auto started = clock::now();
  auto written = store_.update_value(sim::pods_resource, pod.ns, pod.name, std::move(body));
  if (!written)
    return make_error(errc::status,
                      "update " + pod.ns + "/" + pod.name + ": " + written.failure().describe());
  if (options_.on_write) {
    auto version = written->object->meta().resource_version;
    std::uint64_t number = 0;
    std::from_chars(version.data(), version.data() + version.size(), number);
    options_.on_write(number, started);
  }
  return ok_v;
}

status_result update_pump::wait_for_delivery(std::uint64_t target, std::uint64_t written) {
  if (delivered_.wait_for_count(target, options_.stall_timeout))
    return ok_v;
  return make_error(errc::timeout, "the handler received nothing for " +
                                       std::to_string(options_.stall_timeout.count()) + " ms; " +
                                       std::to_string(delivered_.count()) + " of " +
                                       std::to_string(written) + " updates delivered");
}

result<pump_stats> update_pump::run() {
  std::vector<pod_key> pods;
  for (auto& version : store_.truth(sim::pods_resource)) {
    auto slash = version.key.find('/');
    if (slash == std::string::npos)
      continue;
    pods.push_back({version.key.substr(0, slash), version.key.substr(slash + 1)});
  }
  if (pods.empty())
    return make_error(errc::invalid_argument, "the storage holds no pods to update");
  if (options_.hold_watches && options_.release_watches)
    return run_bursts(pods);
  return run_continuous(pods);
}

result<pump_stats> update_pump::run_continuous(const std::vector<pod_key>& pods) {
  pump_stats stats;
  clock::duration throttled{};
  // Writes the handler has not received yet (a relist could deliver more deltas than writes).
  auto outstanding = [this](std::uint64_t done) {
    auto delivered = delivered_.count();
    return done > delivered ? done - delivered : 0;
  };
  const auto started = clock::now();
  for (std::uint64_t done = 0; done < options_.writes; ++done) {
    if (options_.writes_per_second > 0)
      std::this_thread::sleep_until(
          started + std::chrono::duration_cast<clock::duration>(
                        std::chrono::duration<double>(done / options_.writes_per_second)));
    if (outstanding(done) > options_.max_lag) {
      // Resume at half the bound, so the writer does not wake for every single delta.
      auto wait_started = clock::now();
      if (auto caught_up = wait_for_delivery(done - options_.max_lag / 2, done); !caught_up)
        return std::move(caught_up).err();
      throttled += clock::now() - wait_started;
    }
    if (auto written = write_one(pods[generator_.random().below(pods.size())]); !written)
      return std::move(written).err();
    ++stats.writes;
  }
  stats.seconds = std::chrono::duration<double>(clock::now() - started).count();
  stats.throttled_seconds = std::chrono::duration<double>(throttled).count();
  return stats;
}

result<pump_stats> update_pump::run_bursts(const std::vector<pod_key>& pods) {
  pump_stats stats;
  clock::duration draining{};
  const auto started = clock::now();
  while (stats.writes < options_.writes) {
    auto burst = std::min(options_.max_lag, options_.writes - stats.writes);
    options_.hold_watches();
    for (std::uint64_t i = 0; i < burst; ++i) {
      if (auto written = write_one(pods[generator_.random().below(pods.size())]); !written) {
        options_.release_watches();
        return std::move(written).err();
      }
      ++stats.writes;
    }
    auto released = clock::now();
    options_.release_watches();
    if (auto drained = wait_for_delivery(stats.writes, stats.writes); !drained)
      return std::move(drained).err();
    draining += clock::now() - released;
  }
  stats.seconds = std::chrono::duration<double>(clock::now() - started).count();
  stats.drain_seconds = std::chrono::duration<double>(draining).count();
  stats.throttled_seconds = stats.drain_seconds;
  return stats;
}

} // namespace kinformer::bench
