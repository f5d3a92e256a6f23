#include "tests/bench/bench_report.hpp"

#include <boost/json.hpp>

#include <cstdarg>
#include <cstdio>
#include <ostream>

namespace kinformer::bench {

namespace {

double mib(std::size_t bytes) {
  return bytes / (1024.0 * 1024.0);
}

// One "  label ........ value" row.
void row(std::ostream& out, const char* label, const char* format, ...) {
  char value[160];
  va_list args;
  va_start(args, format);
  std::vsnprintf(value, sizeof value, format, args);
  va_end(args);
  char line[256];
  std::snprintf(line, sizeof line, "  %-34s %s\n", label, value);
  out << line;
}

void relist_rows(std::ostream& out, const relist_figures& f) {
  row(out, "time to converge", "%.3f s (%llu list)", f.seconds,
      static_cast<unsigned long long>(f.lists));
  row(out, "deltas to the handler", "%llu", static_cast<unsigned long long>(f.deltas));
  row(out, "informer CPU", "%.2f s", f.cpu.client_seconds);
  row(out, "items handed on as stored", "%llu", static_cast<unsigned long long>(f.items_reused));
  row(out, "RSS before / peak during", "%.1f / %.1f MiB (+%.1f MiB)", mib(f.rss_before),
      mib(f.peak_rss), mib(f.extra_peak_rss()));
}

void relist_fields(boost::json::object& o, const std::string& prefix, const relist_figures& f) {
  o[prefix + "seconds"] = f.seconds;
  o[prefix + "lists"] = f.lists;
  o[prefix + "deltas"] = f.deltas;
  o[prefix + "cpu_client_seconds"] = f.cpu.client_seconds;
  o[prefix + "items_reused"] = f.items_reused;
  o[prefix + "rss_before_bytes"] = f.rss_before;
  o[prefix + "peak_rss_bytes"] = f.peak_rss;
  o[prefix + "extra_peak_rss_bytes"] = f.extra_peak_rss();
}

} // namespace

void print_table(std::ostream& out, const bench_results& r) {
  const auto& s = r.settings;
  out << "informer_bench: " << s.pods << " pods in " << s.namespaces << " namespaces, " << s.events
      << " watch events, pod target " << s.pod_bytes << " B"
      << (s.metadata_only ? ", metadata-only" : "")
      << (s.drop_managed_fields ? ", managedFields dropped" : "")
      << (s.compress_objects.value_or(s.metadata_only) ? ", compressed" : "")
      << (s.drain_bursts ? ", drain bursts" : "") << "\n";
  out << "(MB = 10^6 bytes, MiB = 2^20 bytes; simulator, informer and handler share this "
         "process)\n\n";

  out << "sync (spawn informer -> handler synced)\n";
  row(out, "simulator load (not timed below)", "%.2f s", r.load_seconds);
  row(out, "objects listed", "%zu (avg %.0f B each)", r.list_items,
      r.list_items ? double(r.list_bytes) / r.list_items : 0.0);
  row(out, "sync time", "%.3f s", r.sync_seconds);
  row(out, "sync rate", "%.0f objects/s, %.1f MB/s of list items", r.sync_objects_per_second(),
      r.sync_megabytes_per_second());
  row(out, "Boost.JSON limit, same items", "%.1f MB/s (%zu docs, best of %d passes)",
      r.list_limit.megabytes_per_second(), r.list_limit.documents, r.list_limit.passes);
  row(out, "informer / limit", "%.1f %%", 100 * r.sync_share_of_limit());
  row(out, "informer CPU during sync", "%.3f s, %.1f MB of list items per CPU second",
      r.sync_cpu.client_seconds, r.sync_cpu_megabytes_per_second());
  row(out, "informer per CPU second / limit", "%.1f %%", 100 * r.sync_cpu_share_of_limit());

  out << (s.drain_bursts ? "\nwatch events (bursts of max-lag writes held back by the server; "
                           "rates count only release -> last delta)\n"
                         : "\nwatch events (first write -> last delta received)\n");
  row(out, "updates written", "%llu", static_cast<unsigned long long>(r.updates_written));
  row(out, "deltas delivered to the handler", "%llu",
      static_cast<unsigned long long>(r.deltas_delivered));
  row(out, "event phase", "%.3f s wall", r.event_seconds);
  if (s.drain_bursts)
    row(out, "delivery (drain) time", "%.3f s", r.delivery_seconds);
  row(out, "delivered", "%.0f events/s, %.1f MB/s of watch lines", r.events_per_second(),
      r.event_megabytes_per_second());
  row(out, "writer", "%.0f writes/s overall, %.0f when not waiting", r.writer_per_second(),
      r.writer_unthrottled_per_second());
  row(out, s.drain_bursts ? "writer waited for the drains" : "writer waited for the handler",
      "%.3f s of %.3f s (%s %llu writes)", r.writer_throttled_seconds, r.writer_seconds,
      s.drain_bursts ? "bursts of" : "at most", static_cast<unsigned long long>(s.max_lag));
  row(out, "Boost.JSON limit, same lines", "%.1f MB/s (every %llu. line: %zu docs, best of %d)",
      r.event_limit.megabytes_per_second(), static_cast<unsigned long long>(r.event_sample_every),
      r.event_limit.documents, r.event_limit.passes);
  row(out, "informer / limit", "%.1f %%", 100 * r.event_share_of_limit());
  row(out, "informer CPU", "%.2f s: %.1f us per update (simulator %.2f s, writer %.2f s)",
      r.event_cpu.client_seconds, r.event_cpu_us_per_update(), r.event_cpu.simulator_seconds,
      r.event_cpu.writer_seconds);

  if (s.latency_events > 0) {
    out << "\nlatency (updates paced at " << s.latency_rate
        << "/s; write started -> delta in the handler; writer at nice " << s.writer_nice << ")\n";
    row(out, "pace kept", "%.0f writes/s", r.latency_writes_per_second);
    row(out, "deltas timed", "%llu (%llu never arrived)",
        static_cast<unsigned long long>(r.latency.samples),
        static_cast<unsigned long long>(r.latency.missing));
    row(out, "p50 / p99 / p99.9 / max", "%.3f / %.3f / %.3f / %.3f ms", r.latency.p50_ms,
        r.latency.p99_ms, r.latency.p999_ms, r.latency.max_ms);
    row(out, "the host alone, same pace", "%.3f / %.3f / %.3f / %.3f ms (%.0f MiB touched)",
        r.host_pace.p50_ms, r.host_pace.p99_ms, r.host_pace.p999_ms, r.host_pace.max_ms,
        mib(r.host_pace_working_set));
    if (r.host_relay_threads > 0)
      row(out, "  relayed through threads",
          "%.3f / %.3f / %.3f / %.3f ms (%u threads waking each other)", r.host_relay.p50_ms,
          r.host_relay.p99_ms, r.host_relay.p999_ms, r.host_relay.max_ms, r.host_relay_threads);
  }

  if (s.relist) {
    out << "\nrelist (watch dropped, its resume answered 410; until store and handler converge)\n";
    relist_rows(out, r.relist);
    out << "\nrelist after a restore (the simulator back to before " << r.restore_updates
        << " random updates)\n";
    relist_rows(out, r.restore_relist);
  }

  if (s.fanout_handlers >= 2) {
    out << "\nfan-out (" << s.fanout_handlers << " handlers, the same number of updates)\n";
    row(out, "deltas delivered", "%llu in %.3f s", static_cast<unsigned long long>(r.fanout_deltas),
        r.fanout_seconds);
    row(out, "informer CPU", "%.2f s: %.1f us per update", r.fanout_cpu.client_seconds,
        r.fanout_cpu_us_per_update());
    row(out, "against one handler", "%.2fx the CPU per update", r.fanout_cpu_ratio());
  }

  out << "\nmemory (RSS after returning free heap to the OS)\n";
  row(out, "before the informer", "%.1f MiB (simulator with its objects)",
      mib(r.rss_before_informer));
  row(out, "after sync", "%.1f MiB", mib(r.rss_after_sync));
  row(out, "per stored object", "%.0f B (after - before) / objects: simulator excluded",
      r.rss_per_object());
  row(out, "at the end", "%.1f MiB (incl. the simulator's event history)", mib(r.rss_at_end));
  row(out, "peak", "%.1f MiB (whole process)", mib(r.peak_rss));

  out << "\ncheck\n";
  row(out, "informer store", "%zu objects at resourceVersion %s", r.informer_objects,
      r.informer_resource_version.c_str());
  row(out, "simulator", "resourceVersion %s: %s", r.storage_resource_version.c_str(),
      r.consistent ? "consistent" : "MISMATCH");
}

std::string json_line(const bench_results& r) {
  const auto& s = r.settings;
  boost::json::object o;
  o["pods"] = s.pods;
  o["namespaces"] = s.namespaces;
  o["events"] = s.events;
  o["pod_bytes_target"] = s.pod_bytes;
  o["metadata_only"] = s.metadata_only;
  o["drop_managed_fields"] = s.drop_managed_fields;
  o["compress_objects"] = s.compress_objects.value_or(s.metadata_only);
  o["drain_bursts"] = s.drain_bursts;
  o["max_lag"] = s.max_lag;
  o["load_seconds"] = r.load_seconds;
  o["list_items"] = r.list_items;
  o["list_bytes"] = r.list_bytes;
  o["sync_seconds"] = r.sync_seconds;
  o["sync_objects_per_second"] = r.sync_objects_per_second();
  o["sync_mb_per_second"] = r.sync_megabytes_per_second();
  o["sync_limit_mb_per_second"] = r.list_limit.megabytes_per_second();
  o["sync_share_of_limit"] = r.sync_share_of_limit();
  o["sync_cpu_seconds"] = r.sync_cpu.client_seconds;
  o["sync_cpu_mb_per_second"] = r.sync_cpu_megabytes_per_second();
  o["sync_cpu_share_of_limit"] = r.sync_cpu_share_of_limit();
  o["updates_written"] = r.updates_written;
  o["deltas_delivered"] = r.deltas_delivered;
  o["event_bytes"] = r.event_bytes;
  o["event_seconds"] = r.event_seconds;
  o["delivery_seconds"] = r.delivery_seconds;
  o["events_per_second"] = r.events_per_second();
  o["event_mb_per_second"] = r.event_megabytes_per_second();
  o["event_limit_mb_per_second"] = r.event_limit.megabytes_per_second();
  o["event_limit_documents"] = r.event_limit.documents;
  o["event_limit_sample_every"] = r.event_sample_every;
  o["event_share_of_limit"] = r.event_share_of_limit();
  o["writer_seconds"] = r.writer_seconds;
  o["writer_throttled_seconds"] = r.writer_throttled_seconds;
  o["writer_writes_per_second"] = r.writer_per_second();
  o["writer_unthrottled_writes_per_second"] = r.writer_unthrottled_per_second();
  o["event_cpu_client_seconds"] = r.event_cpu.client_seconds;
  o["event_cpu_simulator_seconds"] = r.event_cpu.simulator_seconds;
  o["event_cpu_writer_seconds"] = r.event_cpu.writer_seconds;
  o["event_cpu_us_per_update"] = r.event_cpu_us_per_update();
  o["latency_events"] = s.latency_events;
  o["latency_rate"] = s.latency_rate;
  o["latency_writer_nice"] = s.writer_nice;
  o["latency_writes_per_second"] = r.latency_writes_per_second;
  o["latency_samples"] = r.latency.samples;
  o["latency_missing"] = r.latency.missing;
  o["latency_p50_ms"] = r.latency.p50_ms;
  o["latency_p99_ms"] = r.latency.p99_ms;
  o["latency_p999_ms"] = r.latency.p999_ms;
  o["latency_max_ms"] = r.latency.max_ms;
  o["host_pace_working_set_bytes"] = r.host_pace_working_set;
  o["host_pace_p50_ms"] = r.host_pace.p50_ms;
  o["host_pace_p99_ms"] = r.host_pace.p99_ms;
  o["host_pace_p999_ms"] = r.host_pace.p999_ms;
  o["host_pace_max_ms"] = r.host_pace.max_ms;
  o["host_relay_threads"] = r.host_relay_threads;
  o["host_relay_p50_ms"] = r.host_relay.p50_ms;
  o["host_relay_p99_ms"] = r.host_relay.p99_ms;
  o["host_relay_p999_ms"] = r.host_relay.p999_ms;
  o["host_relay_max_ms"] = r.host_relay.max_ms;
  o["relist"] = s.relist;
  relist_fields(o, "relist_", r.relist);
  o["restore_updates"] = r.restore_updates;
  relist_fields(o, "restore_relist_", r.restore_relist);
  o["fanout_handlers"] = s.fanout_handlers;
  o["fanout_writes"] = r.fanout_writes;
  o["fanout_deltas"] = r.fanout_deltas;
  o["fanout_seconds"] = r.fanout_seconds;
  o["fanout_cpu_client_seconds"] = r.fanout_cpu.client_seconds;
  o["fanout_cpu_us_per_update"] = r.fanout_cpu_us_per_update();
  o["fanout_cpu_ratio"] = r.fanout_cpu_ratio();
  o["rss_before_informer_bytes"] = r.rss_before_informer;
  o["rss_after_sync_bytes"] = r.rss_after_sync;
  o["rss_per_object_bytes"] = r.rss_per_object();
  o["rss_at_end_bytes"] = r.rss_at_end;
  o["peak_rss_bytes"] = r.peak_rss;
  o["informer_objects"] = r.informer_objects;
  o["informer_resource_version"] = r.informer_resource_version;
  o["storage_resource_version"] = r.storage_resource_version;
  o["consistent"] = r.consistent;
  return boost::json::serialize(o);
}

} // namespace kinformer::bench
