// informer_bench: one informer with one handler against the in-process simulator.
//
//   informer_bench [--pods N] [--namespaces M] [--events E] [--pod-bytes B]
//                  [--metadata-only] [--drop-managed-fields] [--drain-bursts] [--max-lag L]
//                  [--latency-events E] [--latency-rate R] [--writer-nice N]
//                  [--fanout-handlers H] [--no-relist]
//                  [--limit-sample-lines S] [--seed X] [--timeout SECONDS]
//
// Loads N realistic pods into the simulator, then runs its phases in order:
//   sync      the informer's sync (spawn to the handler's synced);
//   events    E pod updates, their delivery rate and the informer's CPU per event;
//   latency   updates paced at R/s, each one's time from write to handler (p50/p99/p999), the
//             writer on a thread of its own at nice N;
//   relist    a forced 410: time until the store and the handler have converged, extra peak RSS;
//             then the same after N random updates and a restore to a backup from before them
//             (the relist then brings an older version of most pods);
//   fan-out   H handlers, E updates again: the informer's CPU per event against one handler's.
// Alongside, it parses the same JSON bytes with Boost.JSON alone: the limit any parsing client
// is held to. Prints a table and one JSON line (last line of the output) with every figure.

#include "actors/actor_system_setup.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "app/common/allocator_tuning.hpp"
#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/kube_config.hpp"
#include "protocol/transforms.hpp"
#include "tests/bench/bench_report.hpp"
#include "tests/bench/delivery_counter.hpp"
#include "tests/bench/host_pace_probe.hpp"
#include "tests/bench/latency_recorder.hpp"
#include "tests/bench/parse_ceiling.hpp"
#include "tests/bench/process_memory.hpp"
#include "tests/bench/thread_cpu.hpp"
#include "tests/bench/thread_priority.hpp"
#include "tests/bench/update_pump.hpp"
#include "tests/bench/watch_tap.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <iostream>
#include <optional>
#include <pthread.h>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace kinformer;
using namespace kinformer::bench;
using clock_type = std::chrono::steady_clock;

namespace {

const char* usage =
    "usage: informer_bench [options]\n"
    "  --pods N                 pods loaded before the informer starts (default 100000)\n"
    "  --namespaces M           namespaces they are spread over (default 50)\n"
    "  --events E               pod updates pushed through the watch (default 1000000)\n"
    "  --pod-bytes B            target JSON size of a pod (default 3500)\n"
    "  --metadata-only          the informer stores PartialObjectMetadata\n"
    "  --drop-managed-fields    the informer drops metadata.managedFields before storing\n"
    "  --compress-objects       the informer keeps its objects' text compressed (default:\n"
    "                           with --metadata-only only)\n"
    "  --no-compress-objects    the informer keeps its objects' text as received\n"
    "  --drain-bursts           write bursts of max-lag updates while the server holds the\n"
    "                           watch, then time only their delivery (informer alone)\n"
    "  --max-lag L              writes the writer may be ahead of the handler (default 10000)\n"
    "  --latency-events E       updates of the latency phase; 0 skips it (default 50000)\n"
    "  --latency-rate R         their pace in writes per second (default 10000)\n"
    "  --writer-nice N          nice value of their writer thread, 0 to 19 (default 19: the\n"
    "                           writer stands for clients that run elsewhere)\n"
    "  --latency-trace FILE     write each timed write's start (steady_clock ns) and latency\n"
    "                           (ms) to FILE, one line each\n"
    "  --fanout-handlers H      handlers of the fan-out phase; 0 or 1 skips it (default 16)\n"
    "  --no-relist              skip the forced relist\n"
    "  --limit-sample-lines S   watch lines kept for the Boost.JSON limit (default 32768)\n"
    "  --seed X                 generator seed (default 1)\n"
    "  --timeout SECONDS        give up when sync, or delivery, stalls this long (default 300)\n";

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

template <class Number>
bool parse_number(std::string_view text, Number& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Fills `settings` from the command line; an error message on bad input, "" for --help.
std::optional<std::string> parse_arguments(int argc, char** argv, bench_settings& settings) {
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    auto number = [&](auto& out) -> std::optional<std::string> {
      if (i + 1 >= argc)
        return std::string(flag) + " needs a value";
      std::string_view text = argv[++i];
      if (!parse_number(text, out))
        return std::string(flag) + ": not a non-negative integer: " + std::string(text);
      return std::nullopt;
    };
    std::optional<std::string> problem;
    if (flag == "--help" || flag == "-h")
      return std::string();
    else if (flag == "--pods")
      problem = number(settings.pods);
    else if (flag == "--namespaces")
      problem = number(settings.namespaces);
    else if (flag == "--events")
      problem = number(settings.events);
    else if (flag == "--pod-bytes")
      problem = number(settings.pod_bytes);
    else if (flag == "--max-lag")
      problem = number(settings.max_lag);
    else if (flag == "--latency-events")
      problem = number(settings.latency_events);
    else if (flag == "--latency-rate")
      problem = number(settings.latency_rate);
    else if (flag == "--writer-nice")
      problem = number(settings.writer_nice);
    else if (flag == "--latency-trace") {
      if (i + 1 >= argc)
        return std::string(flag) + " needs a value";
      settings.latency_trace = argv[++i];
    } else if (flag == "--fanout-handlers")
      problem = number(settings.fanout_handlers);
    else if (flag == "--no-relist")
      settings.relist = false;
    else if (flag == "--limit-sample-lines")
      problem = number(settings.limit_sample_lines);
    else if (flag == "--seed")
      problem = number(settings.seed);
    else if (flag == "--timeout")
      problem = number(settings.timeout_seconds);
    else if (flag == "--metadata-only")
      settings.metadata_only = true;
    else if (flag == "--drop-managed-fields")
      settings.drop_managed_fields = true;
    else if (flag == "--compress-objects")
      settings.compress_objects = true;
    else if (flag == "--no-compress-objects")
      settings.compress_objects = false;
    else if (flag == "--drain-bursts")
      settings.drain_bursts = true;
    else
      problem = "unknown option " + std::string(flag);
    if (problem)
      return problem;
  }
  if (settings.pods == 0 || settings.namespaces == 0 || settings.events == 0)
    return std::string("--pods, --namespaces and --events must be at least 1");
  if (settings.latency_events > 0 && settings.latency_rate == 0)
    return std::string("--latency-rate must be at least 1");
  if (settings.writer_nice < 0 || settings.writer_nice > 19)
    return std::string("--writer-nice must be 0 to 19");
  if (settings.max_lag < 2 || settings.limit_sample_lines == 0 || settings.timeout_seconds == 0)
    return std::string("--max-lag must be at least 2, --limit-sample-lines and --timeout at "
                       "least 1");
  return std::nullopt;
}

std::optional<informer_stats> query_stats(caf::actor_system& system, const informer_actor& inf) {
  std::optional<informer_stats> out;
  caf::scoped_actor self{system};
  self->request(inf, std::chrono::seconds(10), atoms::stats_atom::value)
      .receive([&](const informer_stats& stats) { out = stats; }, [](const caf::error&) {});
  return out;
}

// What the informer had done when something stalled: enough to tell a stuck list from a watch
// that keeps restarting.
std::string describe(const std::optional<informer_stats>& stats) {
  if (!stats)
    return "the informer did not answer a stats request";
  return "informer: synced=" + std::string(stats->synced ? "true" : "false") +
         " objects=" + std::to_string(stats->objects) +
         " resourceVersion=" + stats->resource_version + " lists=" + std::to_string(stats->lists) +
         " relists=" + std::to_string(stats->relists) +
         " watch_restarts=" + std::to_string(stats->watch_restarts) +
         " retries=" + std::to_string(stats->retries) +
         " events(added/modified/deleted)=" + std::to_string(stats->events_added) + "/" +
         std::to_string(stats->events_modified) + "/" + std::to_string(stats->events_deleted);
}

// Ends the process without tearing down: at 100k pods, freeing the simulator's and the informer's
// millions of small JSON nodes one by one takes minutes, and the OS reclaims the memory at once.
// Every figure is printed (and flushed) before this.
[[noreturn]] void exit_now(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(code);
}

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "informer_bench: " << message << std::endl;
  exit_now(1);
}

// Phase markers on stderr, so a long run shows where it is.
void progress(const std::string& message) {
  std::cerr << "informer_bench: " << message << std::endl;
}

// One run: the simulator, the informer with its handlers, and the phases in order. Members live
// as long as the run; a phase that fails ends the process with what the informer had done.
class bench_run {
public:
  explicit bench_run(bench_results& results)
      : results_(results), settings_(results.settings),
        timeout_(std::chrono::seconds(settings_.timeout_seconds)), server_(server_options()) {}

  void start_simulator() {
    if (auto started = server_.start(); !started)
      fail("simulator: " + started.err().describe());
    generator_options_.seed = settings_.seed;
    generator_options_.pod_bytes = settings_.pod_bytes;
    progress("loading " + std::to_string(settings_.pods) + " pods into the simulator");
    auto load_started = clock_type::now();
    sim::object_generator generator(generator_options_);
    auto loaded = sim::load_pods(store(), generator, settings_.pods, settings_.namespaces);
    if (!loaded)
      fail("loading pods: " + loaded.err().describe());
    results_.load_seconds = seconds_since(load_started);
  }

  void sync();
  void events();
  void latency();
  void relist();
  void fanout();
  void check();

private:
  // The writer never runs more than max_lag events ahead of the handler (see update_pump.hpp),
  // so the informer's watch never lags further: a history window and a per-watch queue a little
  // larger than that always suffice (and keep the history's memory, ~20 KB an event, bounded).
  sim::simulator_options server_options() const {
    sim::simulator_options options;
    options.history_limit = settings_.max_lag + 1024;
    options.watch_queue_limit = settings_.max_lag + 1024;
    return options;
  }

  sim::storage& store() { return server_.store(); }

  // Fails with the informer's counters: enough to tell a stuck list from a restarting watch.
  [[noreturn]] void fail_with_stats(const std::string& message) {
    fail(message + "; " + describe(query_stats(*system_, informer_)));
  }

  // The handler callbacks: the first handler counts into the current phase's counter (the
  // writer's bound) and feeds the latency recorder; fan-out handlers count into their own.
  handler_callbacks callbacks_for(delivery_counter& synced, bool first) {
    handler_callbacks callbacks;
    callbacks.on_delta = [this, first](const delta& d) {
      if (d.initial_list)
        return;
      if (!first) {
        fanout_deltas_.add();
        return;
      }
      phase_deltas_.load(std::memory_order_acquire)->add();
      if (auto* recorder = latency_.load(std::memory_order_acquire))
        recorder->arrived(d.object->meta().resource_version);
    };
    callbacks.on_synced = [&synced] { synced.add(); };
    return callbacks;
  }

  subscription_options subscription(const std::string& name) const {
    subscription_options options;
    options.name = name;
    // Larger than anything that can queue up (the initial list, or max_lag updates), so no
    // delta is ever coalesced and each write is counted as delivered exactly once.
    options.queue_bound = 2 * std::max<std::size_t>(settings_.pods, settings_.max_lag);
    return options;
  }

  // Sets a relist off and measures it until store and handler have converged. The RSS it is
  // measured from is taken just before `set_off`, or just after it when that frees memory.
  enum class baseline { before_set_off, after_set_off };
  relist_figures measure_relist(const std::string& what, const std::function<void()>& set_off,
                                baseline when = baseline::before_set_off);

  // A fresh count for the next phase's deltas (the previous phase has delivered all of its own).
  delivery_counter& next_phase_counter() {
    counters_.push_back(std::make_unique<delivery_counter>());
    phase_deltas_.store(counters_.back().get(), std::memory_order_release);
    return *counters_.back();
  }

  pump_options pump_for(std::uint64_t writes) {
    pump_options pump;
    pump.writes = writes;
    pump.max_lag = settings_.max_lag;
    pump.stall_timeout = timeout_;
    pump.generator = generator_options_;
    pump.generator.seed = settings_.seed + (++pump_runs_); // each phase a stream of its own
    return pump;
  }

  // Writes `pump.writes` updates and waits until the first handler has them all.
  pump_stats run_pump(pump_options pump, delivery_counter& delivered) {
    update_pump writer(store(), delivered, std::move(pump));
    auto written = writer.run();
    if (!written)
      fail_with_stats("writing updates: " + written.err().describe());
    if (!delivered.wait_for_count(written->writes, timeout_))
      fail_with_stats("delivery stalled at " + std::to_string(delivered.count()) + " of " +
                      std::to_string(written->writes) + " deltas");
    return *written;
  }

  bench_results& results_;
  const bench_settings& settings_;
  const std::chrono::seconds timeout_;
  sim::simulator server_;
  sim::generator_options generator_options_;
  std::uint64_t pump_runs_ = 0;

  // The system keeps a reference to its config (CAF 0.17) and reads it on every spawn: the config
  // lives as long as the run, declared first so that it outlives the system.
  caf::actor_system_config actor_config_;
  std::unique_ptr<caf::actor_system> system_;
  informer_actor informer_;
  std::vector<handler_actor> handlers_;
  delivery_counter synced_handlers_;
  std::vector<std::unique_ptr<delivery_counter>> counters_; // one per phase, kept to the end
  std::atomic<delivery_counter*> phase_deltas_{nullptr};
  delivery_counter fanout_deltas_;
  std::atomic<latency_recorder*> latency_{nullptr};
  std::size_t peak_rss_before_probe_ = 0; // 0: the host's pace was not measured
};

void bench_run::sync() {
  // The list items as the server sends them, for the byte count and the limit. They share the
  // storage's strings, so holding them costs nothing until the event phase replaces them.
  json_documents list_items;
  sim::list_request everything;
  everything.gvr = sim::pods_resource;
  everything.metadata_only = settings_.metadata_only;
  auto listed = store().list(everything);
  if (!listed)
    fail("listing the simulator: " + listed.failure().describe());
  for (auto& item : listed->items) {
    results_.list_bytes += item.json->size();
    list_items.push_back(item.json);
  }
  results_.list_items = list_items.size();

  auto connection = from_server_url(server_.url());
  if (!connection)
    fail(connection.err().describe());
  auto created = api_client::create(*connection);
  if (!created)
    fail("api_client: " + created.err().describe());
  std::shared_ptr<api_client> client = std::move(created).value();

  configure_actor_system(actor_config_);
  system_ = std::make_unique<caf::actor_system>(actor_config_);

  informer_config config;
  config.resource = sim::pods_resource;
  config.kind = "Pod";
  config.scope = resource_scope::namespaced;
  config.metadata_only = settings_.metadata_only;
  config.compress_objects = settings_.compress_objects;
  config.watch.page_size = 500;
  if (settings_.drop_managed_fields)
    config.transform = drop_managed_fields();
  next_phase_counter();

  release_free_heap();
  results_.rss_before_informer = current_rss_bytes();

  progress("syncing the informer");
  auto sync_started = clock_type::now();
  auto sync_cpu_before = sample_thread_cpu();
  informer_ = spawn_informer(*system_, client, config);
  handlers_.push_back(spawn_handler(*system_, informer_, callbacks_for(synced_handlers_, true),
                                    subscription("bench")));
  if (!synced_handlers_.wait_for_count(1, timeout_))
    fail_with_stats("no sync within " + std::to_string(timeout_.count()) + " s");
  results_.sync_seconds = seconds_since(sync_started);
  results_.sync_cpu = sample_thread_cpu() - sync_cpu_before;
  release_free_heap();
  results_.rss_after_sync = current_rss_bytes();

  progress("parsing the list items with Boost.JSON alone");
  results_.list_limit = measure_parse_ceiling(list_items);
}

void bench_run::events() {
  results_.event_sample_every =
      (settings_.events + settings_.limit_sample_lines - 1) / settings_.limit_sample_lines;
  watch_tap tap;
  if (auto tapped = tap.start(store(), sim::pods_resource, settings_.metadata_only,
                              results_.event_sample_every);
      !tapped)
    fail("watching the simulator: " + tapped.err().describe());
  auto pump = pump_for(settings_.events);
  if (settings_.drain_bursts) {
    pump.hold_watches = [this] { server_.stall_watches(); };
    pump.release_watches = [this] { server_.resume_watches(); };
  }

  progress("writing " + std::to_string(settings_.events) + " updates");
  auto& delivered = next_phase_counter();
  auto cpu_before = sample_thread_cpu();
  auto events_started = clock_type::now();
  auto written = run_pump(std::move(pump), delivered);
  results_.event_seconds = seconds_since(events_started);
  results_.event_cpu = sample_thread_cpu() - cpu_before;
  results_.delivery_seconds =
      settings_.drain_bursts ? written.drain_seconds : results_.event_seconds;
  tap.stop();
  results_.updates_written = written.writes;
  results_.deltas_delivered = delivered.count();
  results_.writer_seconds = written.seconds;
  results_.writer_throttled_seconds = written.throttled_seconds;
  results_.event_bytes = tap.bytes();
  results_.tap_events = tap.events();
  progress("parsing the sampled watch lines with Boost.JSON alone");
  results_.event_limit = measure_parse_ceiling(tap.samples());
}

void bench_run::latency() {
  if (settings_.latency_events == 0)
    return;
  progress("writing " + std::to_string(settings_.latency_events) + " updates at " +
           std::to_string(settings_.latency_rate) + "/s");
  // One writer, one resource: the phase's writes take the next consecutive resourceVersions.
  latency_recorder recorder(store().current_resource_version() + 1, settings_.latency_events);
  latency_.store(&recorder, std::memory_order_release);
  auto pump = pump_for(settings_.latency_events);
  pump.writes_per_second = double(settings_.latency_rate);
  pump.on_write = [&recorder](std::uint64_t version, latency_recorder::clock::time_point at) {
    recorder.written(version, at);
  };
  auto& delivered = next_phase_counter();
  // On a thread of its own (thread_priority.hpp says why): its own heap, and a nice value that
  // ends with it (raised, it cannot be lowered again without privilege; the main thread writes
  // the later phases).
  pump_stats written;
  std::thread writer([&] {
    pthread_setname_np(pthread_self(), "bench-writer"); // tells it apart in perf
    if (auto lowered = set_this_thread_nice(settings_.writer_nice); !lowered)
      fail("the latency phase's writer: " + lowered.err().describe());
    written = run_pump(std::move(pump), delivered);
  });
  writer.join();
  latency_.store(nullptr, std::memory_order_release);
  results_.latency = recorder.percentiles();
  if (!settings_.latency_trace.empty() && !recorder.write_trace(settings_.latency_trace))
    fail("cannot write the latency trace to " + settings_.latency_trace);
  results_.latency_writes_per_second = written.writes_per_second();

  progress("the same pace with no informer behind it (the host's own lateness)");
  host_pace_options probe;
  probe.ticks = settings_.latency_events;
  probe.ticks_per_second = double(settings_.latency_rate);
  probe.working_set_bytes = current_rss_bytes();
  // The probe's working set doubles the process for a while: the whole run's peak leaves it out.
  peak_rss_before_probe_ = peak_rss_bytes();
  auto host = measure_host_pace(probe);
  if (!host)
    fail("the host's pace: " + host.err().describe());
  reset_peak_rss();
  results_.host_pace = host->tick;
  results_.host_pace_working_set = probe.working_set_bytes;
  results_.host_relay = host->relayed;
  results_.host_relay_threads = probe.relay_threads;
}

void bench_run::relist() {
  if (!settings_.relist)
    return;
  results_.relist = measure_relist(
      "forcing a relist: the watch is dropped and its resume answered 410 Expired", [this] {
        store().fail_next_watches(1);
        server_.drop_watches();
      });

  // Every pod a random update reaches (about 63% of them) then reverts to its older version.
  auto backup = store().backup();
  progress("updating " + std::to_string(settings_.pods) + " pods at random, to restore from");
  results_.restore_updates = run_pump(pump_for(settings_.pods), next_phase_counter()).writes;
  // The restore frees the simulator's newer versions and its history, hundreds of MB the
  // relist would reuse: the baseline is taken after it, and after a trim.
  results_.restore_relist = measure_relist(
      "restoring the simulator to before those updates: its watches end, its history restarts",
      [&] {
        store().restore(backup);
        server_.drop_watches(); // as the API server restarting after an etcd restore does
      },
      baseline::after_set_off);
}

relist_figures bench_run::measure_relist(const std::string& what,
                                         const std::function<void()>& set_off, baseline when) {
  relist_figures figures;
  auto before = query_stats(*system_, informer_);
  if (!before)
    fail("the informer did not answer a stats request before a relist");
  auto& delivered = next_phase_counter();
  auto take_baseline = [&] {
    release_free_heap();
    figures.rss_before = current_rss_bytes();
    reset_peak_rss();
  };
  if (when == baseline::before_set_off)
    take_baseline();
  progress(what);
  auto cpu_before = sample_thread_cpu();
  auto started = clock_type::now();
  set_off();
  if (when == baseline::after_set_off)
    take_baseline();
  // Converged: the relist has replaced the store and the handler has taken every delta.
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto now = query_stats(*system_, informer_);
    if (now && now->lists > before->lists && now->synced &&
        std::all_of(now->queues.begin(), now->queues.end(),
                    [](const subscription_stats& q) { return q.depth == 0; })) {
      figures.seconds = seconds_since(started);
      figures.cpu = sample_thread_cpu() - cpu_before;
      figures.lists = now->lists - before->lists;
      figures.items_reused = now->list_items_reused - before->list_items_reused;
      break;
    }
    if (clock_type::now() - started > timeout_)
      fail_with_stats("a relist did not converge within " + std::to_string(timeout_.count()) +
                      " s");
  }
  figures.peak_rss = peak_rss_since_reset_bytes();
  figures.deltas = delivered.count();
  return figures;
}

void bench_run::fanout() {
  if (settings_.fanout_handlers < 2)
    return;
  progress("subscribing " + std::to_string(settings_.fanout_handlers - 1) + " more handlers");
  for (std::size_t i = 1; i < settings_.fanout_handlers; ++i)
    handlers_.push_back(spawn_handler(*system_, informer_, callbacks_for(synced_handlers_, false),
                                      subscription("bench-" + std::to_string(i))));
  if (!synced_handlers_.wait_for_count(settings_.fanout_handlers, timeout_))
    fail_with_stats("the fan-out handlers did not sync");

  progress("writing " + std::to_string(settings_.events) + " updates to " +
           std::to_string(settings_.fanout_handlers) + " handlers");
  auto pump = pump_for(settings_.events);
  if (settings_.drain_bursts) {
    pump.hold_watches = [this] { server_.stall_watches(); };
    pump.release_watches = [this] { server_.resume_watches(); };
  }
  auto cpu_before = sample_thread_cpu();
  auto started = clock_type::now();
  auto written = run_pump(std::move(pump), next_phase_counter());
  const auto others = written.writes * (settings_.fanout_handlers - 1);
  if (!fanout_deltas_.wait_for_count(others, timeout_))
    fail_with_stats("fan-out delivery stalled at " + std::to_string(fanout_deltas_.count()) +
                    " of " + std::to_string(others) + " deltas");
  results_.fanout_seconds = seconds_since(started);
  results_.fanout_cpu = sample_thread_cpu() - cpu_before;
  results_.fanout_writes = written.writes;
  results_.fanout_deltas = written.writes + fanout_deltas_.count();
}

void bench_run::check() {
  auto stats = query_stats(*system_, informer_);
  results_.storage_resource_version = std::to_string(store().current_resource_version());
  if (stats) {
    results_.informer_objects = stats->objects;
    results_.informer_resource_version = stats->resource_version;
  }
  results_.consistent = stats && stats->objects == results_.list_items &&
                        stats->resource_version == results_.storage_resource_version &&
                        results_.tap_events == results_.updates_written;
  release_free_heap();
  results_.rss_at_end = current_rss_bytes();
  results_.peak_rss = peak_rss_before_probe_ == 0
                          ? peak_rss_bytes()
                          : std::max(peak_rss_before_probe_, peak_rss_since_reset_bytes());
}

} // namespace

int main(int argc, char** argv) {
  // As the library's users are told to (allocator_tuning.hpp). Not one arena, as kinformer's
  // programs keep: the simulator shares this process, and its I/O thread would then take turns
  // with the informer's decode thread at the one arena's lock, which no API server does.
  tune_allocator();
  bench_results results;
  if (auto problem = parse_arguments(argc, argv, results.settings)) {
    if (problem->empty()) {
      std::cout << usage;
      return 0;
    }
    std::cerr << "informer_bench: " << *problem << "\n" << usage;
    return 2;
  }
  bench_run run(results);
  run.start_simulator();
  run.sync();
  run.events();
  run.latency();
  run.relist();
  run.fanout();
  run.check();
  print_table(std::cout, results);
  std::cout << "\n" << json_line(results) << std::endl;
  exit_now(results.consistent ? 0 : 1);
}
