#pragma once
// Every figure one informer_bench run produces, and the two ways it prints them: a table for
// people and one JSON line for scripts.

#include "tests/bench/latency_recorder.hpp"
#include "tests/bench/parse_ceiling.hpp"
#include "tests/bench/thread_cpu.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace kinformer::bench {

struct bench_settings {
  std::size_t pods = 100'000;
  std::size_t namespaces = 50;
  std::uint64_t events = 1'000'000;
  std::size_t pod_bytes = 3500;
  bool metadata_only = false;
  bool drop_managed_fields = false;
  std::optional<bool> compress_objects; // unset: the informer's default (metadata-only do)
  bool drain_bursts = false; // time only the delivery of bursts written while watches are held
  std::uint64_t max_lag = 10'000;
  std::uint64_t latency_events = 50'000; // 0: no latency phase
  std::uint64_t latency_rate = 10'000;   // writes per second in the latency phase
  int writer_nice = 19;                  // the latency phase's writer thread (thread_priority.hpp)
  std::string latency_trace;        // when set, each timed write's start and latency, one line each
  std::size_t fanout_handlers = 16; // 0 or 1: no fan-out phase
  bool relist = true;
  std::size_t limit_sample_lines = 32'768;
  std::uint64_t seed = 1;
  unsigned timeout_seconds = 300;
};

// One relist: from what set it off until store and handler have converged.
struct relist_figures {
  double seconds = 0;
  std::uint64_t lists = 0;        // lists completed meanwhile (1 expected)
  std::uint64_t deltas = 0;       // deltas the first handler received from it
  cpu_split cpu;                  // the informer's threads
  std::uint64_t items_reused = 0; // listed items handed on as the objects stored
  std::size_t rss_before = 0;     // bytes
  std::size_t peak_rss = 0;       // bytes: the process's peak during the relist

  std::size_t extra_peak_rss() const { return peak_rss > rss_before ? peak_rss - rss_before : 0; }
};

struct bench_results {
  bench_settings settings;
  double load_seconds = 0; // filling the simulator's storage (not part of any rate)

  // Sync: from spawning the informer to the handler's synced.
  std::size_t list_items = 0;
  std::uint64_t list_bytes = 0; // the items' JSON as the server sends them
  double sync_seconds = 0;
  cpu_split sync_cpu; // the informer's threads, spawn to synced (the simulator's left out)

  // Events: from the first write to the last delta received.
  std::uint64_t updates_written = 0;
  std::uint64_t deltas_delivered = 0;
  std::uint64_t event_bytes = 0; // the watch lines the informer's watch is sent
  double event_seconds = 0;      // wall time of the whole event phase
  double delivery_seconds = 0;   // what the event rates divide by: event_seconds, or in drain
                                 // mode the time from each burst's release to its last delta
  double writer_seconds = 0;
  double writer_throttled_seconds = 0;
  std::uint64_t tap_events = 0; // watch lines the storage sent (the informer's must match)
  cpu_split event_cpu;          // CPU of the event phase, by thread role

  // Latency: updates paced at latency_rate, write -> first handler.
  latency_percentiles latency;
  double latency_writes_per_second = 0; // the pace the writer kept
  // The host alone at the same pace, with a working set the size of the process
  // (host_pace_probe.hpp): the lateness no informer on this machine can go below.
  latency_percentiles host_pace;
  std::size_t host_pace_working_set = 0; // bytes
  // The same ticks, each handed through host_relay_threads threads that do nothing else: the
  // wake-ups a delta crosses, without the informer.
  latency_percentiles host_relay;
  unsigned host_relay_threads = 0;

  // Relists, until store and handler have converged: a forced 410 with everything stored and
  // unchanged; then a restore of the simulator to a backup from before `restore_updates` random
  // updates, so that the relist brings an older version of every pod they changed.
  relist_figures relist;
  std::uint64_t restore_updates = 0;
  relist_figures restore_relist;

  // Fan-out: fanout_handlers handlers, the same updates again.
  std::uint64_t fanout_writes = 0;
  std::uint64_t fanout_deltas = 0; // over all handlers
  double fanout_seconds = 0;
  cpu_split fanout_cpu;

  // Memory, in bytes.
  std::size_t rss_before_informer = 0;
  std::size_t rss_after_sync = 0;
  std::size_t rss_at_end = 0;
  std::size_t peak_rss = 0;

  // Boost.JSON alone on the same bytes.
  parse_ceiling list_limit;
  parse_ceiling event_limit;
  std::uint64_t event_sample_every = 1;

  // The informer's store against the simulator's truth at the end.
  std::size_t informer_objects = 0;
  std::string informer_resource_version;
  std::string storage_resource_version;
  bool consistent = false;

  double sync_megabytes_per_second() const { return rate(list_bytes, sync_seconds) / 1e6; }
  double sync_objects_per_second() const { return rate(list_items, sync_seconds); }
  double events_per_second() const { return rate(deltas_delivered, delivery_seconds); }
  double event_megabytes_per_second() const { return rate(event_bytes, delivery_seconds) / 1e6; }
  double writer_per_second() const { return rate(updates_written, writer_seconds); }
  double writer_unthrottled_per_second() const {
    return rate(updates_written, writer_seconds - writer_throttled_seconds);
  }
  double rss_per_object() const {
    return list_items == 0 || rss_after_sync < rss_before_informer
               ? 0
               : double(rss_after_sync - rss_before_informer) / list_items;
  }
  // The informer's CPU (every thread but the simulator's and the writer's) per update written.
  double event_cpu_us_per_update() const {
    return rate(event_cpu.client_seconds * 1e6, double(updates_written));
  }
  double fanout_cpu_us_per_update() const {
    return rate(fanout_cpu.client_seconds * 1e6, double(fanout_writes));
  }
  double fanout_cpu_ratio() const {
    return share(fanout_cpu_us_per_update(), event_cpu_us_per_update());
  }
  double sync_share_of_limit() const {
    return share(sync_megabytes_per_second(), list_limit.megabytes_per_second());
  }
  // List items per second of the informer's own CPU: what ingest costs, against what parsing
  // alone costs (Boost.JSON's limit runs on one thread, so its rate is per CPU second too).
  double sync_cpu_megabytes_per_second() const {
    return rate(list_bytes, sync_cpu.client_seconds) / 1e6;
  }
  double sync_cpu_share_of_limit() const {
    return share(sync_cpu_megabytes_per_second(), list_limit.megabytes_per_second());
  }
  double event_share_of_limit() const {
    return share(event_megabytes_per_second(), event_limit.megabytes_per_second());
  }

private:
  static double rate(double amount, double seconds) { return seconds > 0 ? amount / seconds : 0; }
  static double share(double value, double limit) { return limit > 0 ? value / limit : 0; }
};

void print_table(std::ostream& out, const bench_results& r);
std::string json_line(const bench_results& r);

} // namespace kinformer::bench
