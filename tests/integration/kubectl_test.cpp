// Real kubectl against the simulator: discovery, tables, label selectors, paging, watch, apply,
// delete, raw paths and custom resources, with -o json compared against the storage's truth.
// Fails when kubectl is not on PATH (deploy/install-deps.sh installs it).

#include "app/kubesim/churn.hpp"
#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"

#include "tests/support/command_run.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace kinformer;
using namespace kinformer::sim;

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

using kinformer::testing::command_result; // tests/support/command_run.hpp

// A simulator (HTTPS, bearer token) with pods and widgets, and a kubeconfig in a temporary HOME
// pointing at it.
class kubectl_fixture {
public:
  static constexpr const char* token = "kubectl-test-token";

  kubectl_fixture() : sim_(options()) {
    char pattern[] = "/tmp/kubectl-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    home_ = pattern;
    register_example_resources(sim_.store());
    object_generator generator;
    REQUIRE(load_pods(sim_.store(), generator, 60, 3).ok());
    for (int i = 0; i < 4; ++i)
      REQUIRE(
          sim_.store().create_value(widgets_resource, "default", generator.widget("default")).ok());
    REQUIRE(
        sim_.store().create_value(cluster_widgets_resource, "", generator.cluster_widget()).ok());
    auto started = sim_.start();
    INFO((started ? std::string() : started.err().describe()));
    REQUIRE(started.ok());
    std::ofstream(home_ / "ca.crt") << sim_.ca_pem();
    std::ofstream config(home_ / "config");
    config << "apiVersion: v1\nkind: Config\n"
           << "clusters:\n- name: sim\n  cluster:\n    server: " << sim_.url() << "\n"
           << "    certificate-authority: " << (home_ / "ca.crt").string() << "\n"
           << "users:\n- name: sim\n  user:\n    token: " << token << "\n"
           << "contexts:\n- name: sim\n  context:\n    cluster: sim\n    user: sim\n"
           << "    namespace: default\n"
           << "current-context: sim\n";
  }

  ~kubectl_fixture() {
    sim_.stop();
    std::error_code ignored;
    fs::remove_all(home_, ignored);
  }

  storage& store() { return sim_.store(); }
  const fs::path& home() const { return home_; }

  std::vector<std::string> kubectl_argv(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"timeout", "20", "kubectl",
                                  "--kubeconfig=" + (home_ / "config").string(),
                                  "--cache-dir=" + (home_ / "cache").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  // Runs kubectl to completion (killed by `timeout` after 20 s), capturing both streams.
  command_result kubectl(const std::vector<std::string>& args) const {
    return kinformer::testing::run_command(kubectl_argv(args), "HOME='" + home_.string() + "'",
                                           home_);
  }

  // Runs kubectl and requires success; returns its stdout.
  std::string kubectl_ok(const std::vector<std::string>& args) const {
    return kinformer::testing::run_command_ok(kubectl_argv(args), "HOME='" + home_.string() + "'",
                                              home_);
  }

private:
  // TLS, because kubectl sends no bearer token over plain HTTP.
  static simulator_options options() {
    simulator_options o;
    o.tls = true;
    o.token = token;
    return o;
  }

  simulator sim_;
  fs::path home_;
};

// A long-running kubectl whose stdout we read line by line, then kill.
class kubectl_stream {
public:
  kubectl_stream(const kubectl_fixture& fixture, const std::vector<std::string>& args) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO,
                                     (fixture.home() / "watch-stderr").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);

    std::vector<std::string> argv_strings = fixture.kubectl_argv(args);
    std::vector<char*> argv;
    for (auto& a : argv_strings)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string home = "HOME=" + fixture.home().string();
    std::vector<char*> env{home.data()};
    for (char** e = environ; *e; ++e)
      if (std::string_view(*e).substr(0, 5) != "HOME=")
        env.push_back(*e);
    env.push_back(nullptr);

    int spawned = ::posix_spawnp(&pid_, "timeout", &actions, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    REQUIRE(spawned == 0);
    out_ = ::fdopen(fds[0], "r");
    REQUIRE(out_ != nullptr);
  }

  ~kubectl_stream() {
    ::kill(pid_, SIGTERM); // `timeout` passes it on to kubectl
    int status = 0;
    ::waitpid(pid_, &status, 0);
    std::fclose(out_);
  }

  // The next line, without its newline; empty at end of stream (kubectl exited or timed out).
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
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
};

std::set<std::string> truth_keys(storage& store, const group_version_resource& gvr) {
  std::set<std::string> keys;
  for (const auto& entry : store.truth(gvr))
    keys.insert(entry.key);
  return keys;
}

// "namespace/name" (or "name") of every item of a kubectl -o json List.
std::map<std::string, std::string> listed_versions(const std::string& kubectl_json) {
  std::map<std::string, std::string> out;
  auto list = json::parse(kubectl_json);
  for (const auto& item : list.at("items").as_array()) {
    const auto& meta = item.at("metadata").as_object();
    std::string name(meta.at("name").as_string());
    auto* ns = meta.if_contains("namespace");
    std::string key = ns ? make_object_key(std::string(ns->as_string()), name) : name;
    out[key] = std::string(meta.at("resourceVersion").as_string());
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      out.push_back(line);
  return out;
}

} // namespace

// Without kubectl a test fails and says so: it never passes without checking.
#define REQUIRE_KUBECTL()                                                                          \
  do {                                                                                             \
    if (!kubectl_on_path())                                                                        \
      FAIL("kubectl is not on PATH: deploy/install-deps.sh installs it");                          \
  } while (false)

TEST_CASE_METHOD(kubectl_fixture,
                 "kubectl: get pods -A -o json matches the truth, and the table lists every pod") {
  REQUIRE_KUBECTL();
  auto versions = listed_versions(kubectl_ok({"get", "pods", "-A", "-o", "json"}));
  std::map<std::string, std::string> truth;
  for (const auto& entry : store().truth(pods_resource))
    truth[entry.key] = std::to_string(entry.resource_version);
  CHECK(versions == truth);
  CHECK(versions.size() == 60);

  auto table = lines_of(kubectl_ok({"get", "pods", "-A"}));
  REQUIRE(table.size() == 61); // a header and one row per pod
  CHECK(table[0].find("NAMESPACE") != std::string::npos);
  CHECK(table[0].find("NAME") != std::string::npos);
}

TEST_CASE_METHOD(kubectl_fixture,
                 "kubectl: get pods -l selects by label, in the context's namespace") {
  REQUIRE_KUBECTL();
  auto some = store().get(pods_resource, "default",
                          split_object_key(store().truth(pods_resource)[0].key).name);
  // truth is sorted by key: the first entry is in "default", which sorts before "ns-1"
  REQUIRE(some.ok());
  std::string app(*some->object->meta().label("app"));
  list_request request;
  request.gvr = pods_resource;
  request.namespace_ = "default";
  request.labels = *label_selector::parse("app=" + app);
  auto expected = store().list(request);
  REQUIRE(expected.ok());
  std::set<std::string> expected_names;
  for (const auto& item : expected->items)
    expected_names.insert("pod/" + std::string(item.object->meta().name));

  auto names = lines_of(kubectl_ok({"get", "pods", "-l", "app=" + app, "-o", "name"}));
  CHECK(std::set<std::string>(names.begin(), names.end()) == expected_names);
  CHECK_FALSE(expected_names.empty());
}

TEST_CASE_METHOD(kubectl_fixture, "kubectl: get pods --chunk-size pages through continue tokens") {
  REQUIRE_KUBECTL();
  auto r = kubectl({"get", "pods", "-A", "--chunk-size=10", "-o", "name", "-v=6"});
  INFO(r.err.substr(0, 3000));
  REQUIRE(r.exit_code == 0);
  auto names = lines_of(r.out);
  CHECK(names.size() == 60);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == 60);
  // -v=6 logs every request: six pages, five of them continuing.
  std::size_t continued = 0;
  for (std::size_t at = 0; (at = r.err.find("continue=", at)) != std::string::npos; ++at)
    ++continued;
  CHECK(continued >= 5);
}

TEST_CASE_METHOD(kubectl_fixture, "kubectl: get pods -w receives churn as it happens") {
  REQUIRE_KUBECTL();
  churn_options options;
  options.rate = 200;
  options.namespaces = 1; // every write in "default", the namespace kubectl watches
  options.label_weight = 0;
  options.spec_weight = 0;
  churn writes(store(), options);
  kubectl_stream watch(*this, {"get", "pods", "--watch-only", "-o", "name"});
  writes.start();
  for (int i = 0; i < 3; ++i) {
    auto line = watch.next_line();
    INFO("line " << i << ": \"" << line << "\"");
    CHECK(line.starts_with("pod/"));
  }
  writes.stop();
  CHECK(writes.stats().writes() > 0);
}

TEST_CASE_METHOD(kubectl_fixture, "kubectl: apply creates then patches, delete removes") {
  REQUIRE_KUBECTL();
  const group_version_resource configmaps = config_maps_resource;
  auto manifest = [&](std::string_view color) {
    std::ofstream out(home() / "cm.yaml", std::ios::trunc);
    out << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  namespace: default\n"
        << "  labels:\n    app: demo\ndata:\n  color: " << color << "\n";
  };
  std::string file = (home() / "cm.yaml").string();
  // Plain apply: kubectl reads /openapi/v3, finds that the server validates fields itself,
  // then does GET, then POST or PATCH with fieldValidation=Strict.

  manifest("blue");
  CHECK(kubectl_ok({"apply", "-f", file}).find("configmap/demo created") != std::string::npos);
  auto created = store().get(configmaps, "default", "demo");
  REQUIRE(created.ok());
  CHECK(created->object->tree().at("data").at("color") == "blue");
  CHECK(created->object->meta()
            .annotation("kubectl.kubernetes.io/last-applied-configuration")
            .has_value());

  manifest("green");
  CHECK(kubectl_ok({"apply", "-f", file}).find("configmap/demo configured") != std::string::npos);
  auto patched = store().get(configmaps, "default", "demo");
  REQUIRE(patched.ok());
  CHECK(patched->object->tree().at("data").at("color") == "green");
  CHECK(patched->object->meta().uid == created->object->meta().uid);

  CHECK(kubectl_ok({"delete", "configmap", "demo"}).find("deleted") != std::string::npos);
  CHECK(store().get(configmaps, "default", "demo").failure().code == 404);

  auto missing = kubectl({"delete", "configmap", "demo"});
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("NotFound") != std::string::npos);
}

TEST_CASE_METHOD(kubectl_fixture, "kubectl: apply --server-side creates, conflicts with another "
                                  "manager's change, and --force-conflicts takes it over") {
  REQUIRE_KUBECTL();
  const group_version_resource configmaps = config_maps_resource;
  {
    std::ofstream out(home() / "ssa.yaml", std::ios::trunc);
    out << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: default\n"
        << "data:\n  color: blue\n";
  }
  std::string file = (home() / "ssa.yaml").string();
  CHECK(kubectl_ok({"apply", "--server-side", "-f", file}).find("serverside-applied") !=
        std::string::npos);
  auto applied = store().get(configmaps, "default", "ssa");
  REQUIRE(applied.ok());
  CHECK(applied->object->tree().at("metadata").at("managedFields").at(0).at("operation") ==
        "Apply");

  kubectl_ok({"patch", "configmap", "ssa", "--type=merge", "-p", R"({"data":{"color":"red"}})",
              "--field-manager=hand-edit"});
  auto refused = kubectl({"apply", "--server-side", "-f", file});
  CHECK(refused.exit_code != 0);
  CHECK(refused.err.find("conflict with \"hand-edit\"") != std::string::npos);
  CHECK(refused.err.find(".data.color") != std::string::npos);
  CHECK(store().get(configmaps, "default", "ssa")->object->tree().at("data").at("color") == "red");

  kubectl_ok({"apply", "--server-side", "--force-conflicts", "-f", file});
  CHECK(store().get(configmaps, "default", "ssa")->object->tree().at("data").at("color") == "blue");
}

TEST_CASE_METHOD(kubectl_fixture, "kubectl: apply and delete --dry-run=server change nothing") {
  REQUIRE_KUBECTL();
  std::string file = (home() / "dry.yaml").string();
  std::ofstream(file) << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\n"
                      << "  namespace: default\ndata:\n  color: red\n";
  const auto rv = store().current_resource_version();
  CHECK(kubectl_ok({"apply", "--dry-run=server", "-f", file}).find("(server dry run)") !=
        std::string::npos);
  CHECK(store().get(config_maps_resource, "default", "dry").failure().code == 404);

  std::string key = store().truth(pods_resource)[0].key;
  std::string name(split_object_key(key).name);
  CHECK(kubectl_ok({"delete", "pod", name, "--dry-run=server"}).find("(server dry run)") !=
        std::string::npos);
  CHECK(truth_keys(store(), pods_resource).count(key) == 1);
  CHECK(store().current_resource_version() == rv);
}

TEST_CASE_METHOD(kubectl_fixture,
                 "kubectl: delete pod waits for the pod to go, as against a real server") {
  REQUIRE_KUBECTL();
  std::string key = store().truth(pods_resource)[0].key;
  std::string name(split_object_key(key).name);
  CHECK(kubectl_ok({"delete", "pod", name}).find("pod \"" + name + "\" deleted") !=
        std::string::npos);
  CHECK(truth_keys(store(), pods_resource).count(key) == 0);
}

TEST_CASE_METHOD(kubectl_fixture, "kubectl: get --raw serves discovery") {
  REQUIRE_KUBECTL();
  auto doc = json::parse(kubectl_ok({"get", "--raw", "/api/v1"}));
  CHECK(doc.at("kind") == "APIResourceList");
  std::set<std::string> names;
  for (const auto& r : doc.at("resources").as_array())
    names.insert(std::string(r.at("name").as_string()));
  CHECK(names.count("pods") == 1);
  CHECK(names.count("configmaps") == 1);
}

TEST_CASE_METHOD(kubectl_fixture, "kubectl: custom resources: get widgets and clusterwidgets") {
  REQUIRE_KUBECTL();
  auto widgets = listed_versions(kubectl_ok({"get", "widgets", "-o", "json"}));
  std::set<std::string> widget_keys;
  for (const auto& [key, rv] : widgets)
    widget_keys.insert(key);
  CHECK(widget_keys == truth_keys(store(), widgets_resource));
  CHECK(widgets.size() == 4);

  auto cluster = listed_versions(kubectl_ok({"get", "clusterwidgets", "-o", "json"}));
  REQUIRE(cluster.size() == 1);
  CHECK(cluster.begin()->first.find('/') == std::string::npos); // cluster-scoped

  auto table = lines_of(kubectl_ok({"get", "widgets.example.com"}));
  CHECK(table.size() == 5);
}

TEST_CASE_METHOD(kubectl_fixture, "kubectl: a wrong token is refused") {
  REQUIRE_KUBECTL();
  std::ofstream(home() / "bad-config")
      << "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: "
      << json::parse(kubectl_ok({"config", "view", "-o", "json"}))
             .at("clusters")
             .at(0)
             .at("cluster")
             .at("server")
             .as_string()
             .c_str()
      << "\n    certificate-authority: " << (home() / "ca.crt").string()
      << "\nusers:\n- name: sim\n  user:\n    token: wrong\ncontexts:\n- name: sim\n"
      << "  context:\n    cluster: sim\n    user: sim\ncurrent-context: sim\n";
  auto r = kubectl({"--kubeconfig=" + (home() / "bad-config").string(), "get", "pods"});
  CHECK(r.exit_code != 0);
  CHECK((r.err.find("Unauthorized") != std::string::npos ||
         r.err.find("provide credentials") != std::string::npos));
}
