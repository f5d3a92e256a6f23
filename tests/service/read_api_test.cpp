// The read API end to end: simulator -> api_client -> cache -> read API -> HTTP server, read with
// real kubectl (failing when kubectl is not on PATH) and with raw HTTP for paging,
// watches and the error cases.

#include "actors/actor_system_setup.hpp"
#include "actors/cache.hpp"
#include "actors/handler.hpp"
#include "app/apiserver/continue_token.hpp"
#include "app/apiserver/http_server.hpp"
#include "app/kinformerd/read_api.hpp"
#include "app/kubesim/churn.hpp"
#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/kube_config.hpp"

#include "tests/support/command_run.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

using namespace kinformer;
using namespace kinformer::service;
namespace json = boost::json;
namespace fs = std::filesystem;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

bool kubectl_on_path() {
  const char* path = std::getenv("PATH");
  if (!path)
    return false;
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / "kubectl").c_str(), X_OK) == 0)
      return true;
  return false;
}

// Without kubectl a test fails and says so: it never passes without checking.
#define REQUIRE_KUBECTL()                                                                          \
  do {                                                                                             \
    if (!kubectl_on_path())                                                                        \
      FAIL("kubectl is not on PATH: deploy/install-deps.sh installs it");                          \
  } while (false)

using kinformer::testing::command_result; // tests/support/command_run.hpp

// Simulator (pods in three namespaces, deployments, widgets) -> cache -> read API on loopback.
// Bookmarks often, so that a quiet informer's progress is heard of quickly.
sim::simulator_options fixture_simulator_options(std::chrono::milliseconds bookmark_interval) {
  sim::simulator_options options;
  options.bookmark_interval = bookmark_interval;
  return options;
}

struct read_api_fixture {
  sim::simulator sim;
  std::shared_ptr<api_client> client;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  cache_actor cache;
  std::unique_ptr<read_api> api;
  std::unique_ptr<apiserver::http_server> server;
  fs::path home;

  // `namespaces`: the cache's default namespaces (an informer each); none: one for all.
  // `sim_bookmarks`: how often the simulator sends its watches a BOOKMARK, by which a quiet
  // informer makes progress.
  explicit read_api_fixture(
      apiserver::http_server_options server_options = {}, std::vector<std::string> namespaces = {},
      std::size_t merge_hold_limit = 100000,
      std::chrono::milliseconds sim_bookmarks = std::chrono::milliseconds(200),
      bool compress_objects = false)
      : sim(fixture_simulator_options(sim_bookmarks)) {
    sim::register_example_resources(sim.store());
    sim::object_generator generator;
    REQUIRE(sim::load_pods(sim.store(), generator, 30, 3).ok());
    for (int i = 0; i < 3; ++i)
      REQUIRE(
          sim.store()
              .create_value(sim::deployments_resource, "default", generator.deployment("default"))
              .ok());
    REQUIRE(sim.store()
                .create_value(sim::cluster_widgets_resource, "", generator.cluster_widget())
                .ok());
    for (int i = 0; i < 3; ++i) // served metadata-only: their data must never be served
      REQUIRE(sim.store()
                  .create_value(sim::config_maps_resource, "default",
                                json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)"
                                            R"({"name":"cm-)" +
                                            std::to_string(i) +
                                            R"("},"data":{"secret":"do-not-serve"}})"))
                  .ok());
    REQUIRE(sim.start().ok());
    auto created = api_client::create(*from_server_url(sim.url()));
    REQUIRE(created.ok());
    client = std::move(created).value();
    configure_actor_system(cfg);
    system = std::make_unique<caf::actor_system>(cfg);
    cache_options cache_config;
    cache_config.change_window = 1024; // as kinformerd's: resumed watches need it
    cache_config.default_namespaces = std::move(namespaces);
    // Every pod but the first 8 (the dictionary's samples) kept compressed.
    cache_config.compress_objects = compress_objects;
    cache_config.packing.samples = 8;
    cache = spawn_cache(*system, client, cache_config);

    read_api_options options;
    for (const auto& gvr : {sim::pods_resource, sim::deployments_resource})
      options.resources.push_back(*sim.store().find_resource(gvr));
    options.resources.push_back(sim::cluster_widget_resource_info());
    options.resources.push_back(*sim.store().find_resource(sim::config_maps_resource));
    options.forms[sim::config_maps_resource.to_string()] = {false, true}; // metadata only
    options.bookmark_interval = std::chrono::milliseconds(200); // quick periodic bookmarks
    options.merge_hold_limit = merge_hold_limit;
    api = std::make_unique<read_api>(*system, cache, options);
    server = std::make_unique<apiserver::http_server>(std::move(server_options));
    api->attach(*server);
    REQUIRE(server->start().ok());

    char pattern[] = "/tmp/read-api-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    home = pattern;
  }

  ~read_api_fixture() {
    server->stop();
    api.reset();
    caf::anon_send_exit(cache, caf::exit_reason::user_shutdown);
    cache = nullptr;
    system.reset();
    client.reset();
    sim.stop();
    std::error_code ignored;
    fs::remove_all(home, ignored);
  }

  sim::storage& store() { return sim.store(); }
  std::string url() const { return "http://" + server->local_endpoint(); }

  std::vector<std::string> kubectl_argv(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"timeout", "20", "kubectl", "--server=" + url(),
                                  "--cache-dir=" + (home / "cache").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  // Runs kubectl to completion (killed by `timeout` after 20 s), capturing both streams.
  command_result kubectl(const std::vector<std::string>& args) const {
    return kinformer::testing::run_command(
        kubectl_argv(args), "HOME='" + home.string() + "' KUBECONFIG=/dev/null", home);
  }

  // Runs kubectl and requires success; returns its stdout.
  std::string kubectl_ok(const std::vector<std::string>& args) const {
    return kinformer::testing::run_command_ok(
        kubectl_argv(args), "HOME='" + home.string() + "' KUBECONFIG=/dev/null", home);
  }

  // "namespace/name" of every stored object of `gvr` matching `labels` in `ns` ("" = all).
  std::set<std::string> truth(const group_version_resource& gvr, const std::string& ns = "",
                              const label_selector& labels = {}) {
    std::set<std::string> keys;
    for (const auto& version : store().truth(gvr)) {
      auto [key_ns, name] = split_object_key(version.key);
      if (!ns.empty() && key_ns != ns)
        continue;
      auto stored = store().get(gvr, key_ns, name);
      REQUIRE(stored.ok());
      if (labels.matches(*stored->object))
        keys.insert(version.key);
    }
    return keys;
  }
};

// Sets label `key`=`value` on pod ns/name; the written object.
sim::stored_object label_pod(sim::storage& store, const std::string& ns, const std::string& name,
                             const std::string& key, const std::string& value) {
  auto stored = store.get(sim::pods_resource, ns, name);
  REQUIRE(stored.ok());
  json::value changed(stored->object->tree(), {});
  changed.at("metadata").as_object()["labels"].as_object()[key] = value;
  auto written = store.update_value(sim::pods_resource, ns, name, changed);
  REQUIRE(written.ok());
  return *written;
}

std::string version_of(const json::value& event) {
  return std::string(event.at("object").at("metadata").at("resourceVersion").as_string());
}

// Keys of the items of a List (kubectl -o json or a raw list).
std::set<std::string> item_keys(const std::string& list_json) {
  std::set<std::string> keys;
  auto list = json::parse(list_json);
  for (const auto& item : list.at("items").as_array()) {
    const auto& meta = item.at("metadata").as_object();
    std::string ns =
        meta.contains("namespace") ? std::string(meta.at("namespace").as_string()) : "";
    keys.insert(make_object_key(ns, std::string(meta.at("name").as_string())));
  }
  return keys;
}

// A blocking HTTP client on one connection.
class raw_client {
public:
  explicit raw_client(std::uint16_t port) : socket_(ioc_) {
    socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  }

  std::string accept; // the Accept header of every request; empty: none

  http::response<http::string_body> request(const std::string& target,
                                            http::verb verb = http::verb::get,
                                            const std::string& token = "") {
    send(target, verb, token);
    http::response<http::string_body> response;
    http::read(socket_, buffer_, response);
    return response;
  }

  void send(const std::string& target, http::verb verb = http::verb::get,
            const std::string& token = "") {
    http::request<http::string_body> request{verb, target, 11};
    request.set(http::field::host, "127.0.0.1");
    if (!accept.empty())
      request.set(http::field::accept, accept);
    if (!token.empty())
      request.set(http::field::authorization, "Bearer " + token);
    request.prepare_payload();
    http::write(socket_, request);
  }

  // Opens a watch: reads the response head, then lines with next_line().
  int open_watch(const std::string& target) {
    send(target);
    parser_.emplace();
    parser_->body_limit(boost::none);
    http::read_header(socket_, buffer_, *parser_);
    return parser_->get().result_int();
  }

  // The next watch line as JSON; null at the end of the stream.
  json::value next_event() {
    for (;;) {
      auto newline = pending_.find('\n');
      if (newline != std::string::npos) {
        auto line = pending_.substr(0, newline);
        pending_.erase(0, newline + 1);
        return json::parse(line);
      }
      if (parser_->is_done())
        return nullptr;
      char chunk[8192];
      parser_->get().body().data = chunk;
      parser_->get().body().size = sizeof chunk;
      beast::error_code ec;
      http::read_some(socket_, buffer_, *parser_, ec);
      if (ec && ec != http::error::need_buffer)
        return nullptr;
      pending_.append(chunk, sizeof chunk - parser_->get().body().size);
    }
  }

private:
  net::io_context ioc_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::buffer_body>> parser_;
  std::string pending_;
};

std::string reason_of(const std::string& body) {
  auto value = json::parse(body);
  REQUIRE(value.at("kind") == "Status");
  return std::string(value.at("reason").as_string());
}

// A long-running kubectl whose stdout we read line by line, then stop.
class kubectl_stream {
public:
  kubectl_stream(const read_api_fixture& f, const std::vector<std::string>& args) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, (f.home / "watch-stderr").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> argv_strings = f.kubectl_argv(args);
    std::vector<char*> argv;
    for (auto& a : argv_strings)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string home = "HOME=" + f.home.string();
    std::string kubeconfig = "KUBECONFIG=/dev/null";
    std::vector<char*> env{home.data(), kubeconfig.data()};
    for (char** e = environ; *e; ++e) {
      std::string_view entry(*e);
      if (!entry.starts_with("HOME=") && !entry.starts_with("KUBECONFIG="))
        env.push_back(*e);
    }
    env.push_back(nullptr);
    int spawned = ::posix_spawnp(&pid_, "timeout", &actions, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    REQUIRE(spawned == 0);
    out_ = ::fdopen(fds[0], "r");
    REQUIRE(out_ != nullptr);
  }

  ~kubectl_stream() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    std::fclose(out_);
  }

  std::string next_line() {
    char* line = nullptr;
    std::size_t capacity = 0;
    ssize_t n = ::getline(&line, &capacity, out_);
    std::string out = n > 0 ? std::string(line, static_cast<std::size_t>(n)) : std::string();
    std::free(line);
    if (!out.empty() && out.back() == '\n')
      out.pop_back();
    return out;
  }

private:
  pid_t pid_ = 0;
  FILE* out_ = nullptr;
};

} // namespace

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: kubectl lists pods in all namespaces, one, by label") {
  REQUIRE_KUBECTL();
  CHECK(item_keys(kubectl_ok({"get", "pods", "-A", "-o", "json"})) == truth(sim::pods_resource));
  CHECK(item_keys(kubectl_ok({"get", "pods", "-n", "ns-1", "-o", "json"})) ==
        truth(sim::pods_resource, "ns-1"));

  // A label some but not all pods carry.
  auto first = store().get(sim::pods_resource, "default",
                           split_object_key(*truth(sim::pods_resource, "default").begin()).name);
  REQUIRE(first.ok());
  auto app = first->object->meta().label("app");
  REQUIRE(app.has_value());
  std::string selector = "app=" + std::string(*app);
  auto expected = truth(sim::pods_resource, "", *label_selector::parse(selector));
  CHECK_FALSE(expected.empty());
  CHECK(item_keys(kubectl_ok({"get", "pods", "-A", "-l", selector, "-o", "json"})) == expected);

  // The default table output names every pod of the namespace.
  auto table = kubectl_ok({"get", "pods", "-n", "ns-2"});
  for (const auto& key : truth(sim::pods_resource, "ns-2"))
    CHECK(table.find(std::string(split_object_key(key).name)) != std::string::npos);
}

TEST_CASE_METHOD(read_api_fixture, "read_api: kubectl gets deployments.apps, one pod, a miss") {
  REQUIRE_KUBECTL();
  CHECK(item_keys(kubectl_ok({"get", "deployments.apps", "-n", "default", "-o", "json"})) ==
        truth(sim::deployments_resource, "default"));
  auto key = *truth(sim::pods_resource, "ns-1").begin();
  std::string name(split_object_key(key).name);
  auto pod = json::parse(kubectl_ok({"get", "pod", name, "-n", "ns-1", "-o", "json"}));
  CHECK(pod.at("metadata").at("name").as_string() == name);
  CHECK(pod.at("kind") == "Pod");
  auto miss = kubectl({"get", "pod", "no-such-pod", "-n", "ns-1"});
  CHECK(miss.exit_code != 0);
  CHECK(miss.err.find("NotFound") != std::string::npos);
  // kubectl words this miss generically ("the server could not find the requested resource"),
  // as it does against the simulator; the raw-HTTP test checks the Status message itself.
  // A kind the read API does not serve is unknown to kubectl.
  auto unknown = kubectl({"get", "secrets"});
  CHECK(unknown.exit_code != 0);
}

TEST_CASE_METHOD(read_api_fixture, "read_api: kubectl get -w prints changes made while watching") {
  REQUIRE_KUBECTL();
  sim::churn_options options;
  options.rate = 100;
  options.label_weight = 0;
  options.spec_weight = 0;
  sim::churn writes(store(), options);
  kubectl_stream watch(*this, {"get", "pods", "-A", "--watch-only", "-o", "name"});
  writes.start(); // continuous writes: some land after the watch is established
  for (int i = 0; i < 3; ++i) {
    auto line = watch.next_line();
    INFO("line " << i << ": \"" << line << "\"");
    CHECK(line.starts_with("pod/"));
  }
  writes.stop();
}

TEST_CASE_METHOD(read_api_fixture, "read_api: a raw watch from a list's resourceVersion") {
  raw_client c(server->port());
  auto list = c.request("/api/v1/namespaces/ns-1/pods");
  REQUIRE(list.result_int() == 200);
  auto body = json::parse(list.body());
  CHECK(body.at("kind") == "PodList");
  CHECK(body.at("apiVersion") == "v1");
  std::string rv(body.at("metadata").at("resourceVersion").as_string());
  REQUIRE_FALSE(rv.empty());

  raw_client w(server->port());
  REQUIRE(w.open_watch("/api/v1/namespaces/ns-1/pods?watch=true&resourceVersion=" + rv) == 200);
  // Change one pod: the watch skipped what the list had, so this is the first event.
  auto key = *truth(sim::pods_resource, "ns-1").begin();
  std::string name(split_object_key(key).name);
  auto stored = store().get(sim::pods_resource, "ns-1", name);
  REQUIRE(stored.ok());
  json::value changed(stored->object->tree(), {});
  changed.at("metadata").as_object()["labels"].as_object()["read-api-test"] = "changed";
  REQUIRE(store().update_value(sim::pods_resource, "ns-1", name, changed).ok());
  auto event = w.next_event();
  INFO(json::serialize(event));
  REQUIRE(event.is_object());
  // ADDED when the change reached the cache before the subscription's initial list.
  CHECK((event.at("type") == "MODIFIED" || event.at("type") == "ADDED"));
  CHECK(event.at("object").at("metadata").at("name").as_string() == name);
  CHECK(event.at("object").at("metadata").at("labels").at("read-api-test") == "changed");

  REQUIRE(store().remove(sim::pods_resource, "ns-1", name).ok());
  auto deleted = w.next_event();
  REQUIRE(deleted.is_object());
  CHECK(deleted.at("type") == "DELETED");
  CHECK(deleted.at("object").at("metadata").at("name").as_string() == name);
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: a watch from 0 starts with every object, ends on time") {
  raw_client w(server->port());
  REQUIRE(w.open_watch("/apis/apps/v1/namespaces/default/deployments?watch=1&timeoutSeconds=1"
                       "&allowWatchBookmarks=true&sendInitialEvents=true"
                       "&resourceVersionMatch=NotOlderThan") == 200);
  std::set<std::string> added;
  bool bookmark = false;
  for (auto event = w.next_event(); !event.is_null(); event = w.next_event()) {
    if (event.at("type") == "ADDED")
      added.insert("default/" +
                   std::string(event.at("object").at("metadata").at("name").as_string()));
    if (event.at("type") == "BOOKMARK" && !bookmark) {
      // The first one ends the initial events; periodic ones (every 200 ms here) follow.
      CHECK(event.at("object").at("metadata").at("annotations").at("k8s.io/initial-events-end") ==
            "true");
      CHECK(added == truth(sim::deployments_resource, "default"));
      bookmark = true;
    }
  }
  CHECK(added == truth(sim::deployments_resource, "default"));
  CHECK(bookmark);
}

// Issue 58: kinformerd answered a streaming list of about 1,700 real pods (more than the stream's
// bound at once) with one ERROR event, "its client read too slowly", whatever the client's pace.
TEST_CASE(
    "read_api: a streaming list larger than the stream's bound goes out at the client's pace") {
  apiserver::http_server_options options;
  options.stream_buffer_limit = 16 << 10; // the 30 pods are several times this
  read_api_fixture f(options);
  auto pods = f.truth(sim::pods_resource);
  raw_client w(f.server->port());
  REQUIRE(w.open_watch("/api/v1/pods?watch=1&timeoutSeconds=2&allowWatchBookmarks=true"
                       "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan") == 200);
  std::set<std::string> added;
  std::size_t bytes = 0;
  bool ended_initial = false;
  for (auto event = w.next_event(); !event.is_null(); event = w.next_event()) {
    INFO(json::serialize(event).substr(0, 300));
    REQUIRE(event.at("type") != "ERROR");
    if (event.at("type") == "ADDED") {
      const auto& meta = event.at("object").at("metadata");
      added.insert(std::string(meta.at("namespace").as_string()) + "/" +
                   std::string(meta.at("name").as_string()));
      bytes += json::serialize(event).size();
    }
    if (event.at("type") == "BOOKMARK" && !ended_initial) {
      CHECK(added == pods);
      ended_initial = true;
    }
  }
  CHECK(bytes > 3 * options.stream_buffer_limit);
  CHECK(added == pods);
  CHECK(ended_initial);
}

TEST_CASE_METHOD(
    read_api_fixture,
    "read_api: a watch with sendInitialEvents=false starts now, with no initial state") {
  raw_client w(server->port());
  REQUIRE(w.open_watch("/api/v1/namespaces/ns-1/pods?watch=1&sendInitialEvents=false"
                       "&resourceVersionMatch=NotOlderThan") == 200);
  // The stream opens once every informer is subscribed: a change made now is the first event,
  // where a watch without sendInitialEvents would first list every pod as ADDED.
  auto key = *truth(sim::pods_resource, "ns-1").begin();
  std::string name(split_object_key(key).name);
  auto stored = store().get(sim::pods_resource, "ns-1", name);
  REQUIRE(stored.ok());
  json::value changed(stored->object->tree(), {});
  changed.at("metadata").as_object()["labels"].as_object()["read-api-test"] = "now";
  REQUIRE(store().update_value(sim::pods_resource, "ns-1", name, changed).ok());
  auto event = w.next_event();
  INFO(json::serialize(event));
  REQUIRE(event.is_object());
  CHECK(event.at("type") == "MODIFIED");
  CHECK(event.at("object").at("metadata").at("name").as_string() == name);
  CHECK(event.at("object").at("metadata").at("labels").at("read-api-test") == "now");
}

TEST_CASE_METHOD(read_api_fixture, "read_api: limit and continue page through one snapshot") {
  raw_client c(server->port());
  std::set<std::string> seen;
  std::string target = "/api/v1/pods?limit=7";
  std::string first_rv;
  int pages = 0;
  std::string last_target;
  for (;;) {
    auto page = c.request(target);
    REQUIRE(page.result_int() == 200);
    last_target = target;
    auto body = json::parse(page.body());
    auto keys = item_keys(page.body());
    CHECK(keys.size() <= 7);
    // The real server's JSON list items name no kind and apiVersion: the list names them.
    for (const auto& item : body.at("items").as_array()) {
      CHECK_FALSE(item.as_object().contains("kind"));
      CHECK_FALSE(item.as_object().contains("apiVersion"));
    }
    for (const auto& k : keys)
      CHECK(seen.insert(k).second);
    std::string rv(body.at("metadata").at("resourceVersion").as_string());
    if (pages++ == 0)
      first_rv = rv;
    CHECK(rv == first_rv);
    const auto& meta = body.at("metadata").as_object();
    if (!meta.contains("continue"))
      break;
    target = "/api/v1/pods?limit=7&continue=" + std::string(meta.at("continue").as_string());
  }
  CHECK(pages == 5); // 30 pods
  CHECK(seen == truth(sim::pods_resource));
  // The last page served releases the snapshot (it would pin replaced objects): asking for it
  // again is the API server's answer to a compacted token, and the client relists.
  auto again = c.request(last_target);
  CHECK(again.result_int() == 410);
  CHECK(reason_of(again.body()) == "Expired");

  // Tokens are in the API server's format, with the kept snapshot's id.
  auto unknown = apiserver::continue_token::after(1, "default/pod-1", 999999).encode();
  auto expired = c.request("/api/v1/pods?limit=7&continue=" + unknown);
  CHECK(expired.result_int() == 410);
  CHECK(reason_of(expired.body()) == "Expired");
  auto garbage = c.request("/api/v1/pods?limit=7&continue=garbage");
  CHECK(garbage.result_int() == 400);
  // The simulator's tokens (no snapshot) are not this server's.
  auto foreign = apiserver::continue_token::after(5, "default/pod-1").encode();
  CHECK(c.request("/api/v1/pods?limit=7&continue=" + foreign).result_int() == 400);
  auto first = json::parse(c.request("/api/v1/pods?limit=7").body());
  std::string token(first.at("metadata").at("continue").as_string());
  auto other_list = c.request("/api/v1/namespaces/ns-1/pods?limit=7&continue=" + token);
  CHECK(other_list.result_int() == 400);
}

TEST_CASE_METHOD(read_api_fixture, "read_api: errors are Status JSON with the right codes") {
  raw_client c(server->port());
  auto unknown = c.request("/api/v1/secrets");
  CHECK(unknown.result_int() == 404);
  CHECK(reason_of(unknown.body()) == "NotFound");
  CHECK(c.request("/apis/nosuch.io/v1/things").result_int() == 404);
  CHECK(c.request("/api/v1/namespaces/default/pods/x/log").result_int() == 404);
  auto bad_labels = c.request("/api/v1/pods?labelSelector=a%20in%20(b");
  CHECK(bad_labels.result_int() == 400);
  CHECK(reason_of(bad_labels.body()) == "BadRequest");
  CHECK(c.request("/api/v1/pods?fieldSelector=%3Dx").result_int() == 400);
  CHECK(c.request("/api/v1/pods?watch=maybe").result_int() == 400);
  CHECK(c.request("/api/v1/pods?limit=abc").result_int() == 400);
  // As kube-apiserver v1.37.2 answers them (docs/real-kubernetes.md, wire differences).
  CHECK(c.request("/api/v1/pods?limit=-1").result_int() == 200);
  auto unsupported_field = c.request("/api/v1/pods?fieldSelector=spec.foo%3Dx");
  CHECK(unsupported_field.result_int() == 400);
  CHECK(json::parse(unsupported_field.body()).at("message") ==
        "field label not supported: spec.foo");
  auto bad_version = c.request("/api/v1/pods?resourceVersion=abc");
  CHECK(bad_version.result_int() == 400);
  CHECK_THAT(std::string(json::parse(bad_version.body()).at("message").as_string()),
             Catch::StartsWith("invalid resource version: "));
  CHECK(c.request("/api/v1/pods?watch=1&resourceVersion=abc").result_int() == 500);
  // Inconsistent ListOptions are 422 Invalid, as the API server (and the simulator) answers.
  CHECK(c.request("/api/v1/pods?resourceVersionMatch=Sometimes&resourceVersion=1").result_int() ==
        422);
  CHECK(c.request("/api/v1/pods?resourceVersionMatch=NotOlderThan").result_int() == 422);
  CHECK(c.request("/api/v1/pods?sendInitialEvents=true").result_int() == 422);
  CHECK(c.request("/api/v1/pods?watch=1&sendInitialEvents=true").result_int() == 422);
  auto write = c.request("/api/v1/namespaces/default/pods", http::verb::post);
  CHECK(write.result_int() == 405);
  CHECK(reason_of(write.body()) == "MethodNotAllowed");
  CHECK(c.request("/api/v1/namespaces/default/pods/x", http::verb::delete_).result_int() == 405);
  auto missing = c.request("/api/v1/namespaces/default/pods/no-such-pod");
  CHECK(missing.result_int() == 404);
  CHECK(json::parse(missing.body()).at("message") == "pods \"no-such-pod\" not found");
  auto future = c.request("/api/v1/pods?resourceVersion=999999999");
  CHECK(future.result_int() == 504);
  CHECK(c.request("/api/v1/pods?resourceVersion=1&resourceVersionMatch=Exact").result_int() == 410);
  auto malformed = c.request("/api/v1/pods?labelSelector=%zz");
  CHECK(malformed.result_int() == 400);
}

TEST_CASE_METHOD(read_api_fixture, "read_api: discovery shows the served kinds only") {
  raw_client c(server->port());
  auto core = json::parse(c.request("/api/v1").body());
  std::set<std::string> names;
  for (const auto& r : core.at("resources").as_array())
    names.insert(std::string(r.at("name").as_string()));
  CHECK(names == std::set<std::string>{"pods", "configmaps"});
  auto groups = json::parse(c.request("/apis").body());
  std::set<std::string> group_names;
  for (const auto& g : groups.at("groups").as_array())
    group_names.insert(std::string(g.at("name").as_string()));
  CHECK(group_names == std::set<std::string>{"apps", "example.com"});
  CHECK(c.request("/apis/apps/v1").result_int() == 200);
  CHECK(c.request("/apis/batch/v1").result_int() == 404);
  CHECK(c.request("/version").result_int() == 200);
  CHECK(c.request("/openapi/v2").result_int() == 200);
  // The cluster-scoped kind is listed without a namespace and refused with one.
  auto widgets = c.request("/apis/example.com/v1/clusterwidgets");
  CHECK(widgets.result_int() == 200);
  CHECK(item_keys(widgets.body()) == truth(sim::cluster_widgets_resource));
  CHECK(c.request("/apis/example.com/v1/namespaces/default/clusterwidgets").result_int() == 404);
}

// One front end serves both (app/apiserver/api_frontend.hpp): the same request over the same
// objects gets the same answer from the cache as from the simulator behind it.
// Lists (objects, metadata, Tables) and gets from the cache answer what the simulator answers.
void check_answers_match_simulator(read_api_fixture& f) {
  raw_client cache_side(f.server->port());
  raw_client sim_side(f.sim.port());
  // The first list waits for the informer's sync; nothing is written after it.
  REQUIRE(cache_side.request("/api/v1/pods").result_int() == 200);
  for (const std::string target :
       {"/api/v1/pods", "/api/v1/namespaces/ns-1/pods", "/api/v1/pods?labelSelector=app%3Dweb",
        "/api/v1/pods?fieldSelector=metadata.namespace%21%3Dns-1",
        "/api/v1/namespaces/ns-2/pods?labelSelector=app%3Dweb&fieldSelector=metadata.name%21%3Dx",
        "/apis/apps/v1/deployments", "/apis/example.com/v1/clusterwidgets"}) {
    INFO(target);
    auto cached = cache_side.request(target);
    auto direct = sim_side.request(target);
    REQUIRE(cached.result_int() == 200);
    CHECK(cached.body() == direct.body());
    cache_side.accept = sim_side.accept =
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    CHECK(cache_side.request(target).body() == sim_side.request(target).body());
    // A Table's AGE cells read the clock: everything else is compared.
    cache_side.accept = sim_side.accept = "application/json;as=Table;g=meta.k8s.io;v=v1";
    auto cached_table = json::parse(cache_side.request(target).body());
    auto direct_table = json::parse(sim_side.request(target).body());
    CHECK(cached_table.at("kind") == "Table");
    CHECK(cached_table.at("columnDefinitions") == direct_table.at("columnDefinitions"));
    const auto& cached_rows = cached_table.at("rows").as_array();
    const auto& direct_rows = direct_table.at("rows").as_array();
    REQUIRE(cached_rows.size() == direct_rows.size());
    for (std::size_t i = 0; i < cached_rows.size(); ++i) {
      CHECK(cached_rows[i].at("object") == direct_rows[i].at("object"));
      CHECK(cached_rows[i].at("cells").as_array().size() ==
            direct_rows[i].at("cells").as_array().size());
    }
    cache_side.accept = sim_side.accept = "";
  }
  // And one object, and what neither serves.
  const std::string one = "/apis/apps/v1/namespaces/default/deployments";
  auto name = json::parse(sim_side.request(one).body())
                  .at("items")
                  .at(0)
                  .at("metadata")
                  .at("name")
                  .as_string();
  const std::string item = one + "/" + std::string(name);
  CHECK(cache_side.request(item).body() == sim_side.request(item).body());
  cache_side.accept = sim_side.accept = "application/yaml";
  CHECK(cache_side.request(item).body() == sim_side.request(item).body());
  CHECK(cache_side.request(item).result_int() == 406);
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: a list answers the simulator's bytes, as objects, metadata and Table") {
  check_answers_match_simulator(*this);
}

struct compressed_read_api_fixture : read_api_fixture {
  compressed_read_api_fixture()
      : read_api_fixture({}, {}, 100000, std::chrono::milliseconds(200), true) {}
};

TEST_CASE_METHOD(compressed_read_api_fixture,
                 "read_api: objects kept compressed are served as the simulator's bytes") {
  check_answers_match_simulator(*this);
  // A change to a compressed pod comes through a watch as the simulator sends it.
  raw_client cache_side(server->port());
  auto list = json::parse(cache_side.request("/api/v1/namespaces/ns-1/pods").body());
  const std::string rv(list.at("metadata").at("resourceVersion").as_string());
  const auto& items = list.at("items").as_array();
  REQUIRE(!items.empty());
  const std::string name(items.back().at("metadata").at("name").as_string());
  const std::string target = "/api/v1/namespaces/ns-1/pods?watch=true&resourceVersion=" + rv;
  raw_client watch(server->port()), direct(sim.port());
  REQUIRE(watch.open_watch(target) == 200);
  REQUIRE(direct.open_watch(target) == 200);
  label_pod(store(), "ns-1", name, "read-api-test", "compressed");
  auto cached = watch.next_event(), sent = direct.next_event();
  REQUIRE(cached.is_object());
  REQUIRE(sent.is_object());
  CHECK(cached.at("object") == sent.at("object"));
  CHECK(cached.at("object").at("metadata").at("labels").at("read-api-test") == "compressed");
}

// A kind cached per namespace has an informer each; a watch across them must still get its live
// events in resourceVersion order, or a client that resumes from the last one misses the rest.
TEST_CASE("read_api: a watch across several informers gets live events in resourceVersion order") {
  const std::vector<std::string> namespaces{"default", "ns-1", "ns-2"};
  read_api_fixture f({}, namespaces);
  raw_client c(f.server->port());
  auto list = c.request("/api/v1/pods"); // waits for every informer's sync
  REQUIRE(list.result_int() == 200);
  const std::string rv(json::parse(list.body()).at("metadata").at("resourceVersion").as_string());
  raw_client w(f.server->port());
  REQUIRE(w.open_watch("/api/v1/pods?watch=1&resourceVersion=" + rv) == 200);

  // Writes that go round the three namespaces, each informer delivering its own.
  std::vector<std::vector<std::string>> names;
  for (const auto& ns : namespaces) {
    names.emplace_back();
    for (const auto& key : f.truth(sim::pods_resource, ns))
      names.back().emplace_back(split_object_key(key).name);
    REQUIRE(names.back().size() == 10);
  }
  std::vector<std::string> written;
  for (std::size_t i = 0; i < 90; ++i) {
    const std::size_t ns = i % 3;
    auto stored =
        label_pod(f.store(), namespaces[ns], names[ns][i / 3 % 10], "touch", std::to_string(i));
    written.emplace_back(stored.object->meta().resource_version);
  }
  std::vector<std::string> seen;
  std::uint64_t last = 0;
  bool ordered = true;
  while (seen.size() < written.size()) {
    auto event = w.next_event();
    REQUIRE(event.is_object());
    if (event.at("type") == "BOOKMARK")
      continue;
    seen.push_back(version_of(event));
    const auto now = std::stoull(seen.back());
    ordered = ordered && now > last;
    last = now;
  }
  CHECK(ordered);
  CHECK(seen == written);
}

// A watch in one namespace of a kind cached per namespace subscribes to that namespace's informer
// alone: no other namespace's informer can hold its events back.
TEST_CASE("read_api: a watch in one namespace reads its own namespace's informer alone") {
  read_api_fixture f({}, {"default", "ns-1", "ns-2"});
  raw_client c(f.server->port());
  auto list = c.request("/api/v1/namespaces/ns-1/pods");
  REQUIRE(list.result_int() == 200);
  const std::string rv(json::parse(list.body()).at("metadata").at("resourceVersion").as_string());
  raw_client w(f.server->port());
  REQUIRE(w.open_watch("/api/v1/namespaces/ns-1/pods?watch=1&resourceVersion=" + rv) == 200);
  auto name = *f.truth(sim::pods_resource, "ns-1").begin();
  auto written = label_pod(f.store(), "ns-1", std::string(split_object_key(name).name), "x", "y");
  json::value event;
  do
    event = w.next_event();
  while (event.is_object() && event.at("type") == "BOOKMARK");
  REQUIRE(event.is_object());
  CHECK(version_of(event) == written.object->meta().resource_version);

  caf::scoped_actor self{*f.system};
  self->request(f.cache, caf::infinite, atoms::stats_atom::value)
      .receive(
          [&](const cache_stats& stats) {
            std::map<std::string, std::size_t> subscriptions;
            for (const auto& informer : stats.informers)
              if (informer.kind.find("Pod") != std::string::npos)
                subscriptions[informer.namespace_] = informer.stats.subscriptions;
            CHECK(subscriptions ==
                  std::map<std::string, std::size_t>{{"default", 0}, {"ns-1", 1}, {"ns-2", 0}});
          },
          [&](caf::error& err) { FAIL(f.system->render(err)); });
}

// Events held for a quiet informer are bounded: past the bound the watch ends, and what it sent
// is in order (the client resumes from its last event).
TEST_CASE("read_api: a watch across informers ends cleanly past its bound of held events") {
  // The quiet informers get no BOOKMARK within the test, so nothing releases the held events:
  // with the simulator's usual 200 ms a slow machine (TSan) released them before 10 piled up,
  // and the watch never ended.
  read_api_fixture f({}, {"default", "ns-1", "ns-2"}, 10, std::chrono::minutes(10));
  raw_client c(f.server->port());
  auto list = c.request("/api/v1/pods");
  REQUIRE(list.result_int() == 200);
  const std::string rv(json::parse(list.body()).at("metadata").at("resourceVersion").as_string());
  raw_client w(f.server->port());
  REQUIRE(w.open_watch("/api/v1/pods?watch=1&resourceVersion=" + rv) == 200);
  // Only "default" changes: its events wait for the other two informers' bookmarks.
  std::vector<std::string> names;
  for (const auto& key : f.truth(sim::pods_resource, "default"))
    names.emplace_back(split_object_key(key).name);
  const std::size_t writes = 200;
  for (std::size_t i = 0; i < writes; ++i)
    label_pod(f.store(), "default", names[i % names.size()], "touch", std::to_string(i));
  std::size_t seen = 0;
  std::uint64_t last = 0;
  for (auto event = w.next_event(); event.is_object(); event = w.next_event()) {
    if (event.at("type") == "BOOKMARK")
      continue;
    const auto now = std::stoull(version_of(event));
    CHECK(now > last);
    last = now;
    ++seen;
  }
  CHECK(seen < writes); // the stream ended before they were all out
}

TEST_CASE("read_api: the bearer token guards the read API") {
  apiserver::http_server_options options;
  options.bearer_token = "read-token";
  read_api_fixture f(options);
  raw_client c(f.server->port());
  CHECK(c.request("/api/v1/pods").result_int() == 401);
  CHECK(c.request("/api/v1/pods", http::verb::get, "wrong").result_int() == 403);
  auto ok = c.request("/api/v1/pods", http::verb::get, "read-token");
  CHECK(ok.result_int() == 200);
  CHECK(item_keys(ok.body()) == f.truth(sim::pods_resource));
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: a watch from a list's resourceVersion reports a delete it missed") {
  raw_client c(server->port());
  auto list = c.request("/api/v1/namespaces/ns-1/pods");
  REQUIRE(list.result_int() == 200);
  std::string rv(json::parse(list.body()).at("metadata").at("resourceVersion").as_string());
  REQUIRE_FALSE(rv.empty());

  // A cache subscriber that tells when the cache has applied the delete.
  std::mutex mutex;
  std::condition_variable seen_cv;
  std::set<std::string> seen_deleted;
  bool observer_synced = false;
  handler_callbacks callbacks;
  callbacks.on_delta = [&](const delta& d) {
    if (d.type != delta_type::deleted)
      return;
    std::lock_guard lock(mutex);
    seen_deleted.insert(std::string(d.object->key()));
    seen_cv.notify_all();
  };
  callbacks.on_synced = [&] {
    std::lock_guard lock(mutex);
    observer_synced = true;
    seen_cv.notify_all();
  };
  auto observer =
      spawn_handler(*system, cache, kind_request{{"", "v1", "Pod"}, "", false}, callbacks);
  {
    // Subscribed before the delete, or the observer could start after it and never see it.
    std::unique_lock lock(mutex);
    REQUIRE(seen_cv.wait_for(lock, std::chrono::seconds(20), [&] { return observer_synced; }));
  }

  auto pods = truth(sim::pods_resource, "ns-1");
  REQUIRE_FALSE(pods.empty());
  auto key = *pods.begin();
  std::string name(split_object_key(key).name);
  REQUIRE(store().remove(sim::pods_resource, "ns-1", name).ok());
  {
    std::unique_lock lock(mutex);
    REQUIRE(seen_cv.wait_for(lock, std::chrono::seconds(20),
                             [&] { return seen_deleted.count(key) > 0; }));
  }
  caf::anon_send_exit(observer, caf::exit_reason::user_shutdown);

  // The pod was deleted between the list and the watch: the watch still reports it (at once;
  // the timeout only turns a missing event into a failure instead of a hang).
  raw_client w(server->port());
  REQUIRE(w.open_watch("/api/v1/namespaces/ns-1/pods?watch=true&timeoutSeconds=10"
                       "&resourceVersion=" +
                       rv) == 200);
  auto event = w.next_event();
  INFO(json::serialize(event));
  REQUIRE(event.is_object());
  CHECK(event.at("type") == "DELETED");
  CHECK(event.at("object").at("metadata").at("name").as_string() == name);
  CHECK(event.at("object").at("metadata").at("namespace").as_string() == "ns-1");

  // A watch of another namespace is not told.
  raw_client other(server->port());
  REQUIRE(other.open_watch("/api/v1/namespaces/ns-2/pods?watch=true&timeoutSeconds=1"
                           "&resourceVersion=" +
                           rv) == 200);
  CHECK(other.next_event().is_null());
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: a watch from before the cache's deletion window is 410 Expired") {
  raw_client c(server->port());
  auto list = c.request("/api/v1/pods");
  REQUIRE(list.result_int() == 200); // the informer has listed: its window starts there
  std::string rv(json::parse(list.body()).at("metadata").at("resourceVersion").as_string());
  REQUIRE(std::stoull(rv) > 1);

  // resourceVersion 1 predates the informer's list: it cannot know what was deleted since.
  auto refused = c.request("/api/v1/pods?watch=true&resourceVersion=1");
  INFO(refused.body());
  CHECK(refused.result_int() == 410);
  CHECK(reason_of(refused.body()) == "Expired");
  CHECK(json::parse(refused.body()).at("message").as_string().find("too old resource version") !=
        json::string::npos);

  // From the list's own resourceVersion the window is complete: the watch opens.
  raw_client w(server->port());
  CHECK(w.open_watch("/api/v1/pods?watch=true&timeoutSeconds=1&resourceVersion=" + rv) == 200);
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: a resumed watch ends cleanly when its informer is restarted") {
  raw_client c(server->port());
  auto list = c.request("/api/v1/pods");
  REQUIRE(list.result_int() == 200);
  std::string rv(json::parse(list.body()).at("metadata").at("resourceVersion").as_string());

  raw_client w(server->port());
  REQUIRE(w.open_watch("/api/v1/pods?watch=true&timeoutSeconds=20&resourceVersion=" + rv) == 200);
  // The watch has subscribed once a change reaches it.
  auto pods = truth(sim::pods_resource, "ns-1");
  REQUIRE_FALSE(pods.empty());
  std::string name(split_object_key(*pods.begin()).name);
  REQUIRE(store().remove(sim::pods_resource, "ns-1", name).ok());
  auto deleted = w.next_event();
  REQUIRE(deleted.is_object());
  CHECK(deleted.at("type") == "DELETED");

  caf::scoped_actor self{*system};
  informer_set informers;
  self->request(cache, caf::infinite, atoms::get_informer_atom::value,
                kind_request{{"", "v1", "Pod"}, "", false})
      .receive([&](const informer_set& found) { informers = found; },
               [&](caf::error& err) { FAIL(system->render(err)); });
  REQUIRE(informers.size() == 1);
  caf::anon_send_exit(informers.front().informer, caf::exit_reason::kill);
  // The stream ends long before its timeout; the client watches again (or relists).
  CHECK(w.next_event().is_null());
}

TEST_CASE_METHOD(
    read_api_fixture,
    "read_api: a resumed watch reports, in order, what left and entered its selection") {
  auto pods = truth(sim::pods_resource, "ns-1");
  REQUIRE(pods.size() >= 3);
  auto it = pods.begin();
  const std::string p(split_object_key(*it++).name), q(split_object_key(*it++).name),
      r(split_object_key(*it++).name);
  label_pod(store(), "ns-1", p, "flip", "x");
  label_pod(store(), "ns-1", q, "flip", "x");

  raw_client c(server->port());
  // Listed again until the cache has both changes (each try is a round trip, not a sleep).
  const std::set<std::string> both{"ns-1/" + p, "ns-1/" + q};
  auto list = c.request("/api/v1/namespaces/ns-1/pods?labelSelector=flip%3Dx");
  for (int tries = 0; tries < 10000 && item_keys(list.body()) != both; ++tries)
    list = c.request("/api/v1/namespaces/ns-1/pods?labelSelector=flip%3Dx");
  REQUIRE(list.result_int() == 200);
  REQUIRE(item_keys(list.body()) == both);
  const std::string listed_at(
      json::parse(list.body()).at("metadata").at("resourceVersion").as_string());

  // While no watch is open: p flips out; q flips out, then is deleted; r flips in.
  auto p_out = label_pod(store(), "ns-1", p, "flip", "y");
  auto q_out = label_pod(store(), "ns-1", q, "flip", "y");
  REQUIRE(store().remove(sim::pods_resource, "ns-1", q).ok());
  auto r_in = label_pod(store(), "ns-1", r, "flip", "x");

  raw_client w(server->port());
  REQUIRE(w.open_watch("/api/v1/namespaces/ns-1/pods?watch=true&labelSelector=flip%3Dx"
                       "&resourceVersion=" +
                       listed_at) == 200);
  std::vector<std::string> seen;
  std::uint64_t last = std::stoull(listed_at);
  for (int i = 0; i < 3; ++i) {
    auto event = w.next_event();
    REQUIRE(event.is_object());
    INFO(json::serialize(event));
    const auto& meta = event.at("object").at("metadata");
    seen.push_back(std::string(event.at("type").as_string()) + " " +
                   std::string(meta.at("name").as_string()));
    auto rv = std::stoull(version_of(event));
    CHECK(rv > last); // resourceVersion order: resuming from any event misses nothing
    last = rv;
    if (event.at("type") == "DELETED") // the last state that matched, at the change's version
      CHECK(meta.at("labels").at("flip") == "x");
  }
  CHECK(seen == std::vector<std::string>{"DELETED " + p, "DELETED " + q, "ADDED " + r});
  CHECK(last == std::stoull(std::string(r_in.object->meta().resource_version)));

  // The live path decides the same way: r flips out while the watch is open.
  auto r_out = label_pod(store(), "ns-1", r, "flip", "z");
  auto event = w.next_event();
  REQUIRE(event.is_object());
  CHECK(event.at("type") == "DELETED");
  CHECK(event.at("object").at("metadata").at("labels").at("flip") == "x");
  CHECK(version_of(event) == r_out.object->meta().resource_version);
  (void)p_out;
  (void)q_out;
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: the simulator sends a stopped-matching DELETED the same way") {
  auto pods = truth(sim::pods_resource, "ns-2");
  REQUIRE_FALSE(pods.empty());
  const std::string p(split_object_key(*pods.begin()).name);
  label_pod(store(), "ns-2", p, "flip", "x");
  raw_client direct(sim.port());
  REQUIRE(direct.open_watch("/api/v1/namespaces/ns-2/pods?watch=true&labelSelector=flip%3Dx"
                            "&resourceVersion=0") == 200);
  auto added = direct.next_event();
  REQUIRE(added.is_object());
  CHECK(added.at("type") == "ADDED");
  auto out = label_pod(store(), "ns-2", p, "flip", "y");
  auto event = direct.next_event();
  REQUIRE(event.is_object());
  CHECK(event.at("type") == "DELETED");
  CHECK(event.at("object").at("metadata").at("labels").at("flip") == "x");
  CHECK(version_of(event) == out.object->meta().resource_version);
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: bookmarks carry the snapshot's version, also for an empty selection, "
                 "and keep coming") {
  raw_client c(server->port());
  auto list = c.request("/api/v1/pods");
  REQUIRE(list.result_int() == 200);
  const auto listed_at = std::stoull(
      std::string(json::parse(list.body()).at("metadata").at("resourceVersion").as_string()));

  raw_client w(server->port());
  REQUIRE(w.open_watch("/api/v1/pods?watch=true&labelSelector=nothing%3Dhere"
                       "&allowWatchBookmarks=true&sendInitialEvents=true"
                       "&resourceVersionMatch=NotOlderThan") == 200);
  auto end = w.next_event();
  REQUIRE(end.is_object());
  INFO(json::serialize(end));
  REQUIRE(end.at("type") == "BOOKMARK");
  CHECK(end.at("object").at("metadata").at("annotations").at("k8s.io/initial-events-end") ==
        "true");
  CHECK(std::stoull(version_of(end)) >= listed_at);

  // A change nobody in this selection sees, then a periodic bookmark at or past it.
  auto pods = truth(sim::pods_resource, "default");
  REQUIRE_FALSE(pods.empty());
  auto changed = label_pod(store(), "default", std::string(split_object_key(*pods.begin()).name),
                           "unseen", "1");
  const auto changed_at = std::stoull(std::string(changed.object->meta().resource_version));
  for (;;) {
    auto event = w.next_event();
    REQUIRE(event.is_object());
    REQUIRE(event.at("type") == "BOOKMARK");
    CHECK_FALSE(event.at("object").at("metadata").as_object().contains("annotations"));
    if (std::stoull(version_of(event)) >= changed_at)
      break; // the quiet watch can resume past the change
  }
}

TEST_CASE_METHOD(read_api_fixture, "read_api: timeoutSeconds=0 means the server's default") {
  raw_client c(server->port());
  auto list = c.request("/api/v1/namespaces/ns-1/pods");
  REQUIRE(list.result_int() == 200);
  std::string rv(json::parse(list.body()).at("metadata").at("resourceVersion").as_string());
  raw_client w(server->port());
  REQUIRE(w.open_watch("/api/v1/namespaces/ns-1/pods?watch=true&timeoutSeconds=0"
                       "&resourceVersion=" +
                       rv) == 200);
  auto pods = truth(sim::pods_resource, "ns-1");
  const std::string p(split_object_key(*pods.begin()).name);
  label_pod(store(), "ns-1", p, "still", "open");
  auto event = w.next_event(); // not the end of the stream
  REQUIRE(event.is_object());
  CHECK(event.at("type") == "MODIFIED");
  CHECK(event.at("object").at("metadata").at("name").as_string() == p);
}

namespace {

constexpr const char* metadata_list_accept =
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
constexpr const char* metadata_accept =
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
constexpr const char* table_accept = "application/json;as=Table;v=v1;g=meta.k8s.io,"
                                     "application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
                                     "application/json";

// Every item is PartialObjectMetadata: metadata, no spec or data. A BOOKMARK's object is one
// too, but its metadata holds only the resourceVersion (and annotations), no name.
void check_partial(const json::value& obj, bool named = true) {
  CHECK(obj.at("kind") == "PartialObjectMetadata");
  CHECK(obj.at("apiVersion") == "meta.k8s.io/v1");
  if (named)
    CHECK(obj.at("metadata").as_object().contains("name"));
  else
    CHECK(obj.at("metadata").as_object().contains("resourceVersion"));
  CHECK_FALSE(obj.as_object().contains("spec"));
  CHECK_FALSE(obj.as_object().contains("data"));
}

} // namespace

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: metadata-only clients list and watch PartialObjectMetadata") {
  raw_client c(server->port());
  c.accept = metadata_list_accept;
  auto list = c.request("/api/v1/namespaces/ns-1/pods");
  REQUIRE(list.result_int() == 200);
  auto body = json::parse(list.body());
  CHECK(body.at("kind") == "PartialObjectMetadataList");
  CHECK(body.at("apiVersion") == "meta.k8s.io/v1");
  for (const auto& item : body.at("items").as_array())
    check_partial(item);
  CHECK(item_keys(list.body()) == truth(sim::pods_resource, "ns-1"));
  std::string rv(body.at("metadata").at("resourceVersion").as_string());

  raw_client w(server->port());
  w.accept = metadata_accept;
  REQUIRE(w.open_watch("/api/v1/namespaces/ns-1/pods?watch=true&allowWatchBookmarks=true"
                       "&resourceVersion=" +
                       rv) == 200);
  auto pods = truth(sim::pods_resource, "ns-1");
  const std::string p(split_object_key(*pods.begin()).name);
  label_pod(store(), "ns-1", p, "seen", "by-metadata");
  for (;;) {
    auto event = w.next_event();
    REQUIRE(event.is_object());
    // Bookmarks included: the client decodes nothing else. One may come first, every 200 ms
    // (a slow machine, TSan, saw one before the change).
    const bool bookmark = event.at("type") == "BOOKMARK";
    check_partial(event.at("object"), !bookmark);
    if (bookmark)
      continue;
    CHECK(event.at("type") == "MODIFIED");
    CHECK(event.at("object").at("metadata").at("labels").at("seen") == "by-metadata");
    break;
  }

  // One object, and the item form asked of a list.
  c.accept = metadata_accept;
  auto one = c.request("/api/v1/namespaces/ns-1/pods/" + p);
  REQUIRE(one.result_int() == 200);
  check_partial(json::parse(one.body()));
}

TEST_CASE_METHOD(read_api_fixture, "read_api: kubectl's Table, and 406 for what cannot be served") {
  raw_client c(server->port());
  c.accept = table_accept;
  auto table = c.request("/api/v1/namespaces/ns-2/pods?limit=4");
  REQUIRE(table.result_int() == 200);
  auto body = json::parse(table.body());
  CHECK(body.at("kind") == "Table");
  // Pods are cached whole: the API server's pod columns, READY to READINESS GATES.
  const auto& columns = body.at("columnDefinitions").as_array();
  REQUIRE(columns.size() == 9);
  CHECK(columns[1].at("name") == "Ready");
  CHECK(columns[2].at("name") == "Status");
  CHECK(columns[6].at("priority") == 1);
  CHECK(body.at("rows").as_array().size() == 4);
  CHECK_FALSE(body.at("metadata").at("continue").as_string().empty());
  for (const auto& row : body.at("rows").as_array()) {
    check_partial(row.at("object"));
    const auto& meta = row.at("object").at("metadata");
    auto stored = store().get(sim::pods_resource, std::string(meta.at("namespace").as_string()),
                              std::string(meta.at("name").as_string()));
    REQUIRE(stored.ok());
    const auto pod = stored->object->tree();
    const auto& cells = row.at("cells").as_array();
    REQUIRE(cells.size() == 9);
    CHECK(cells[0] == meta.at("name"));
    CHECK(cells[2] == pod.at("status").at("phase")); // running containers: the phase
    CHECK(cells[6] == pod.at("spec").at("nodeName"));
  }

  c.accept = "application/yaml";
  auto refused = c.request("/api/v1/pods");
  CHECK(refused.result_int() == 406);
  CHECK(reason_of(refused.body()) == "NotAcceptable");
  c.accept = "application/json;as=Scale;g=autoscaling;v=v1";
  CHECK(c.request("/api/v1/namespaces/ns-1/pods").result_int() == 406);
  c.accept = table_accept;
  CHECK(c.request("/api/v1/pods?includeObject=Everything").result_int() == 400);
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: a kind cached metadata-only is never served whole, nor fetched") {
  raw_client c(server->port());
  auto whole = c.request("/api/v1/namespaces/default/configmaps");
  INFO(whole.body());
  CHECK(whole.result_int() == 406);
  CHECK(whole.body().find("do-not-serve") == std::string::npos);
  CHECK(json::parse(whole.body()).at("message").as_string().find("metadata only") !=
        json::string::npos);
  CHECK(c.request("/api/v1/namespaces/default/configmaps/cm-1").result_int() == 406);
  CHECK(c.request("/api/v1/namespaces/default/configmaps?watch=1").result_int() == 406);
  c.accept = table_accept;
  CHECK(c.request("/api/v1/configmaps?includeObject=Object").result_int() == 406);

  c.accept = metadata_list_accept;
  auto partial = c.request("/api/v1/namespaces/default/configmaps");
  REQUIRE(partial.result_int() == 200);
  CHECK(partial.body().find("do-not-serve") == std::string::npos);
  CHECK(item_keys(partial.body()) ==
        std::set<std::string>{"default/cm-0", "default/cm-1", "default/cm-2"});
  c.accept = table_accept;
  auto table = c.request("/api/v1/configmaps");
  REQUIRE(table.result_int() == 200);
  CHECK(table.body().find("do-not-serve") == std::string::npos);

  // Only the metadata-only informer was ever started for configmaps.
  caf::scoped_actor self{*system};
  self->request(cache, caf::infinite, atoms::stats_atom::value)
      .receive(
          [&](const cache_stats& stats) {
            int configmaps = 0;
            for (const auto& informer : stats.informers)
              if (informer.kind.find("onfigMap") != std::string::npos ||
                  informer.kind.find("configmaps") != std::string::npos) {
                ++configmaps;
                CHECK(informer.kind.find("metadata") != std::string::npos);
              }
            CHECK(configmaps == 1);
          },
          [&](caf::error& err) { FAIL(system->render(err)); });
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: kubectl prints the server's Table, even metadata-only") {
  REQUIRE_KUBECTL();
  auto pods = kubectl_ok({"get", "pods", "-n", "ns-1"});
  INFO(pods);
  CHECK(pods.starts_with("NAME"));
  for (const auto* column : {"READY", "STATUS", "RESTARTS", "AGE"})
    CHECK(pods.find(column) != std::string::npos);
  CHECK(pods.find("NODE") == std::string::npos); // a priority-1 column: -o wide only
  for (const auto& key : truth(sim::pods_resource, "ns-1"))
    CHECK(pods.find(std::string(split_object_key(key).name)) != std::string::npos);
  auto wide = kubectl_ok({"get", "pods", "-n", "ns-1", "-o", "wide"});
  CHECK(wide.find("NOMINATED NODE") != std::string::npos);
  // Configmaps are cached metadata-only: the default columns.
  auto configmaps = kubectl_ok({"get", "configmaps", "-n", "default"});
  CHECK(configmaps.find("CREATED AT") != std::string::npos);
  CHECK(configmaps.find("cm-2") != std::string::npos);
  auto whole = kubectl({"get", "configmaps", "-n", "default", "-o", "json"});
  CHECK(whole.exit_code != 0);
  CHECK(whole.out.find("do-not-serve") == std::string::npos);
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: past the open-watch bound a watch is 429 with Retry-After, requests "
                 "are counted by verb and code") {
  read_api_options options;
  options.resources.push_back(*store().find_resource(sim::pods_resource));
  options.max_watches = 1;
  options.retry_after_seconds = 3;
  read_api bounded(*system, cache, options);
  apiserver::http_server bounded_server;
  bounded.attach(bounded_server);
  REQUIRE(bounded_server.start().ok());

  raw_client c(bounded_server.port());
  auto list = c.request("/api/v1/namespaces/ns-1/pods");
  REQUIRE(list.result_int() == 200);
  std::string rv(json::parse(list.body()).at("metadata").at("resourceVersion").as_string());
  raw_client first(bounded_server.port());
  REQUIRE(first.open_watch("/api/v1/pods?watch=1&resourceVersion=" + rv) == 200);
  // The first watch is open (its head arrived): the second is refused.
  auto refused = c.request("/api/v1/pods?watch=1&resourceVersion=" + rv);
  CHECK(refused.result_int() == 429);
  CHECK(refused[http::field::retry_after] == "3");
  CHECK(reason_of(refused.body()) == "TooManyRequests");
  CHECK(c.request("/api/v1/namespaces/ns-1/pods/nope").result_int() == 404);

  auto stats = bounded.stats();
  CHECK(stats.open_watches == 1);
  CHECK(stats.requests[{"list", 200}] == 1);
  CHECK(stats.requests[{"watch", 200}] == 1);
  CHECK(stats.requests[{"watch", 429}] == 1);
  CHECK(stats.requests[{"get", 404}] == 1);
  bounded_server.stop();
}

TEST_CASE_METHOD(
    read_api_fixture,
    "read_api: past the unpaged-list bound a list without a limit is 429, and the slot "
    "is freed with the answer") {
  read_api_options options;
  options.resources.push_back(*store().find_resource(sim::deployments_resource));
  options.max_unpaged_lists = 1;
  options.cache_timeout = std::chrono::milliseconds(1500);
  read_api bounded(*system, cache, options);
  apiserver::http_server bounded_server;
  bounded.attach(bounded_server);
  REQUIRE(bounded_server.start().ok());
  // Deployments never list: the informer never syncs, and each list waits for it until the
  // cache_timeout (504), holding its slot.
  store().fail_next_lists(1000000, 500);

  auto first = std::async(std::launch::async, [&] {
    raw_client a(bounded_server.port());
    return a.request("/apis/apps/v1/deployments").result_int();
  });
  bool holding = false;
  for (int i = 0; i < 300 && !holding; ++i) {
    holding = bounded.stats().unpaged_lists == 1;
    if (!holding)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(holding);
  raw_client c(bounded_server.port());
  auto refused = c.request("/apis/apps/v1/deployments");
  CHECK(refused.result_int() == 429);
  CHECK(reason_of(refused.body()) == "TooManyRequests");
  CHECK(!refused[http::field::retry_after].empty());

  CHECK(first.get() == 504);
  CHECK(bounded.stats().unpaged_lists == 0);
  // The slot is free again: the next list waits for the cache instead of being refused.
  CHECK(c.request("/apis/apps/v1/deployments").result_int() == 504);
  bounded_server.stop();
}

namespace {

// The read API of `f`'s cache behind TokenReview and SubjectAccessReview, answered by a second
// simulator with alice (list and watch pods in ns-1) and bob (group readers: everything).
struct guarded_api {
  sim::simulator reviewer{reviews()};
  std::shared_ptr<api_client> client;
  std::shared_ptr<api_access> access;
  std::unique_ptr<read_api> api;
  apiserver::http_server server;

  guarded_api(read_api_fixture& f, access_options options = {}) {
    REQUIRE(reviewer.start().ok());
    auto created = api_client::create(*from_server_url(reviewer.url()));
    REQUIRE(created.ok());
    client = std::move(created).value();
    access = std::make_shared<api_access>(client, options);
    read_api_options api_options;
    api_options.resources.push_back(*f.store().find_resource(sim::pods_resource));
    api_options.access = access;
    api = std::make_unique<read_api>(*f.system, f.cache, api_options);
    api->attach(server);
    REQUIRE(server.start().ok());
  }
  ~guarded_api() { server.stop(); }

  static sim::simulator_options reviews() {
    sim::simulator_options o;
    o.review_users = {{"alice-token", "alice", "u-1", {"team-a"}},
                      {"bob-token", "bob", "u-2", {"readers"}}};
    o.review_grants = {{"alice", {"list", "watch"}, {"pods"}, "ns-1"},
                       {"group:readers", {"*"}, {"*"}, ""}};
    return o;
  }
};

} // namespace

TEST_CASE_METHOD(
    read_api_fixture,
    "read_api: TokenReview authenticates, SubjectAccessReview authorises, both cached") {
  guarded_api guarded(*this);
  raw_client c(guarded.server.port());
  auto anonymous = c.request("/api/v1/namespaces/ns-1/pods");
  CHECK(anonymous.result_int() == 401);
  CHECK(reason_of(anonymous.body()) == "Unauthorized");
  CHECK(c.request("/api/v1/namespaces/ns-1/pods", http::verb::get, "stolen").result_int() == 401);
  CHECK(c.request("/api", http::verb::get).result_int() == 401); // discovery needs a user too

  // alice may list and watch pods in ns-1, nothing else.
  for (int i = 0; i < 3; ++i) {
    auto mine = c.request("/api/v1/namespaces/ns-1/pods", http::verb::get, "alice-token");
    REQUIRE(mine.result_int() == 200);
    CHECK(item_keys(mine.body()) == truth(sim::pods_resource, "ns-1"));
  }
  auto everywhere = c.request("/api/v1/pods", http::verb::get, "alice-token");
  CHECK(everywhere.result_int() == 403);
  CHECK(reason_of(everywhere.body()) == "Forbidden");
  CHECK(json::parse(everywhere.body()).at("message").as_string() ==
        "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" at "
        "the cluster scope");
  auto pods = truth(sim::pods_resource, "ns-1");
  const std::string one(split_object_key(*pods.begin()).name);
  CHECK(c.request("/api/v1/namespaces/ns-1/pods/" + one, http::verb::get, "alice-token")
            .result_int() == 403); // get was not granted
  CHECK(c.request("/api/v1/namespaces/ns-2/pods?watch=1", http::verb::get, "alice-token")
            .result_int() == 403);
  CHECK(c.request("/api/v1", http::verb::get, "alice-token").result_int() == 200);

  // bob reads everything through his group.
  CHECK(c.request("/api/v1/pods", http::verb::get, "bob-token").result_int() == 200);
  CHECK(
      c.request("/api/v1/namespaces/ns-1/pods/" + one, http::verb::get, "bob-token").result_int() ==
      200);

  // One TokenReview per token; one SubjectAccessReview per distinct request, however repeated.
  CHECK(guarded.access->token_reviews() == 3); // stolen, alice, bob
  CHECK(guarded.access->access_reviews() == 6);
}

TEST_CASE_METHOD(read_api_fixture,
                 "read_api: anonymous access only when configured, no reviewer is a 503") {
  access_options anonymous;
  anonymous.anonymous = true;
  guarded_api open(*this, anonymous);
  raw_client c(open.server.port());
  CHECK(c.request("/api/v1/namespaces/ns-1/pods").result_int() == 200);
  CHECK(c.request("/api/v1/pods", http::verb::get, "stolen").result_int() == 401);

  guarded_api unreachable(*this);
  unreachable.reviewer.stop(); // the API server cannot be asked
  raw_client d(unreachable.server.port());
  auto refused = d.request("/api/v1/pods", http::verb::get, "alice-token");
  CHECK(refused.result_int() == 503);
  CHECK(reason_of(refused.body()) == "ServiceUnavailable");
}
