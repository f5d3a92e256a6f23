// End to end: the kinformer-watch program against the kubesim program, both as child processes.
//
// kinformer-watch's JSON lines are folded into key -> resourceVersion and compared with the
// simulator's truth (GET /sim/truth) after churn and after each injected watch fault; namespace
// and label selector options must restrict what is printed; bad arguments must exit with 2.
//
// Synchronisation: a reader thread per child pipe, a condition variable for stdout lines, a
// waiter thread per child for its exit. The only loop with a pause is the documented way to
// learn that churn has finished: polling GET /sim/churn.

#include "app/kubesim/self_signed_cert.hpp"
#include "protocol/backoff.hpp"
#include "tests/protocol/support/connect_proxy.hpp"
#include "tests/protocol/support/temp_dir.hpp"
#include "tests/support/child_process.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace json = boost::json;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using net::ip::tcp;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

using kinformer::testing::child_process; // tests/support/child_process.hpp

// ---------------------------------------------------------------------------------------------
// The simulator as a child process, and its HTTP interface.

struct http_reply {
  int status = 0;
  std::string body;
};

class kubesim {
public:
  kubesim(std::size_t pods, std::size_t namespaces, const std::vector<std::string>& extra = {})
      : process_(arguments(pods, namespaces, extra)) {
    auto first = process_.next_line(20s);
    INFO("kubesim stderr: " << (first ? "" : process_.stderr_text()));
    REQUIRE(first);
    const std::string prefix = "listening on ";
    REQUIRE(first->rfind(prefix, 0) == 0);
    url_ = first->substr(prefix.size());
    auto colon = url_.rfind(':');
    REQUIRE(colon != std::string::npos);
    port_ = static_cast<std::uint16_t>(std::stoi(url_.substr(colon + 1)));
  }

  const std::string& url() const { return url_; }

  static std::vector<std::string> arguments(std::size_t pods, std::size_t namespaces,
                                            const std::vector<std::string>& extra) {
    std::vector<std::string> argv{KUBESIM_PATH,
                                  "--listen",
                                  "127.0.0.1:0",
                                  "--pods",
                                  std::to_string(pods),
                                  "--namespaces",
                                  std::to_string(namespaces)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  // A request to the simulator, over TLS when it serves HTTPS (its certificate is not checked:
  // the programs under test are the ones that must verify it).
  http_reply call(http::verb method, const std::string& target) {
    net::io_context ioc;
    tcp::socket socket(ioc);
    boost::system::error_code ec;
    socket.connect({net::ip::make_address("127.0.0.1"), port_}, ec);
    INFO(target);
    REQUIRE_FALSE(ec);
    // A hung simulator fails the test instead of hanging it.
    timeval tv{10, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (!url_.starts_with("https://"))
      return exchange(socket, method, target);
    ssl::context context(ssl::context::tls_client);
    context.set_verify_mode(ssl::verify_none);
    ssl::stream<tcp::socket&> tls(socket, context);
    tls.handshake(ssl::stream_base::client, ec);
    REQUIRE_FALSE(ec);
    return exchange(tls, method, target);
  }

  template <class Stream>
  static http_reply exchange(Stream& stream, http::verb method, const std::string& target) {
    boost::system::error_code ec;
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.prepare_payload();
    http::write(stream, req, ec);
    REQUIRE_FALSE(ec);
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    http::read(stream, buffer, parser, ec);
    INFO(ec.message());
    REQUIRE_FALSE(ec);
    return {static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
  }

  json::value call_json(http::verb method, const std::string& target) {
    auto reply = call(method, target);
    INFO(target << " -> " << reply.status << " " << reply.body.substr(0, 500));
    REQUIRE(reply.status == 200);
    boost::system::error_code ec;
    auto value = json::parse(reply.body, ec);
    REQUIRE_FALSE(ec);
    return value;
  }

  void post(const std::string& target) { call_json(http::verb::post, target); }

  // Watch streams the simulator has open now.
  std::size_t open_watches() {
    return static_cast<std::size_t>(
        call_json(http::verb::get, "/sim/watches").at("open").to_number<std::int64_t>());
  }

  // Starts churn of `count` writes at full speed.
  void start_churn(std::size_t count) {
    post("/sim/churn?rate=max&count=" + std::to_string(count));
  }

  // Returns once the churn has made all its writes.
  void wait_churn_done() {
    auto deadline = steady::now() + 30s;
    for (;;) {
      auto state = call_json(http::verb::get, "/sim/churn");
      if (!state.at("running").as_bool())
        return;
      REQUIRE(steady::now() < deadline);
      std::this_thread::sleep_for(10ms); // the poll interval; churn offers no notification
    }
  }

  // key -> resourceVersion of every pod in the simulator's storage.
  std::map<std::string, std::string> truth() {
    std::map<std::string, std::string> out;
    auto entries = call_json(http::verb::get, "/sim/truth?resource=pods");
    for (const auto& entry : entries.as_array())
      out.emplace(json::value_to<std::string>(entry.at("key")),
                  json::value_to<std::string>(entry.at("resourceVersion")));
    return out;
  }

  // key -> labels of every pod, from a plain list.
  std::map<std::string, json::object> pod_labels() {
    std::map<std::string, json::object> out;
    auto list = call_json(http::verb::get, "/api/v1/pods");
    for (const auto& item : list.at("items").as_array()) {
      const auto& meta = item.at("metadata").as_object();
      std::string key = json::value_to<std::string>(meta.at("namespace")) + "/" +
                        json::value_to<std::string>(meta.at("name"));
      const auto* labels = meta.if_contains("labels");
      out.emplace(std::move(key), labels ? labels->as_object() : json::object{});
    }
    return out;
  }

private:
  child_process process_;
  std::string url_;
  std::uint16_t port_ = 0;
};

// ---------------------------------------------------------------------------------------------
// kinformer-watch's output folded into the state it describes, checking each line on the way.

std::optional<std::uint64_t> revision(const std::string& text) {
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size())
    return std::nullopt;
  return n;
}

class watch_fold {
public:
  // Named in every problem found from now on, to tell which fault it followed.
  std::string phase = "initial list";

  std::map<std::string, std::string> objects; // key -> resourceVersion, as printed
  std::set<std::string> deleted_keys;         // every key a DELETED line named
  std::set<std::string> readded_keys;         // keys ADDED again after a DELETED
  std::size_t initial_adds = 0;
  std::size_t initial_adds_before_sync = 0;
  std::size_t synced = 0;
  std::size_t lines = 0;
  std::size_t final_state_unknown_deletes = 0;
  std::size_t unchanged_updates = 0; // UPDATED with the resourceVersion already held
  std::vector<std::string> problems;

  void apply(const std::string& line) {
    ++lines;
    boost::system::error_code ec;
    auto parsed = json::parse(line, ec);
    if (ec || !parsed.is_object())
      return problem("not a JSON object", line);
    const auto& o = parsed.as_object();
    auto text = [&](const char* field) -> std::string {
      const auto* v = o.if_contains(field);
      return v && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    auto flag = [&](const char* field) {
      const auto* v = o.if_contains(field);
      return v && v->is_bool() && v->get_bool();
    };
    std::string type = text("type");
    if (type == "SYNCED") {
      if (++synced > 1)
        problem("SYNCED printed again", line);
      initial_adds_before_sync = initial_adds;
      return;
    }
    std::string key = text("key");
    std::string rv = text("resourceVersion");
    auto number = revision(rv);
    if (key.empty() || !number || (type != "ADDED" && type != "UPDATED" && type != "DELETED"))
      return problem("malformed delta", line);

    bool initial = flag("initialList");
    if (initial) {
      ++initial_adds;
      if (type != "ADDED" || synced > 0)
        problem("initialList on a delta that is not an initial ADDED", line);
    } else if (synced == 0) {
      problem("a delta that is not initialList before SYNCED", line);
    }
    bool unknown = flag("finalStateUnknown");
    if (unknown && type != "DELETED")
      problem("finalStateUnknown on a delta that is not DELETED", line);

    auto [highest, first] = highest_rv_.try_emplace(key, *number);
    if (!first) {
      if (*number < highest->second)
        problem("resourceVersion went back from " + std::to_string(highest->second), line);
      highest->second = std::max(highest->second, *number);
    }
    if (type == "DELETED") {
      final_state_unknown_deletes += unknown;
      if (objects.erase(key) == 0)
        problem("DELETED for a key not present", line);
      deleted_keys.insert(key);
    } else {
      bool present = objects.contains(key);
      if (type == "ADDED" && present)
        problem("ADDED for a key already present", line);
      if (type == "ADDED" && deleted_keys.contains(key))
        readded_keys.insert(key);
      if (type == "UPDATED" && !present)
        problem("UPDATED for a key not present", line);
      if (type == "UPDATED" && present && objects[key] == rv)
        ++unchanged_updates;
      objects[key] = rv;
    }
  }

  // Every key any line named.
  std::set<std::string> keys_seen() const {
    std::set<std::string> out;
    for (const auto& [key, rv] : highest_rv_)
      out.insert(key);
    return out;
  }

  std::string describe_problems() const {
    std::ostringstream out;
    for (std::size_t i = 0; i < problems.size() && i < 20; ++i)
      out << problems[i] << "\n";
    if (problems.size() > 20)
      out << "... " << problems.size() - 20 << " more\n";
    return out.str();
  }

private:
  void problem(const std::string& what, const std::string& line) {
    problems.push_back("[" + phase + "] " + what + ": " + line);
  }

  std::map<std::string, std::uint64_t> highest_rv_;
};

// Where the fold and the truth differ, for a failure message.
std::string difference(const std::map<std::string, std::string>& folded,
                       const std::map<std::string, std::string>& truth) {
  std::ostringstream out;
  std::size_t shown = 0, total = 0;
  auto note = [&](const std::string& text) {
    if (shown++ < 15)
      out << "  " << text << "\n";
    ++total;
  };
  for (const auto& [key, rv] : truth) {
    auto it = folded.find(key);
    if (it == folded.end())
      note("missing " + key + " (truth rv " + rv + ")");
    else if (it->second != rv)
      note("stale " + key + ": printed rv " + it->second + ", truth rv " + rv);
  }
  for (const auto& [key, rv] : folded)
    if (!truth.contains(key))
      note("extra " + key + " (printed rv " + rv + ")");
  out << total << " differences (" << folded.size() << " printed, " << truth.size() << " in truth)";
  return out.str();
}

// kinformer-watch as a child process, with its output folded as it is read.
class watcher {
public:
  explicit watcher(const std::vector<std::string>& extra) : process_(arguments(extra)) {}

  watch_fold fold;

  // Reads until SYNCED has been printed; false after `timeout` or at end of output.
  bool wait_synced(steady::duration timeout = 20s) {
    auto deadline = steady::now() + timeout;
    while (fold.synced == 0)
      if (!read_one(deadline))
        return false;
    return true;
  }

  // Reads until the folded state equals `truth`; false after `timeout` or at end of output.
  bool wait_converged(const std::map<std::string, std::string>& truth,
                      steady::duration timeout = 30s) {
    auto deadline = steady::now() + timeout;
    while (fold.objects != truth)
      if (!read_one(deadline))
        return false;
    return true;
  }

  child_process& process() { return process_; }

private:
  static std::vector<std::string> arguments(const std::vector<std::string>& extra) {
    std::vector<std::string> argv{KINFORMER_WATCH_PATH};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  bool read_one(steady::time_point deadline) {
    auto now = steady::now();
    auto line = process_.next_line(deadline > now ? deadline - now : steady::duration::zero());
    if (!line)
      return false;
    fold.apply(*line);
    return true;
  }

  child_process process_;
};

std::map<std::string, std::string> in_namespace(const std::map<std::string, std::string>& truth,
                                                const std::string& ns) {
  std::map<std::string, std::string> out;
  for (const auto& [key, rv] : truth)
    if (key.rfind(ns + "/", 0) == 0)
      out.emplace(key, rv);
  return out;
}

std::string label(const json::object& labels, const char* name) {
  const auto* v = labels.if_contains(name);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The truth restricted to pods whose label `name` has `value`, judged from the pods' labels.
std::map<std::string, std::string> with_label(kubesim& sim, const char* name,
                                              const std::string& value) {
  auto labels = sim.pod_labels();
  std::map<std::string, std::string> out;
  for (const auto& [key, rv] : sim.truth())
    if (auto it = labels.find(key); it != labels.end() && label(it->second, name) == value)
      out.emplace(key, rv);
  return out;
}

// Waits up to `timeout` for the fold to match `truth`; fails with the differences otherwise.
void require_converges(watcher& watch, const std::map<std::string, std::string>& truth,
                       steady::duration timeout = 30s) {
  bool converged = watch.wait_converged(truth, timeout);
  INFO("phase: " << watch.fold.phase << "\n"
                 << difference(watch.fold.objects, truth) << "\nproblems:\n"
                 << watch.fold.describe_problems()
                 << "kinformer-watch stderr: " << (converged ? "" : watch.process().stderr_text()));
  REQUIRE(converged);
}

// A kubeconfig whose one context reaches `sim` (its CA in ca.pem next to the file) as a user
// given by `user` (the YAML under "- name: u").
std::string sim_kubeconfig(const kubesim& sim, const std::string& user) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: sim\n"
         "clusters:\n- name: sim\n  cluster:\n    server: " +
         sim.url() +
         "\n    certificate-authority: ca.pem\n"
         "contexts:\n- name: sim\n  context: {cluster: sim, user: u}\n"
         "users:\n- name: u\n" +
         user;
}

// A user whose credential comes from the exec plugin `command` (client.authentication v1).
std::string exec_user(const std::string& command) {
  return "  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
         "      command: " +
         command + "\n      interactiveMode: Never\n";
}

} // namespace

TEST_CASE("kinformer-watch syncs 300 pods and follows churn through watch faults", "[watch_cli]") {
  kubesim sim(300, 3);
  watcher watch({"--server", sim.url(), "-A", "pods"});

  REQUIRE(watch.wait_synced());
  INFO(watch.fold.describe_problems());
  CHECK(watch.fold.initial_adds_before_sync == 300);
  CHECK(watch.fold.initial_adds == 300);
  require_converges(watch, sim.truth());

  // Each phase injects a fault around 400 writes of churn at full speed, then requires the
  // printed state to catch up with the truth, so a failure names the fault it followed.
  enum class relist { none, required };
  struct phase {
    const char* name;
    relist expected;
    std::function<void()> inject; // returns with churn started or done
  };
  auto churn = [&] { sim.start_churn(400); };
  auto post = [&](const char* path) { sim.post(path); };
  const std::vector<phase> phases{
      {"churn", relist::none, churn},
      // Dropped mid-churn: the watch resumes from the last resourceVersion, no relist.
      {"drop-watches", relist::none,
       [&] {
         churn();
         post("/sim/faults/drop-watches");
       }},
      // The next two watches end with 410 Expired: each forces a relist. Dropping the open
      // watch makes the next one come now.
      {"fail-watches?count=2", relist::required,
       [&] {
         post("/sim/faults/fail-watches?count=2");
         post("/sim/faults/drop-watches");
         churn();
       }},
      // The client misses the churn (its watch stalled), then its resourceVersion is compacted
      // away: the relist must report the deletes it missed as final-state-unknown.
      {"compact", relist::required,
       [&] {
         post("/sim/faults/stall-watches");
         churn();
         sim.wait_churn_done();
         post("/sim/faults/compact");
         post("/sim/faults/drop-watches");
       }},
      // Every resourceVersion the client holds is too old after an etcd restore.
      {"restore", relist::required,
       [&] {
         post("/sim/faults/restore");
         post("/sim/faults/drop-watches");
         churn();
       }},
  };
  // A relist waits its backoff delay, which grows with each failure less than 2 minutes after
  // the previous one (client-go's): by the later phases it can be drawn from [cap, 2 cap).
  const auto relist_bound = 2 * kinformer::backoff_config{}.cap + 15s;
  // Returns once kinformer-watch's watch is open and a write has reached the output through it
  // rather than through a relist, so that the next fault meets an established watch and no
  // relist still pending (a relist after a 410 waits its backoff delay) from the previous one.
  auto settle = [&] {
    auto deadline = steady::now() + relist_bound;
    for (;;) {
      auto unknown_before = watch.fold.final_state_unknown_deletes;
      sim.start_churn(1);
      sim.wait_churn_done();
      require_converges(watch, sim.truth(), relist_bound);
      if (sim.open_watches() == 1 && watch.fold.final_state_unknown_deletes == unknown_before)
        return;
      REQUIRE(steady::now() < deadline);
      std::this_thread::sleep_for(50ms); // the poll interval: a backoff delay is in progress
    }
  };
  for (const auto& p : phases) {
    watch.fold.phase = std::string("settling before ") + p.name;
    settle();
    watch.fold.phase = p.name;
    auto unchanged_before = watch.fold.unchanged_updates;
    auto unknown_before = watch.fold.final_state_unknown_deletes;
    p.inject();
    sim.wait_churn_done();
    require_converges(watch, sim.truth(), relist_bound);
    // A relist shows as deletes of unknown final state (the ones it missed); watch events never
    // do. Objects a relist finds unchanged are not printed at all: no handler without a resync
    // period sees them (client-go's sync updates), so no update that changes nothing appears.
    auto unchanged = watch.fold.unchanged_updates - unchanged_before;
    auto unknown = watch.fold.final_state_unknown_deletes - unknown_before;
    INFO("phase " << p.name << ": " << unchanged << " unchanged updates, " << unknown
                  << " final-state-unknown deletes");
    CHECK(unchanged == 0);
    if (p.expected == relist::none)
      CHECK(unknown == 0);
    if (std::string_view(p.name) == "compact")
      CHECK(unknown > 0);
  }

  INFO(watch.fold.describe_problems());
  CHECK(watch.fold.problems.empty());
  CHECK(watch.fold.synced == 1);
  CHECK(watch.fold.deleted_keys.size() > 0);
  // A deleted key is gone from the truth, unless a pod of the same name was created again.
  auto final_truth = sim.truth();
  std::vector<std::string> deleted_but_present;
  for (const auto& key : watch.fold.deleted_keys)
    if (final_truth.contains(key) && !watch.fold.readded_keys.contains(key))
      deleted_but_present.push_back(key);
  INFO("deleted but still in the truth: " << deleted_but_present.size());
  CHECK(deleted_but_present.empty());

  // SIGTERM stops it cleanly.
  watch.process().terminate();
  auto code = watch.process().wait_exit(10s);
  REQUIRE(code);
  CHECK(*code == 0);
}

TEST_CASE("kinformer-watch --namespace prints only that namespace", "[watch_cli]") {
  kubesim sim(300, 3);
  watcher watch({"--server", sim.url(), "--namespace", "ns-1", "pods"});

  REQUIRE(watch.wait_synced());
  auto expected = in_namespace(sim.truth(), "ns-1");
  REQUIRE(!expected.empty());
  REQUIRE(expected.size() < 300);
  CHECK(watch.fold.initial_adds_before_sync == expected.size());
  require_converges(watch, expected);

  watch.fold.phase = "churn";
  sim.start_churn(400);
  sim.wait_churn_done();
  require_converges(watch, in_namespace(sim.truth(), "ns-1"));

  INFO(watch.fold.describe_problems());
  CHECK(watch.fold.problems.empty());
  std::vector<std::string> outside;
  for (const auto& key : watch.fold.keys_seen())
    if (key.rfind("ns-1/", 0) != 0)
      outside.push_back(key);
  INFO("first key outside ns-1: " << (outside.empty() ? "" : outside.front()));
  CHECK(outside.empty());
}

TEST_CASE("kinformer-watch --selector prints only matching pods", "[watch_cli]") {
  kubesim sim(300, 3);

  SECTION("app=NAME, a label every generated pod has") {
    auto labels = sim.pod_labels();
    REQUIRE(!labels.empty());
    std::string app = label(labels.begin()->second, "app");
    REQUIRE(!app.empty());
    watcher watch({"-s", sim.url(), "-A", "-l", "app=" + app, "pods"});

    REQUIRE(watch.wait_synced());
    auto expected = with_label(sim, "app", app);
    REQUIRE(expected.size() < 300);
    CHECK(watch.fold.initial_adds_before_sync == expected.size());
    require_converges(watch, expected);

    watch.fold.phase = "churn";
    sim.start_churn(400);
    sim.wait_churn_done();
    require_converges(watch, with_label(sim, "app", app));
    INFO(watch.fold.describe_problems());
    CHECK(watch.fold.problems.empty());
  }

  SECTION("track=stable, a label churn flips, so pods leave and re-enter the selection") {
    watcher watch({"--server=" + sim.url(), "--all-namespaces", "--selector=track=stable", "pods"});

    REQUIRE(watch.wait_synced());
    require_converges(watch, with_label(sim, "track", "stable"));

    watch.fold.phase = "churn";
    sim.start_churn(400);
    sim.wait_churn_done();
    auto expected = with_label(sim, "track", "stable");
    REQUIRE(expected.size() < 300);
    require_converges(watch, expected);
    INFO(watch.fold.describe_problems());
    CHECK(watch.fold.problems.empty());
  }
}

TEST_CASE("kinformer-watch exits with 2 and says why on bad arguments", "[watch_cli]") {
  kubesim sim(10, 1);
  auto run = [&](const std::vector<std::string>& args, const std::string& expected_message) {
    std::vector<std::string> argv{KINFORMER_WATCH_PATH, "--server", sim.url()};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process process(argv);
    auto code = process.wait_exit(20s);
    std::string err = process.stderr_text();
    INFO("stderr: " << err);
    REQUIRE(code);
    CHECK(*code == 2);
    CHECK_THAT(err, Catch::Contains(expected_message));
    CHECK_FALSE(process.next_line(1s)); // nothing on stdout
  };

  SECTION("bad label selector") {
    run({"--selector", "app in (web", "pods"}, "label selector");
  }
  SECTION("label selector with an invalid key") {
    run({"--selector", "-bad-=x", "pods"}, "label selector");
  }
  SECTION("bad field selector") {
    run({"--field-selector", "status.phase", "pods"}, "field selector");
  }
  SECTION("unknown resource") {
    run({"nosuchthings"}, "nosuchthings");
  }
  SECTION("an unknown flag") {
    run({"--bogus", "pods"}, "--bogus");
  }
  SECTION("no resource") {
    run({"-A"}, "RESOURCE is required");
  }
  SECTION("-A with -n") {
    run({"-A", "-n", "ns-0", "pods"}, "exclude each other");
  }
  SECTION("an output format kubectl does not have") {
    run({"-o", "xml", "pods"}, "is not one of json, yaml, name");
  }
}

TEST_CASE("kinformer-watch without -n watches the context's namespace, as kubectl", "[watch_cli]") {
  kubesim sim(60, 3);
  // --server alone: no kubeconfig, so the namespace is "default", the simulator's first.
  watcher watch({"--server", sim.url(), "pods"});
  REQUIRE(watch.wait_synced());
  const auto expected = in_namespace(sim.truth(), "default");
  REQUIRE_FALSE(expected.empty());
  REQUIRE(expected.size() < 60);
  CHECK(watch.fold.initial_adds_before_sync == expected.size());
  require_converges(watch, expected);
}

TEST_CASE("kinformer-watch -o name prints kind/name, --version its version", "[watch_cli]") {
  kubesim sim(20, 1);
  child_process names({KINFORMER_WATCH_PATH, "-s", sim.url(), "-A", "-o", "name", "pods"});
  std::set<std::string> printed;
  for (std::size_t i = 0; i < 20; ++i) {
    auto line = names.next_line(20s);
    REQUIRE(line);
    CHECK(line->starts_with("pod/"));
    printed.insert(*line);
  }
  std::set<std::string> expected;
  for (const auto& [key, rv] : sim.truth())
    expected.insert("pod/" + key.substr(key.find('/') + 1));
  CHECK(printed == expected);

  child_process version({KINFORMER_WATCH_PATH, "--version"});
  auto line = version.next_line(10s);
  REQUIRE(line);
  CHECK(line->starts_with("kinformer-watch "));
  auto code = version.wait_exit(10s);
  REQUIRE(code);
  CHECK(*code == 0);
}

// The next object `-o json` prints: indented as kubectl's, "{" and "}" alone on their lines.
std::optional<boost::json::value> next_printed_object(child_process& p) {
  std::string text;
  while (auto line = p.next_line(20s)) {
    text += *line + "\n";
    if (*line == "}")
      return boost::json::parse(text);
  }
  return std::nullopt;
}

TEST_CASE("kinformer-watch --drop-managed-fields and --metadata-only change what is stored",
          "[watch_cli]") {
  kubesim sim(5, 1);
  child_process stripped(
      {KINFORMER_WATCH_PATH, "-s", sim.url(), "-A", "-o", "json", "--drop-managed-fields", "pods"});
  child_process partial({KINFORMER_WATCH_PATH, "-s", sim.url(), "-A", "-o", "json",
                         "--metadata-only", "--drop-managed-fields", "pods"});
  child_process unchanged({KINFORMER_WATCH_PATH, "-s", sim.url(), "-A", "-o", "json", "pods"});
  for (std::size_t i = 0; i < 5; ++i) {
    auto pod = next_printed_object(stripped);
    REQUIRE(pod);
    CHECK(pod->at("kind") == "Pod");
    CHECK(pod->at("spec").is_object());
    CHECK_FALSE(pod->at("metadata").as_object().contains("managedFields"));
    auto meta = next_printed_object(partial);
    REQUIRE(meta);
    CHECK(meta->at("kind") == "PartialObjectMetadata");
    CHECK_FALSE(meta->as_object().contains("spec"));
    CHECK_FALSE(meta->at("metadata").as_object().contains("managedFields"));
    CHECK(meta->at("metadata").at("name").is_string());
    auto whole = next_printed_object(unchanged); // the simulator's pods do have managedFields
    REQUIRE(whole);
    CHECK(whole->at("metadata").as_object().contains("managedFields"));
  }
}

TEST_CASE("kinformer-watch reaches a TLS simulator that wants a token through a kubeconfig whose "
          "user is an exec plugin",
          "[watch_cli]") {
  kinformer::test::temp_dir dir;
  kubesim sim(40, 2, {"--tls", "--ca-out", dir.file("ca.pem"), "--token", "s3cret"});
  REQUIRE(sim.url().starts_with("https://"));
  // The plugin, as EKS's or GKE's: prints an ExecCredential, here after checking what client-go
  // would have told it.
  const auto plugin = dir.write(
      "bin/get-token",
      "#!/bin/sh\n"
      "echo run >> \"" +
          dir.file("runs") +
          "\"\n"
          "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) exit 9 ;; esac\n"
          "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
          "\"status\":{\"token\":\"s3cret\",\"expirationTimestamp\":\"2200-01-01T00:00:00Z\"}}'\n");
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  const auto kubeconfig = dir.write("config", sim_kubeconfig(sim, exec_user("./bin/get-token")));
  watcher watch({"--kubeconfig", kubeconfig, "-A", "pods"});
  INFO("kinformer-watch stderr: " << watch.process().stderr_text());
  REQUIRE(watch.wait_synced());
  CHECK(watch.fold.initial_adds_before_sync == 40);
  std::ifstream runs(dir.file("runs"));
  const auto count =
      std::count(std::istreambuf_iterator<char>(runs), std::istreambuf_iterator<char>(), '\n');
  CHECK(count == 1); // discovery, the list and the watch share one credential
}

TEST_CASE("kinformer-watch merges KUBECONFIG's files, takes the context's namespace and goes "
          "through the cluster's proxy",
          "[watch_cli]") {
  kinformer::test::temp_dir dir;
  dir.write("a/.keep", ""); // the folder the simulator writes its CA into
  kubesim sim(30, 2, {"--tls", "--ca-out", dir.file("a/ca.pem"), "--token", "t0k"});
  kinformer::test::connect_proxy proxy;
  // The cluster (its CA path relative to its own file) and the current context in one file;
  // the context, with its namespace, and the user in another, as kubectl users split them.
  const auto clusters = dir.write("a/config", "current-context: sim\n"
                                              "clusters:\n- name: sim\n  cluster:\n"
                                              "    server: " +
                                                  sim.url() +
                                                  "\n"
                                                  "    certificate-authority: ca.pem\n"
                                                  "    proxy-url: " +
                                                  proxy.url() + "\n");
  const auto users = dir.write("b/config", "contexts:\n- name: sim\n"
                                           "  context: {cluster: sim, user: u, namespace: ns-1}\n"
                                           "users:\n- name: u\n  user: {token: t0k}\n");
  const char* old = std::getenv("KUBECONFIG");
  const std::string saved = old ? old : "";
  ::setenv("KUBECONFIG", (clusters + ":" + dir.file("missing") + ":" + users).c_str(), 1);
  watcher watch({"pods"}); // no connection flag, no namespace flag: all from KUBECONFIG
  if (old)
    ::setenv("KUBECONFIG", saved.c_str(), 1);
  else
    ::unsetenv("KUBECONFIG");
  INFO("kinformer-watch stderr: " << watch.process().stderr_text());
  REQUIRE(watch.wait_synced());
  CHECK(watch.fold.initial_adds_before_sync > 0);
  CHECK(watch.fold.initial_adds_before_sync < 30);
  for (const auto& [key, rv] : watch.fold.objects)
    CHECK(key.starts_with("ns-1/"));
  const auto targets = proxy.targets();
  REQUIRE_FALSE(targets.empty());
  CHECK(targets.front() == sim.url().substr(std::string("https://").size()));
}

TEST_CASE("kinformer-watch authenticates with the client certificate an exec plugin returns",
          "[watch_cli]") {
  kinformer::test::temp_dir dir;
  kinformer::sim::certificate_request request;
  request.client_auth = true;
  auto client = kinformer::sim::make_self_signed_tls(request);
  REQUIRE(client.ok());
  // The simulator wants a token the client never has: only the certificate can get it in.
  kubesim sim(25, 1,
              {"--tls", "--ca-out", dir.file("ca.pem"), "--token", "never-sent", "--client-ca-file",
               dir.write("client-ca.pem", client->ca_cert_pem)});
  CHECK(sim.call(http::verb::get, "/api/v1/pods").status == 401);
  dir.write("credential.json",
            json::serialize(json::object{{"apiVersion", "client.authentication.k8s.io/v1"},
                                         {"kind", "ExecCredential"},
                                         {"status",
                                          {{"clientCertificateData", client->server_cert_pem},
                                           {"clientKeyData", client->server_key_pem},
                                           {"expirationTimestamp", "2200-01-01T00:00:00Z"}}}}));
  const auto plugin =
      dir.write("bin/get-cert", "#!/bin/sh\ncat \"" + dir.file("credential.json") + "\"\n");
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  const auto kubeconfig = dir.write("config", sim_kubeconfig(sim, exec_user("./bin/get-cert")));
  watcher watch({"--kubeconfig", kubeconfig, "-A", "pods"});
  INFO("kinformer-watch stderr: " << watch.process().stderr_text());
  REQUIRE(watch.wait_synced());
  CHECK(watch.fold.initial_adds_before_sync == 25);
}

TEST_CASE("kinformer-watch trusts the new CA after the simulator rotates its certificate",
          "[watch_cli]") {
  kinformer::test::temp_dir dir;
  kubesim sim(30, 1, {"--tls", "--ca-out", dir.file("ca.pem"), "--token", "t0k"});
  const auto kubeconfig = dir.write("config", sim_kubeconfig(sim, "  user: {token: t0k}\n"));
  watcher watch({"--kubeconfig", kubeconfig, "-A", "pods"});
  INFO("kinformer-watch stderr: " << watch.process().stderr_text());
  REQUIRE(watch.wait_synced());
  auto read_ca = [&] {
    std::ifstream in(dir.file("ca.pem"));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const auto old_ca = read_ca();

  // Every connection closes, and only the new CA verifies the server from now on: the watch
  // converges again only if the client reloaded the file.
  sim.post("/sim/tls/rotate");
  CHECK(read_ca() != old_ca);
  watch.fold.phase = "after the rotation";
  sim.start_churn(200);
  sim.wait_churn_done();
  require_converges(watch, sim.truth());
  CHECK(watch.fold.problems.empty());
}
