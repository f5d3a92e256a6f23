// The fault matrix: every fault the simulator injects, alone and combined, while churn creates,
// updates, relabels and deletes pods. Three informers watch at once, each a different way:
// - every pod, full objects, paged lists;
// - track=canary, full objects, paged lists (churn flips `track`, so pods enter and leave it);
// - track!=canary, metadata only, streaming lists (sendInitialEvents).
// Each scenario loads 300 pods, syncs the informers, then runs three rounds of "inject the
// faults, 100 churn writes, wait" at a fixed seed. After each round, every informer's store
// equals the simulator's truth for its selection, and so does what its handler folded from the
// deltas it received: the latest version of every surviving object, and a delete for every
// object removed or gone from the selection.
// With KINFORMER_FAULT_MATRIX=FILE each scenario appends its row of the table in
// docs/reliability.md.

#include "actors/actor_system_setup.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "app/kubesim/churn.hpp"
#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "tests/support/delta_recorder.hpp"
#include "tests/support/request_log.hpp"
#include "tests/support/sim_actor_fixture.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::testing::delta_recorder;
using kinformer::testing::request_log;
using request_verb = sim::request_record::verb;

namespace {

constexpr std::size_t pod_count = 300;
constexpr std::size_t namespace_count = 3;
constexpr int rounds = 3;
constexpr std::uint64_t writes_per_round = 100;
constexpr std::size_t informer_count = 3;
constexpr std::size_t listing_informers = 2; // the third syncs through streaming lists

// key -> resourceVersion
using versions = std::map<std::string, std::string>;

// "missing a@1, extra b@2, c@3 instead of c@4": how `got` differs from `want`.
std::string differences(const versions& got, const versions& want) {
  std::string out;
  auto add = [&out](const std::string& what) { out += (out.empty() ? "" : ", ") + what; };
  for (const auto& [key, rv] : want) {
    auto it = got.find(key);
    if (it == got.end())
      add("missing " + key + "@" + rv);
    else if (it->second != rv)
      add(key + "@" + it->second + " instead of @" + rv);
  }
  for (const auto& [key, rv] : got)
    if (!want.count(key))
      add("extra " + key + "@" + rv);
  return out.empty() ? "no difference" : out;
}

label_selector selector(std::string_view text) {
  auto parsed = label_selector::parse(text);
  REQUIRE(parsed.ok());
  return std::move(parsed).value();
}

// One informer under test and what its handler received.
struct watched_selection {
  std::string name;
  label_selector labels;
  informer_actor informer;
  std::unique_ptr<delta_recorder> handler = std::make_unique<delta_recorder>();
};

class matrix_run;

// A fault as the matrix injects it. Some act over time: a stall is held until every informer
// has given up on its silent watch.
struct fault {
  std::string name;
  std::function<void(matrix_run&)> inject;
  // A restore to an older backup hands objects back at older resourceVersions: a handler then
  // legitimately sees an object's version go back.
  bool moves_versions_back = false;
};

// What one scenario measured, for the table.
struct matrix_row {
  std::string faults;
  std::uint64_t writes = 0;
  bool converged = false;
  kinformer::testing::request_counts seen;
  std::chrono::milliseconds to_converge{0}; // the slowest round's
};

class matrix_run : public kinformer::testing::sim_actor_fixture {
public:
  request_log requests{sim::pods_resource};
  sim::churn churn;
  std::optional<sim::storage_backup> backup; // taken when the informers have synced
  std::vector<watched_selection> selections;

  // The handlers record into `selections` and the simulator reports into `requests`: actors and
  // reports stop first, also when the constructor fails half way (members are destroyed then,
  // the body of a destructor would not run).
  struct stops_first {
    matrix_run& run;
    ~stops_first() {
      for (auto& a : run.spawned)
        caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
      run.spawned.clear();
      run.system.reset();
      run.server.store().observe_requests({});
    }
  } stopper{*this};

  explicit matrix_run(std::uint64_t seed) : churn(server.store(), churn_options(seed)) {
    server.store().observe_requests([this](const sim::request_record& r) { requests.record(r); });
    sim::generator_options g;
    g.seed = seed;
    g.pod_bytes = 2800;
    sim::object_generator generator(g);
    REQUIRE(sim::load_pods(server.store(), generator, pod_count, namespace_count).ok());
    start("all pods, paged", {}, false, false);
    start("track=canary, paged", selector("track=canary"), false, false);
    start("track!=canary, metadata-only, streaming", selector("track!=canary"), true, true);
    for (auto& s : selections)
      REQUIRE(s.handler->wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
    backup = server.store().backup();
  }

  // Three rounds of: every fault injected, churn, and the informers converging; then the faults
  // that persist are lifted. Returns the slowest round's time to converge, or nothing when a
  // round did not converge within a minute.
  std::optional<std::chrono::milliseconds> run(const std::vector<const fault*>& faults) {
    std::chrono::milliseconds slowest{0};
    for (int round = 0; round < rounds; ++round) {
      for (const auto* f : faults)
        f->inject(*this);
      churn.run_steps(writes_per_round);
      const auto written = std::chrono::steady_clock::now();
      INFO("round " << round + 1);
      if (!converges(60s))
        return std::nullopt;
      slowest = std::max(slowest, std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::steady_clock::now() - written));
    }
    server.resume_watches();
    server.set_latency(0ms);
    server.store().refuse_streaming_lists(false);
    // Failures armed but not yet drawn would otherwise fire during the teardown's last renewals.
    server.store().clear_faults();
    return slowest;
  }

  // The simulator's pods in `labels`, as key -> resourceVersion (no armed fault affects it).
  versions truth(const label_selector& labels) {
    versions out;
    for (const auto& v : server.store().truth(sim::pods_resource, labels))
      out[v.key] = std::to_string(v.resource_version);
    return out;
  }

  versions stored(const informer_actor& inf) {
    caf::scoped_actor self{*system};
    versions out;
    self->request(inf, caf::infinite, atoms::snapshot_atom::value)
        .receive(
            [&](const store_snapshot& snapshot) {
              for (const auto& obj : snapshot.list())
                out[std::string(obj->key())] = std::string(obj->meta().resource_version);
            },
            [&](caf::error& err) { FAIL(system->render(err)); });
    return out;
  }

  // Waits until every handler's view equals its selection's truth, then checks the stores.
  bool converges(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (auto& s : selections) {
      const versions want = truth(s.labels);
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      bool same = s.handler->wait_for([&](const delta_recorder& r) { return r.state() == want; },
                                      std::max(left, 0ms));
      INFO(s.name << ": the handler's view");
      INFO(differences(s.handler->state_copy(), want));
      CHECK(same);
      auto in_store = stored(s.informer);
      INFO(s.name << ": the store");
      INFO(differences(in_store, want));
      const bool store_matches = in_store == want;
      CHECK(store_matches);
      if (!same || !store_matches)
        return false;
    }
    return true;
  }

  // Waits until the simulator has opened `count` more watches (answered 200) than now.
  void wait_for_new_watches(std::size_t count) {
    const std::size_t from = requests.size();
    bool opened = requests.wait_for(
        [&](const std::vector<sim::request_record>& rs) {
          std::size_t n = 0;
          for (std::size_t i = from; i < rs.size(); ++i)
            n += rs[i].kind == request_verb::watch && rs[i].code == 200;
          return n >= count;
        },
        30s);
    REQUIRE(opened);
  }

  // Makes every informer relist: its next watch is answered 410, and the open ones end.
  void force_relists() {
    server.store().fail_next_watches(informer_count);
    server.drop_watches();
  }

private:
  static sim::churn_options churn_options(std::uint64_t seed) {
    sim::churn_options o;
    o.rate = 0;
    o.label_weight = 40; // label flips move pods in and out of the selections
    o.namespaces = namespace_count;
    o.generator.seed = seed + 1000;
    o.generator.pod_bytes = 2800;
    return o;
  }

  void start(std::string name, label_selector labels, bool metadata_only, bool streaming) {
    informer_config c;
    c.resource = sim::pods_resource;
    c.kind = "Pod";
    c.labels = labels;
    c.metadata_only = metadata_only;
    c.watch.streaming_list = streaming;
    c.watch.page_size = 50; // six pages for the whole set
    // Watches end by themselves every few seconds, so that faults on new requests (latency,
    // armed failures) also meet informers the scenario did not cut off.
    c.watch.min_watch_timeout = 2s;
    c.watch.max_watch_timeout = 4s;
    c.watch.stall_timeout = 500ms; // bookmarks come every 200 ms
    c.retry.initial = 20ms;
    c.retry.cap = 200ms;
    auto inf = spawn_informer(*system, client, std::move(c));
    spawned.push_back(caf::actor_cast<caf::actor>(inf));
    watched_selection s{std::move(name), std::move(labels), inf};
    handler_callbacks cb;
    cb.on_delta = [rec = s.handler.get()](const delta& d) { rec->record(d); };
    cb.on_synced = [rec = s.handler.get()] { rec->mark_synced(); };
    spawned.push_back(caf::actor_cast<caf::actor>(spawn_handler(*system, inf, std::move(cb))));
    selections.push_back(std::move(s));
  }
};

// Every fault the simulator can inject. Faults on lists act on relists, which a watch 410
// forces (as in a cluster, where that is what starts one).
const std::vector<fault>& all_faults() {
  static const std::vector<fault> faults{
      {"watches closed abruptly", [](matrix_run& r) { r.server.drop_watches(); }},
      {"410 on the watch", [](matrix_run& r) { r.force_relists(); }},
      {"410 on the list",
       [](matrix_run& r) {
         r.server.store().fail_next_lists(listing_informers, 410);
         r.force_relists();
       }},
      {"continue tokens expired",
       [](matrix_run& r) {
         r.server.store().expire_next_continues(listing_informers);
         r.force_relists();
       }},
      {"500 on the watch",
       [](matrix_run& r) {
         r.server.store().fail_next_watches(informer_count, 500, std::nullopt);
         r.server.drop_watches();
       }},
      {"500 on the list",
       [](matrix_run& r) {
         r.server.store().fail_next_lists(listing_informers, 500);
         r.force_relists();
       }},
      {"429 with Retry-After: 1 on the watch",
       [](matrix_run& r) {
         r.server.store().fail_next_watches(informer_count, 429, 1);
         r.server.drop_watches();
       }},
      {"429 with Retry-After: 1 on the list",
       [](matrix_run& r) {
         r.server.store().fail_next_lists(listing_informers, 429, 1);
         r.force_relists();
       }},
      {"streaming lists refused (422)",
       [](matrix_run& r) {
         r.server.store().refuse_streaming_lists(true);
         r.force_relists();
       }},
      {"watches stalled",
       [](matrix_run& r) {
         r.server.stall_watches();
         r.churn.run_steps(20); // written while nobody hears
         r.wait_for_new_watches(informer_count);
         r.server.resume_watches();
       }},
      {"history compacted while the watches lag",
       [](matrix_run& r) {
         // Compaction only bites a client behind it: hold the watches, write, compact, cut.
         r.server.stall_watches();
         r.churn.run_steps(20);
         r.server.store().compact();
         r.server.drop_watches();
         r.server.resume_watches();
       }},
      {"etcd restored to the backup taken at sync",
       [](matrix_run& r) {
         r.server.store().restore(*r.backup);
         r.server.drop_watches(); // the API server restarts
       },
       true},
      {"resourceVersion gaps",
       [](matrix_run& r) {
         r.server.store().skip_revisions(5000);
         r.churn.run_steps(10);
         r.server.store().skip_revisions(5000);
         r.server.drop_watches();
       }},
      {"30 ms latency on every request, watches reopened through it",
       [](matrix_run& r) {
         r.server.set_latency(30ms);
         r.server.drop_watches();
       }},
  };
  return faults;
}

const fault& fault_named(std::string_view name) {
  for (const auto& f : all_faults())
    if (f.name == name)
      return f;
  FAIL("no fault named " << name);
  return all_faults().front(); // not reached: FAIL throws
}

// Three different faults drawn from `seed` (mt19937_64 is the same everywhere).
std::vector<const fault*> drawn_faults(std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<const fault*> out;
  while (out.size() < 3) {
    const fault* f = &all_faults()[random() % all_faults().size()];
    if (std::find(out.begin(), out.end(), f) == out.end())
      out.push_back(f);
  }
  return out;
}

void write_row(const matrix_row& row) {
  const char* file = std::getenv("KINFORMER_FAULT_MATRIX");
  if (!file)
    return;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", double(row.to_converge.count()) / 1000.0);
  std::ofstream out(file, std::ios::app);
  out << "| " << row.faults << " | " << row.writes << " | " << (row.converged ? "yes" : "**no**")
      << " | " << row.seen.lists << " | " << row.seen.continue_pages << " | " << row.seen.watches
      << " | " << seconds << " |\n";
}

// Runs one scenario and checks it converged. `label` names it in the table (by default, its
// faults joined by " + ").
void run_scenario(std::uint64_t seed, const std::vector<const fault*>& faults,
                  std::string label = {}) {
  std::string names;
  bool versions_may_go_back = false;
  for (const auto* f : faults) {
    names += (names.empty() ? "" : " + ") + f->name;
    versions_may_go_back |= f->moves_versions_back;
  }
  INFO(names);
  matrix_run run(seed);
  const std::size_t first_request = run.requests.size();
  auto slowest = run.run(faults);
  matrix_row row;
  row.faults = label.empty() ? names : std::move(label);
  row.converged = slowest.has_value();
  row.to_converge = slowest.value_or(0ms);
  row.writes = run.churn.stats().writes();
  auto records = run.requests.copy();
  row.seen = kinformer::testing::count_requests(
      {records.begin() + static_cast<std::ptrdiff_t>(first_request), records.end()});
  INFO(run.requests.text());
  CHECK(row.converged);
  CHECK(row.writes > 0);
  if (!versions_may_go_back)
    for (auto& s : run.selections) {
      INFO(s.name << " delivered an object's versions out of order");
      CHECK(s.handler->out_of_order().empty());
    }
  write_row(row);
}

void run_alone(std::string_view name) {
  run_scenario(1, {&fault_named(name)});
}

} // namespace

TEST_CASE("fault matrix: watches closed abruptly") {
  run_alone("watches closed abruptly");
}
TEST_CASE("fault matrix: 410 on the watch") {
  run_alone("410 on the watch");
}
TEST_CASE("fault matrix: 410 on the list") {
  run_alone("410 on the list");
}
TEST_CASE("fault matrix: continue tokens expired") {
  run_alone("continue tokens expired");
}
TEST_CASE("fault matrix: 500 on the watch") {
  run_alone("500 on the watch");
}
TEST_CASE("fault matrix: 500 on the list") {
  run_alone("500 on the list");
}
TEST_CASE("fault matrix: 429 with Retry-After on the watch") {
  run_alone("429 with Retry-After: 1 on the watch");
}
TEST_CASE("fault matrix: 429 with Retry-After on the list") {
  run_alone("429 with Retry-After: 1 on the list");
}
TEST_CASE("fault matrix: streaming lists refused") {
  run_alone("streaming lists refused (422)");
}
TEST_CASE("fault matrix: watches stalled") {
  run_alone("watches stalled");
}
TEST_CASE("fault matrix: history compacted") {
  run_alone("history compacted while the watches lag");
}
TEST_CASE("fault matrix: etcd restored to an older backup") {
  run_alone("etcd restored to the backup taken at sync");
}
TEST_CASE("fault matrix: resourceVersion gaps") {
  run_alone("resourceVersion gaps");
}
TEST_CASE("fault matrix: latency") {
  run_alone("30 ms latency on every request, watches reopened through it");
}

TEST_CASE("fault matrix: every fault at once") {
  std::vector<const fault*> every;
  for (const auto& f : all_faults())
    every.push_back(&f);
  run_scenario(2, every, "every fault above at once, in that order");
}

// Two test cases, so that ctest -j runs them side by side.
TEST_CASE("fault matrix: three faults drawn at seeds 1 to 4") {
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    DYNAMIC_SECTION("seed " << seed) {
      run_scenario(seed, drawn_faults(seed));
    }
}
TEST_CASE("fault matrix: three faults drawn at seeds 5 to 8") {
  for (std::uint64_t seed = 5; seed <= 8; ++seed)
    DYNAMIC_SECTION("seed " << seed) {
      run_scenario(seed, drawn_faults(seed));
    }
}
