// sim_bench: how fast the API-server simulator loads, lists and streams, measured from outside
// with a raw loopback HTTP client (no JSON parsing on the client side).
//
//   1. bulk load: N realistic pods written into the storage; seconds, and resident memory per
//      stored pod against its JSON size (history window included);
//   2. LIST: every pod in one request, the whole body read: seconds and MB/s;
//   3. WATCH: a writer thread updates pods as fast as the storage accepts. Live: one watcher
//      receives while the writer writes (the slower side sets the rate). Burst: the writes are
//      made while the server holds the watches, then released, and only the delivery to 1, then
//      W watchers is timed: events/s per watcher. With W watchers the rate per watcher staying
//      close to the single watcher's shows each event is serialised once.
//
// Prints a table, then one JSON line. The issue's targets: the 100k-pod list in about a second,
// well over 100k watch events per second.

#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "tests/bench/process_memory.hpp"
#include "tests/bench/raw_http.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace json = boost::json;
using namespace kinformer;
using namespace kinformer::sim;
using namespace kinformer::bench;
using clock_type = std::chrono::steady_clock;

namespace {

struct settings {
  std::size_t pods = 100'000;
  std::size_t namespaces = 10;
  std::size_t pod_bytes = 3500;
  std::uint64_t events = 200'000;
  std::size_t watchers = 8;
  std::size_t history = 50'000;
  std::size_t list_runs = 3;
};

constexpr std::string_view usage = R"(Usage: sim_bench [options]
  --pods N        pods to preload (100000)
  --namespaces M  spread over M namespaces (10)
  --pod-bytes B   target JSON size of a pod (3500)
  --events E      updates written in each watch phase (200000)
  --watchers W    watchers of the second watch phase (8)
  --history H     the simulator's history window, in events (50000)
  --list-runs R   LIST requests timed (3)
)";

bool parse_settings(int argc, char** argv, settings& s) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help")
      return false;
    if (i + 1 >= argc)
      return false;
    char* end = nullptr;
    unsigned long long value = std::strtoull(argv[++i], &end, 10);
    if (!end || *end != '\0')
      return false;
    if (arg == "--pods")
      s.pods = value;
    else if (arg == "--namespaces")
      s.namespaces = value;
    else if (arg == "--pod-bytes")
      s.pod_bytes = value;
    else if (arg == "--events")
      s.events = value;
    else if (arg == "--watchers")
      s.watchers = value;
    else if (arg == "--history")
      s.history = value;
    else if (arg == "--list-runs")
      s.list_runs = value;
    else
      return false;
  }
  return s.pods > 0 && s.namespaces > 0 && s.watchers > 0 && s.history > 0 && s.list_runs > 0;
}

double seconds_since(clock_type::time_point start, clock_type::time_point end = clock_type::now()) {
  return std::chrono::duration<double>(end - start).count();
}

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "sim_bench: " << what << "\n";
  std::exit(1);
}

struct load_figures {
  double seconds = 0;
  double json_bytes_per_pod = 0;
  double rss_bytes_per_pod = 0;
};

struct list_figures {
  double best_seconds = 0;
  std::uint64_t bytes = 0;
};

struct watch_figures {
  std::size_t watchers = 0;
  bool burst = false;
  std::uint64_t events = 0;
  double writer_seconds = 0;   // until the storage accepted the last update
  double delivery_seconds = 0; // until the slowest watcher received the last event
  std::uint64_t bytes_per_watcher = 0;
  double events_per_second() const { return double(events) / delivery_seconds; }
};

std::vector<std::pair<std::string, std::string>> pod_names(storage& store) {
  list_request everything;
  everything.gvr = pods_resource;
  auto listed = store.list(everything);
  if (!listed)
    fail("listing the stored pods: " + listed.failure().message);
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(listed->items.size());
  for (const auto& item : listed->items)
    out.emplace_back(item.object->meta().namespace_, item.object->meta().name);
  return out;
}

load_figures bulk_load(storage& store, const settings& s) {
  generator_options options;
  options.pod_bytes = s.pod_bytes;
  object_generator generator(options);
  release_free_heap();
  const std::size_t rss_before = current_rss_bytes();
  auto start = clock_type::now();
  auto loaded = load_pods(store, generator, s.pods, s.namespaces);
  load_figures out;
  out.seconds = seconds_since(start);
  if (!loaded)
    fail("bulk load: " + loaded.err().describe());
  release_free_heap();
  out.rss_bytes_per_pod = double(current_rss_bytes() - rss_before) / double(s.pods);

  list_request everything;
  everything.gvr = pods_resource;
  auto listed = store.list(everything);
  if (!listed)
    fail("listing the stored pods: " + listed.failure().message);
  std::uint64_t json_bytes = 0;
  for (const auto& item : listed->items)
    json_bytes += item.json->size();
  out.json_bytes_per_pod = double(json_bytes) / double(listed->items.size());
  return out;
}

list_figures timed_lists(std::uint16_t port, const settings& s) {
  list_figures out;
  for (std::size_t run = 0; run < s.list_runs; ++run) {
    auto connection = raw_http_connection::connect(port);
    if (!connection)
      fail("LIST: " + connection.err().describe());
    auto start = clock_type::now();
    if (auto sent = connection->send_get("/api/v1/pods"); !sent)
      fail("LIST: " + sent.err().describe());
    auto head = connection->read_head();
    if (!head || head->code != 200 || head->chunked)
      fail("LIST: no 200 response with a Content-Length");
    std::string first;
    auto body = connection->read_body(head->content_length, first);
    double seconds = seconds_since(start);
    if (!body)
      fail("LIST: " + body.err().describe());
    if (!first.starts_with("{\"kind\":\"PodList\""))
      fail("LIST: unexpected body: " + first);
    if (run == 0 || seconds < out.best_seconds)
      out.best_seconds = seconds;
    out.bytes = *body;
  }
  return out;
}

// One watch phase: `watchers` watches from the current resourceVersion, `events` updates.
// Live: the watchers receive while the writer writes, so the slower side sets the rate. Burst:
// the writes are made while the server holds the watches (stall_watches), then released; only
// the delivery is timed, which measures the serving side alone.
enum class phase { live, burst };

watch_figures timed_watch(simulator& sim, const settings& s, std::size_t watchers, phase mode,
                          const std::vector<std::pair<std::string, std::string>>& pods,
                          std::uint64_t& sequence) {
  storage& store = sim.store();
  const std::string target =
      "/api/v1/pods?watch=1&resourceVersion=" + std::to_string(store.current_resource_version());
  std::vector<raw_http_connection> connections;
  for (std::size_t i = 0; i < watchers; ++i) {
    auto c = raw_http_connection::connect(sim.port());
    if (!c)
      fail("WATCH: " + c.err().describe());
    if (auto sent = c->send_get(target); !sent)
      fail("WATCH: " + sent.err().describe());
    // The head is written once the watch is registered: from here on it sees every write.
    auto head = c->read_head();
    if (!head || head->code != 200 || !head->chunked)
      fail("WATCH: no chunked 200 response");
    connections.push_back(std::move(*c));
  }

  if (mode == phase::burst)
    sim.stall_watches();
  watch_figures out;
  out.watchers = watchers;
  out.burst = mode == phase::burst;
  out.events = s.events;
  std::vector<clock_type::time_point> finished(watchers);
  std::vector<std::uint64_t> bytes(watchers);
  std::atomic<bool> short_stream{false};
  auto start = clock_type::now();
  std::vector<std::thread> readers;
  for (std::size_t i = 0; i < watchers; ++i) {
    readers.emplace_back([&, i] {
      auto counts = connections[i].count_lines(s.events);
      finished[i] = clock_type::now();
      if (!counts || counts->lines < s.events)
        short_stream = true;
      else
        bytes[i] = counts->bytes;
    });
  }

  // The writer: each update changes one annotation of a pod, on a copy of its JSON in a scratch
  // arena (cheap to build; the storage freezes its own copy).
  for (std::uint64_t i = 0; i < s.events; ++i) {
    const auto& [ns, name] = pods[i % pods.size()];
    auto current = store.get(pods_resource, ns, name);
    if (!current)
      fail("WATCH: reading a pod back: " + current.failure().message);
    json::value body(current->object->tree(),
                     json::make_shared_resource<json::monotonic_resource>(16384));
    auto& meta = body.get_object()["metadata"].get_object();
    auto& annotations = meta["annotations"];
    if (!annotations.is_object())
      annotations = json::object();
    annotations.get_object()["bench/sequence"] = std::to_string(++sequence);
    auto updated = store.update_value(pods_resource, ns, name, std::move(body));
    if (!updated)
      fail("WATCH: update: " + updated.failure().message);
  }
  out.writer_seconds = seconds_since(start);
  if (mode == phase::burst) {
    start = clock_type::now();
    sim.resume_watches();
  }
  for (auto& t : readers)
    t.join();
  if (short_stream)
    fail("WATCH: a watch ended before receiving every event (see --history and the simulator's "
         "watch queue limit)");
  auto last = *std::max_element(finished.begin(), finished.end());
  out.delivery_seconds = seconds_since(start, last);
  out.bytes_per_watcher = bytes[0];
  return out;
}

} // namespace

int main(int argc, char** argv) {
  settings s;
  if (!parse_settings(argc, argv, s)) {
    std::cerr << usage;
    return 2;
  }

  simulator_options options;
  options.history_limit = s.history;
  // Every event of a phase may queue for a slow watcher: the bench must not cut it off.
  options.watch_queue_limit = s.events + 1000;
  options.bookmark_interval = std::chrono::hours(1);
  simulator sim(options);

  auto load = bulk_load(sim.store(), s);
  if (auto started = sim.start(); !started)
    fail("starting the simulator: " + started.err().describe());

  auto list = timed_lists(sim.port(), s);
  auto pods = pod_names(sim.store());
  std::uint64_t sequence = 0;
  auto live = timed_watch(sim, s, 1, phase::live, pods, sequence);
  auto single = timed_watch(sim, s, 1, phase::burst, pods, sequence);
  auto fan_out = timed_watch(sim, s, s.watchers, phase::burst, pods, sequence);
  sim.stop();

  const double mb = 1e6;
  std::printf("sim_bench: %zu pods (%.0f B JSON each) in %zu namespaces, %llu events per watch "
              "phase, history %zu\n",
              s.pods, load.json_bytes_per_pod, s.namespaces,
              static_cast<unsigned long long>(s.events), s.history);
  std::printf("%-34s %14s %14s\n", "measure", "value", "rate");
  std::printf("%-34s %12.3f s %10.0f pods/s\n", "bulk load", load.seconds,
              double(s.pods) / load.seconds);
  std::printf("%-34s %12.0f B %12.2f x JSON\n", "resident memory per stored pod",
              load.rss_bytes_per_pod, load.rss_bytes_per_pod / load.json_bytes_per_pod);
  std::printf("%-34s %12.3f s %9.1f MB/s\n", "LIST all pods (best run)", list.best_seconds,
              double(list.bytes) / mb / list.best_seconds);
  for (const auto* w : {&live, &single, &fan_out}) {
    const char* mode = w->burst ? "burst" : "live";
    char label[64];
    std::snprintf(label, sizeof label, "WATCH %s, %zu watcher(s): writer", mode, w->watchers);
    std::printf("%-34s %12.3f s %10.0f writes/s\n", label, w->writer_seconds,
                double(s.events) / w->writer_seconds);
    std::snprintf(label, sizeof label, "WATCH %s, %zu watcher(s): delivery", mode, w->watchers);
    std::printf("%-34s %12.3f s %10.0f ev/s/watcher (%.1f MB/s each)\n", label, w->delivery_seconds,
                w->events_per_second(), double(w->bytes_per_watcher) / mb / w->delivery_seconds);
  }

  json::object line{
      {"pods", s.pods},
      {"pod_json_bytes", load.json_bytes_per_pod},
      {"load_seconds", load.seconds},
      {"rss_bytes_per_pod", load.rss_bytes_per_pod},
      {"list_seconds", list.best_seconds},
      {"list_bytes", list.bytes},
      {"list_mb_per_second", double(list.bytes) / mb / list.best_seconds},
      {"events", s.events},
      {"writes_per_second", double(s.events) / live.writer_seconds},
      {"live_events_per_second", live.events_per_second()},
      {"burst1_events_per_second", single.events_per_second()},
      {"watchers", s.watchers},
      {"burstN_events_per_second_per_watcher", fan_out.events_per_second()},
      {"burstN_deliveries_per_second", fan_out.events_per_second() * double(s.watchers)},
  };
  std::cout << json::serialize(line) << std::endl;
  return 0;
}
