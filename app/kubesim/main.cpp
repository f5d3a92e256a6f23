// kubesim: the Kubernetes API-server simulator as a program. Preloads realistic pods, churns them,
// and serves the API plus the /sim/ control interface until SIGINT or SIGTERM.

#include "app/common/allocator_tuning.hpp"
#include "app/common/client_flags.hpp"
#include "app/common/stop_signals.hpp"
#include "app/kubesim/churn.hpp"
#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"

#include <CLI/App.hpp>
#include <CLI/Config.hpp>
#include <CLI/Formatter.hpp>
#include <boost/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <sstream>
#include <string>
#include <string_view>

namespace json = boost::json;
using namespace kinformer;
using namespace kinformer::sim;

namespace {

constexpr const char* description =
    R"(A Kubernetes API-server simulator: discovery, get/list/watch/create/update/patch/delete of
pods, configmaps, secrets, services, namespaces, nodes, deployments and the example custom
resources widgets.example.com (Widget) and clusterwidgets.example.com (ClusterWidget), with
realistic pods and optional churn. Lists take label/field selectors, limit/continue and
resourceVersion(Match); watches take bookmarks, timeoutSeconds and sendInitialEvents; writes
honour dryRun=All; /openapi/v2 and /openapi/v3 serve permissive schemas so that kubectl apply
validates. Listens only on the given address. The first line of output is
"listening on <url>" (flushed); SIGINT or SIGTERM stops it cleanly.
It is a server: the client flags the other tools share (--kubeconfig, -n, -l ...) have no
meaning here.)";

constexpr const char* control_help = R"(
Control interface (HTTP, under /sim/; POST changes something, GET reads):
  POST /sim/churn?rate=R      start churn at R writes/s, or change its rate; rate=max writes
                              as fast as possible; rate=0 stops it. Optional &count=N stops
                              after N writes. Answers the churn's state.
  GET  /sim/churn             churn state: {"running", "rate", "population", "creates",
                              "deletes", "labelUpdates", "statusUpdates", "specUpdates",
                              "failures"}
  POST /sim/load?pods=N&namespaces=M
                              create N more pods over namespaces default, ns-1 .. ns-(M-1)
                              (creating missing Namespaces); answers when done, with
                              {"pods", "namespacesCreated"}. Runs on the I/O thread: other
                              requests wait while it loads.
  POST /sim/faults/drop-watches
                              close every open watch abruptly (no terminating chunk)
  POST /sim/faults/stall-watches, /sim/faults/resume-watches
                              stop writing to open watches (sockets stay open); resume
  POST /sim/faults/fail-watches?count=N
                              the next N watches get an ERROR event with 410 Expired
  POST /sim/faults/fail-lists?count=N&code=C[&retryAfter=S]
                              the next N lists fail with HTTP C (500, 429 with Retry-After, ...)
  POST /sim/faults/fail-writes?count=N&code=C[&retryAfter=S]
                              the next N creates, updates, patches or deletes fail with HTTP C
  POST /sim/faults/compact    drop the watch history: older resourceVersions answer 410
  POST /sim/faults/backup     take a snapshot of every object (one kept; answers with
                              {"resourceVersion", "objects"})
  POST /sim/faults/restore[?to=now|backup]
                              as after an etcd restore and an API server restart: the objects
                              stay (now) or go back to the backup's; resourceVersion jumps
                              ahead, history is reset, every open watch is closed, and every
                              resourceVersion a client holds is too old
  POST /sim/faults/skip-revisions?count=N
                              resourceVersion gap: the next write is N+1 past the last
                              (default 1000), history kept
  POST /sim/faults/latency?ms=N
                              delay every request by N ms (0 turns it off)
  POST /sim/faults/reset      lift every fault: armed failures, refused streaming lists,
                              stalled watches, latency
  GET  /sim/truth?resource=R[&group=G][&labelSelector=S]
                              every object's key and resourceVersion, sorted by key (those
                              the selector selects); no armed fault affects it
  POST /sim/crds              register a custom resource: a CustomResourceDefinition, or
                              {"group","version","resource","kind","scope":"Namespaced|Cluster"}
  POST /sim/tls/rotate        with --tls: as a restart with a new CA and server certificate;
                              every connection is closed, --ca-out is rewritten (atomically)
                              before the answer, {"rotated":true}
)";

struct command_line {
  simulator_options server;
  std::size_t pods = 0;
  std::size_t namespaces = 1;
  std::size_t pod_bytes = 3500;
  std::uint64_t seed = 1;
  double churn_rate = 0;
  std::string ca_out;
  std::string client_ca_file;
};

// A non-negative decimal integer (a control route's query value).
std::optional<std::uint64_t> parse_number(std::string_view text) {
  if (text.empty() || text.size() > 18)
    return std::nullopt;
  std::uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

// CLI11 reads "-3" into an unsigned option as a huge number: only digits are accepted.
const CLI::Validator whole_number(
    [](const std::string& text) {
      return parse_number(text) ? std::string()
                                : "needs a non-negative integer, not \"" + text + "\"";
    },
    "", "whole number");

// The command line; nullopt once --help or --version has been answered, or on an error
// (then `exit_code` is 2 and the reason was printed).
std::optional<command_line> parse_command_line(int argc, char** argv, int& exit_code) {
  command_line cl;
  std::uint64_t bookmark_ms = 60000;
  CLI::App app(description, "kubesim");
  app.footer(control_help);
  add_version_flag(app);
  app.add_option("--listen", cl.server.listen,
                 "address to listen on; port 0 picks a free one (127.0.0.1:0)");
  app.add_option("--pods", cl.pods, "preload N realistic pods before listening (0)")
      ->check(whole_number);
  app.add_option("--namespaces", cl.namespaces,
                 "spread preloaded pods over M namespaces: default, ns-1, ... (1)")
      ->check(whole_number);
  app.add_option("--pod-bytes", cl.pod_bytes,
                 "target size of a pod's JSON in bytes, ~2800 to 8000 (3500)")
      ->check(whole_number);
  app.add_option("--seed", cl.seed, "seed of the generator and churn; same seed, same objects")
      ->check(whole_number);
  app.add_option("--churn", cl.churn_rate,
                 "pod writes per second after start (creates, label, status and spec updates, "
                 "deletes; population kept stable); 0 = none (0)")
      ->check(whole_number);
  app.add_flag("--tls", cl.server.tls, "serve HTTPS with a self-signed CA generated at start");
  app.add_option("--ca-out", cl.ca_out, "with --tls, write the CA certificate (PEM) to FILE");
  app.add_option("--client-ca-file", cl.client_ca_file,
                 "with --tls, a client certificate signed by a CA in FILE authenticates a "
                 "request as --token does");
  app.add_option("--token", cl.server.token,
                 "require \"Authorization: Bearer T\" on every request");
  app.add_option("--bookmark-interval-ms", bookmark_ms,
                 "BOOKMARK period on watches that allow bookmarks (60000)")
      ->check(whole_number);
  app.add_option("--history", cl.server.history_limit,
                 "watch events kept for resumption and continue tokens (100000)")
      ->check(whole_number);
  auto refuse = [&](const std::string& why) {
    std::cerr << "kubesim: " << why << " (see --help)\n";
    exit_code = 2;
    return std::nullopt;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      exit_code = app.exit(e); // --help, --version
      return std::nullopt;
    }
    return refuse(e.what());
  }
  cl.server.bookmark_interval = std::chrono::milliseconds(bookmark_ms);
  if (cl.pods > 0 && cl.namespaces == 0)
    return refuse("--namespaces must be at least 1");
  if (cl.server.history_limit == 0)
    return refuse("--history must be at least 1");
  if (cl.server.bookmark_interval.count() == 0)
    return refuse("--bookmark-interval-ms must be at least 1");
  if (!cl.ca_out.empty() && !cl.server.tls)
    return refuse("--ca-out needs --tls");
  if (!cl.client_ca_file.empty()) {
    if (!cl.server.tls)
      return refuse("--client-ca-file needs --tls");
    std::ifstream in(cl.client_ca_file);
    std::stringstream pem;
    pem << in.rdbuf();
    if (!in || pem.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos)
      return refuse("--client-ca-file: no PEM certificate in " + cl.client_ca_file);
    cl.server.client_ca_pem = pem.str();
  }
  return cl;
}

// Replaces `path` whole: a reader sees the old file or the new one, never a part.
bool write_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out)
      return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

control_response json_response(int code, const json::value& body) {
  return control_response{code, "application/json", json::serialize(body) + "\n"};
}

control_response failure(int code, std::string_view reason, std::string message) {
  return json_response(code, json::object{{"kind", "Status"},
                                          {"apiVersion", "v1"},
                                          {"metadata", json::object{}},
                                          {"status", "Failure"},
                                          {"message", message},
                                          {"reason", reason},
                                          {"code", code}});
}

// The tools behind /sim/churn and /sim/load: one generator for loads, at most one churn.
class tools {
public:
  tools(storage& store, const command_line& cl)
      : store_(store), cl_(cl), generator_(generator_for(cl, cl.seed)),
        namespaces_(std::max<std::size_t>(cl.namespaces, 1)) {}
  ~tools() { stop_churn(); }

  result<load_summary> load(std::size_t pods, std::size_t namespaces) {
    std::lock_guard lock(mutex_);
    namespaces_ = std::max(namespaces_, namespaces);
    return load_pods(store_, generator_, pods, namespaces);
  }

  // rate > 0: writes per second; 0: as fast as possible. `count` 0 = unlimited.
  void start_churn(double rate, std::uint64_t count) {
    std::lock_guard lock(mutex_);
    if (churn_)
      churn_->stop();
    churn_options options;
    options.rate = rate;
    options.count = count;
    options.namespaces = namespaces_;
    // A fresh seed for every churn started, derived from --seed: reproducible runs.
    options.generator = generator_for(cl_, cl_.seed + 1000 + churns_started_++);
    churn_ = std::make_unique<churn>(store_, options);
    churn_->start();
  }

  void stop_churn() {
    std::lock_guard lock(mutex_);
    if (churn_)
      churn_->stop();
  }

  json::object churn_state() {
    std::lock_guard lock(mutex_);
    json::object out{{"running", churn_ && churn_->running()}};
    if (!churn_)
      return out;
    auto s = churn_->stats();
    double rate = churn_->options().rate;
    if (rate > 0)
      out["rate"] = static_cast<std::uint64_t>(rate);
    else
      out["rate"] = "max";
    out["population"] = churn_->population();
    out["creates"] = s.creates;
    out["deletes"] = s.deletes;
    out["labelUpdates"] = s.label_updates;
    out["statusUpdates"] = s.status_updates;
    out["specUpdates"] = s.spec_updates;
    out["failures"] = s.failures;
    return out;
  }

  control_response handle_churn(const control_request& req) {
    if (req.method == "GET")
      return json_response(200, churn_state());
    if (req.method != "POST")
      return failure(405, "MethodNotAllowed", "use GET or POST");
    auto rate = req.query.find("rate");
    if (rate == req.query.end())
      return failure(400, "BadRequest", "rate is required: writes per second, max, or 0");
    std::uint64_t count = 0;
    if (auto c = req.query.find("count"); c != req.query.end()) {
      auto n = parse_number(c->second);
      if (!n)
        return failure(400, "BadRequest", "count must be a non-negative integer");
      count = *n;
    }
    if (rate->second == "max") {
      start_churn(0, count);
    } else {
      auto n = parse_number(rate->second);
      if (!n)
        return failure(400, "BadRequest", "rate must be a non-negative integer or max");
      if (*n == 0)
        stop_churn();
      else
        start_churn(static_cast<double>(*n), count);
    }
    return json_response(200, churn_state());
  }

  control_response handle_load(const control_request& req) {
    if (req.method != "POST")
      return failure(405, "MethodNotAllowed", "use POST");
    auto number = [&](const char* name, std::uint64_t fallback) -> std::optional<std::uint64_t> {
      auto it = req.query.find(name);
      return it == req.query.end() ? std::optional(fallback) : parse_number(it->second);
    };
    auto pods = number("pods", 0);
    auto namespaces = number("namespaces", 1);
    if (!pods || !namespaces || *namespaces == 0)
      return failure(400, "BadRequest",
                     "pods must be a non-negative integer and namespaces a positive one");
    auto loaded = load(*pods, *namespaces);
    if (!loaded)
      return failure(500, "InternalError", loaded.err().message);
    return json_response(
        200, json::object{{"pods", loaded->pods}, {"namespacesCreated", loaded->namespaces}});
  }

private:
  static generator_options generator_for(const command_line& cl, std::uint64_t seed) {
    generator_options o;
    o.seed = seed;
    o.pod_bytes = cl.pod_bytes;
    o.clock_base = std::chrono::system_clock::now();
    return o;
  }

  storage& store_;
  const command_line& cl_;
  std::mutex mutex_;
  object_generator generator_;
  std::size_t namespaces_;
  std::unique_ptr<churn> churn_;
  std::uint64_t churns_started_ = 0;
};

} // namespace

int main(int argc, char** argv) {
  tune_allocator({.max_arenas = 1}); // one arena: the smallest heap (allocator_tuning.hpp)
  int exit_code = 0;
  auto parsed = parse_command_line(argc, argv, exit_code);
  if (!parsed)
    return exit_code;
  const command_line& cl = *parsed;

  stop_signals stop; // before the server's and churn's threads start

  simulator sim(cl.server);
  register_example_resources(sim.store());
  tools tooling(sim.store(), cl);
  // Load before listening: once the address is printed, the data is there.
  auto loaded = tooling.load(cl.pods, cl.namespaces);
  if (!loaded) {
    std::cerr << "kubesim: preloading pods failed: " << loaded.err().message << "\n";
    return 1;
  }
  sim.add_control_route("/sim/churn",
                        [&](const control_request& req) { return tooling.handle_churn(req); });
  sim.add_control_route("/sim/load",
                        [&](const control_request& req) { return tooling.handle_load(req); });

  sim.add_control_route("/sim/tls/rotate", [&](const control_request& req) {
    if (req.method != "POST")
      return failure(405, "MethodNotAllowed", "use POST");
    auto ca = sim.rotate_tls();
    if (!ca)
      return failure(400, "BadRequest", ca.err().message);
    if (!cl.ca_out.empty() && !write_atomically(cl.ca_out, *ca))
      return failure(500, "InternalError", "cannot write " + cl.ca_out);
    return json_response(200, json::object{{"rotated", true}});
  });

  if (auto started = sim.start(); !started) {
    std::cerr << "kubesim: " << started.err().describe() << "\n";
    return 1;
  }
  // The CA is in place before the address is printed: a client may use both at once.
  if (!cl.ca_out.empty() && !write_atomically(cl.ca_out, sim.ca_pem())) {
    std::cerr << "kubesim: cannot write " << cl.ca_out << "\n";
    sim.stop();
    return 1;
  }
  std::cout << "listening on " << sim.url() << std::endl;
  if (!cl.ca_out.empty())
    std::cout << "ca certificate in " << cl.ca_out << std::endl;
  std::cout << "loaded " << loaded->pods << " pods in " << cl.namespaces << " namespaces"
            << std::endl;
  if (cl.churn_rate > 0) {
    tooling.start_churn(cl.churn_rate, 0);
    std::cout << "churning " << cl.churn_rate << " writes/s" << std::endl;
  }

  std::cout << "stopping on " << stop_signals::name(stop.wait()) << std::endl;
  tooling.stop_churn();
  sim.stop();
  return 0;
}
