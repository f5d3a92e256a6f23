// informer_bench: one informer with one handler against the in-process simulator.
//
//   informer_bench [--pods N] [--namespaces M] [--events E] [--pod-bytes B]
//                  [--metadata-only] [--drop-managed-fields] [--drain-bursts] [--max-lag L]
//                  [--limit-sample-lines S] [--seed X] [--timeout SECONDS]
//
// Loads N realistic pods into the simulator, times the informer's sync (spawn to the handler's
// synced), then writes E pod updates and times their delivery to the handler. Alongside, it
// parses the same JSON bytes with Boost.JSON alone: the limit any parsing client is held to.
// Prints a table and one JSON line (last line of the output) with every figure.

#include "actors/actor_system_setup.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/kube_config.hpp"
#include "tests/bench/bench_report.hpp"
#include "tests/bench/delivery_counter.hpp"
#include "tests/bench/parse_ceiling.hpp"
#include "tests/bench/process_memory.hpp"
#include "tests/bench/update_pump.hpp"
#include "tests/bench/watch_tap.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <future>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

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
    "  --drain-bursts           write bursts of max-lag updates while the server holds the\n"
    "                           watch, then time only their delivery (informer alone)\n"
    "  --max-lag L              writes the writer may be ahead of the handler (default 10000)\n"
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
    else if (flag == "--drain-bursts")
      settings.drain_bursts = true;
    else
      problem = "unknown option " + std::string(flag);
    if (problem)
      return problem;
  }
  if (settings.pods == 0 || settings.namespaces == 0 || settings.events == 0)
    return std::string("--pods, --namespaces and --events must be at least 1");
  if (settings.max_lag < 2 || settings.limit_sample_lines == 0 || settings.timeout_seconds == 0)
    return std::string("--max-lag must be at least 2, --limit-sample-lines and --timeout at "
                       "least 1");
  return std::nullopt;
}

std::shared_ptr<const object_transform> drop_managed_fields() {
  return std::make_shared<const object_transform>([](boost::json::value& value) {
    if (auto* root = value.if_object())
      if (auto* meta = root->if_contains("metadata"); meta && meta->is_object())
        meta->get_object().erase("managedFields");
  });
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

} // namespace

int main(int argc, char** argv) {
  bench_results results;
  bench_settings& settings = results.settings;
  if (auto problem = parse_arguments(argc, argv, settings)) {
    if (problem->empty()) {
      std::cout << usage;
      return 0;
    }
    std::cerr << "informer_bench: " << *problem << "\n" << usage;
    return 2;
  }
  const std::chrono::seconds timeout(settings.timeout_seconds);

  // The writer never runs more than max_lag events ahead of the handler (see update_pump.hpp),
  // so the informer's watch never lags further: a history window and a per-watch queue a little
  // larger than that always suffice (and keep the history's memory, ~20 KB an event, bounded).
  sim::simulator_options server_options;
  server_options.history_limit = settings.max_lag + 1024;
  server_options.watch_queue_limit = settings.max_lag + 1024;
  sim::simulator server(server_options);
  if (auto started = server.start(); !started)
    fail("simulator: " + started.err().describe());
  sim::storage& store = server.store();

  // ---- Load the simulator. ----
  sim::generator_options generator_options;
  generator_options.seed = settings.seed;
  generator_options.pod_bytes = settings.pod_bytes;
  progress("loading " + std::to_string(settings.pods) + " pods into the simulator");
  {
    auto load_started = clock_type::now();
    sim::object_generator generator(generator_options);
    auto loaded = sim::load_pods(store, generator, settings.pods, settings.namespaces);
    if (!loaded)
      fail("loading pods: " + loaded.err().describe());
    results.load_seconds = seconds_since(load_started);
  }

  // The list items as the server sends them, for the byte count and the limit. They share the
  // storage's strings, so holding them costs nothing until the event phase replaces them.
  json_documents list_items;
  {
    sim::list_request everything;
    everything.gvr = sim::pods_resource;
    everything.metadata_only = settings.metadata_only;
    auto listed = store.list(everything);
    if (!listed)
      fail("listing the simulator: " + listed.failure().describe());
    for (auto& item : listed->items) {
      results.list_bytes += item.json->size();
      list_items.push_back(item.json);
    }
    results.list_items = list_items.size();
  }

  // ---- Client, actor system, informer, handler. ----
  auto connection = from_server_url(server.url());
  if (!connection)
    fail(connection.err().describe());
  auto created = api_client::create(*connection);
  if (!created)
    fail("api_client: " + created.err().describe());
  std::shared_ptr<api_client> client = std::move(created).value();

  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  auto system = std::make_unique<caf::actor_system>(cfg);

  informer_config config;
  config.resource = sim::pods_resource;
  config.kind = "Pod";
  config.scope = resource_scope::namespaced;
  config.metadata_only = settings.metadata_only;
  config.watch.page_size = 500;
  if (settings.drop_managed_fields)
    config.transform = drop_managed_fields();

  delivery_counter event_deltas; // deltas of the event phase (not the initial list)
  std::promise<void> synced;
  handler_callbacks callbacks;
  callbacks.on_delta = [&event_deltas](const delta& d) {
    if (!d.initial_list)
      event_deltas.add();
  };
  callbacks.on_synced = [&synced] { synced.set_value(); };
  subscription_options subscription;
  subscription.name = "bench";
  // Larger than anything that can queue up (the initial list, or max_lag updates), so no delta
  // is ever coalesced and each write is counted as delivered exactly once.
  subscription.queue_bound = 2 * std::max<std::size_t>(settings.pods, settings.max_lag);

  release_free_heap();
  results.rss_before_informer = current_rss_bytes();

  // ---- Sync. ----
  progress("syncing the informer");
  auto sync_started = clock_type::now();
  auto inf = spawn_informer(*system, client, config);
  auto handler = spawn_handler(*system, inf, std::move(callbacks), subscription);
  if (synced.get_future().wait_for(timeout) != std::future_status::ready) {
    auto stats = query_stats(*system, inf);
    fail("no sync within " + std::to_string(timeout.count()) + " s; " + describe(stats));
  }
  results.sync_seconds = seconds_since(sync_started);
  release_free_heap();
  results.rss_after_sync = current_rss_bytes();

  progress("parsing the list items with Boost.JSON alone");
  results.list_limit = measure_parse_ceiling(list_items);
  list_items.clear();

  // ---- Watch events. ----
  results.event_sample_every =
      (settings.events + settings.limit_sample_lines - 1) / settings.limit_sample_lines;
  watch_tap tap;
  if (auto tapped =
          tap.start(store, sim::pods_resource, settings.metadata_only, results.event_sample_every);
      !tapped) {
    fail("watching the simulator: " + tapped.err().describe());
  }
  pump_options pump;
  pump.writes = settings.events;
  pump.max_lag = settings.max_lag;
  pump.stall_timeout = timeout;
  pump.generator = generator_options;
  pump.generator.seed = settings.seed + 1; // a stream of its own, not the loader's again
  if (settings.drain_bursts) {
    pump.hold_watches = [&server] { server.stall_watches(); };
    pump.release_watches = [&server] { server.resume_watches(); };
  }
  update_pump writer(store, event_deltas, pump);

  progress("writing " + std::to_string(settings.events) + " updates");
  auto events_started = clock_type::now();
  auto written = writer.run();
  if (!written) {
    auto stats = query_stats(*system, inf);
    fail("writing updates: " + written.err().describe() + "; " + describe(stats));
  }
  if (!event_deltas.wait_for_count(written->writes, timeout)) {
    auto stats = query_stats(*system, inf);
    fail("delivery stalled at " + std::to_string(event_deltas.count()) + " of " +
         std::to_string(written->writes) + " deltas; " + describe(stats));
  }
  results.event_seconds = seconds_since(events_started);
  results.delivery_seconds = settings.drain_bursts ? written->drain_seconds : results.event_seconds;
  tap.stop();
  results.updates_written = written->writes;
  results.deltas_delivered = event_deltas.count();
  results.writer_seconds = written->seconds;
  results.writer_throttled_seconds = written->throttled_seconds;
  results.event_bytes = tap.bytes();
  progress("parsing the sampled watch lines with Boost.JSON alone");
  results.event_limit = measure_parse_ceiling(tap.samples());

  // ---- Check the informer against the simulator. ----
  auto stats = query_stats(*system, inf);
  results.storage_resource_version = std::to_string(store.current_resource_version());
  if (stats) {
    results.informer_objects = stats->objects;
    results.informer_resource_version = stats->resource_version;
  }
  results.consistent = stats && stats->objects == results.list_items &&
                       stats->resource_version == results.storage_resource_version &&
                       tap.events() == written->writes;

  release_free_heap();
  results.rss_at_end = current_rss_bytes();
  results.peak_rss = peak_rss_bytes();
  print_table(std::cout, results);
  std::cout << "\n" << json_line(results) << std::endl;
  exit_now(results.consistent ? 0 : 1);
}
