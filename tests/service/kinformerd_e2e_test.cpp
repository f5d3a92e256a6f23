// End to end: the kinformerd program against its embedded simulator, as a child process.
//
// Each test starts kinformerd with a small simulated cluster (no churn, so object counts are
// exact), learns its addresses from its logfmt lines on stderr, and then talks to it the way
// users do: Prometheus scrapes /metrics, probes hit /healthz and /readyz, kubectl reads through
// the read API, kinformer-subscribe subscribes remotely, SIGTERM stops it, and a bad config
// file is refused with exit status 2.

#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/self_signed_cert.hpp"
#include "app/kubesim/simulator.hpp"
#include "tests/support/child_process.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <vector>

namespace json = boost::json;
namespace net = boost::asio;
namespace http = boost::beast::http;
namespace fs = std::filesystem;
using kinformer::testing::child_process;
using net::ip::tcp;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

constexpr std::size_t simulated_pods = 300;

// A temporary directory, removed with everything in it.
class temp_dir {
public:
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "kinformerd-e2e-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }

  std::string write(const std::string& name, const std::string& content) const {
    auto file = path_ / name;
    std::ofstream(file) << content;
    return file.string();
  }

private:
  fs::path path_;
};

// The configuration every test shares: a small simulated cluster without churn, and remote
// subscriptions in plaintext guarded by a shared secret.
std::string config_yaml(const std::string& secret_file) {
  return "simulate:\n"
         "  pods: " +
         std::to_string(simulated_pods) +
         "\n"
         "  namespaces: 3\n"
         "  churn_rate: 0\n"
         "informers:\n"
         "  - resource: pods\n"
         "remote:\n"
         "  port: 0\n"
         "  host: 127.0.0.1\n"
         "  plaintext: true\n"
         "  shared_secret_file: " +
         secret_file + "\n";
}

// The value of `key=` in the first stderr line holding `event`.
std::string logged_value(const std::string& log, const std::string& event, const std::string& key) {
  auto at = log.find("event=" + event + " ");
  REQUIRE(at != std::string::npos);
  auto line_end = log.find('\n', at);
  std::string line = log.substr(at, line_end == std::string::npos ? line_end : line_end - at);
  auto field = line.find(" " + key + "=");
  INFO(line);
  REQUIRE(field != std::string::npos);
  auto start = field + key.size() + 2;
  return line.substr(start, line.find(' ', start) - start);
}

struct http_reply {
  int status = 0;
  std::string body;
};

http_reply http_get(const std::string& address, const std::string& target) {
  auto colon = address.rfind(':');
  REQUIRE(colon != std::string::npos);
  net::io_context ioc;
  tcp::socket socket(ioc);
  boost::system::error_code ec;
  socket.connect({net::ip::make_address(address.substr(0, colon)),
                  static_cast<unsigned short>(std::stoi(address.substr(colon + 1)))},
                 ec);
  INFO("GET " << address << target << ": " << ec.message());
  REQUIRE_FALSE(ec);
  // A hung server fails the test instead of hanging it.
  timeval tv{10, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, address);
  http::write(socket, req, ec);
  REQUIRE_FALSE(ec);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  http::read(socket, buffer, parser, ec);
  REQUIRE_FALSE(ec);
  return {static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
}

// kinformerd as a child process, with the addresses it logged once started.
class kinformerd {
public:
  explicit kinformerd(const std::vector<std::string>& extra) : process_(arguments(extra)) {
    bool started = process_.wait_stderr_contains("event=started", 20s);
    std::string log = process_.stderr_text();
    INFO("kinformerd stderr:\n" << log);
    REQUIRE(started);
    metrics_ = logged_value(log, "metrics_listening", "address");
    api_ = logged_value(log, "api_listening", "address");
    if (log.find("event=remote_listening") != std::string::npos)
      remote_port_ = logged_value(log, "remote_listening", "port");
  }

  const std::string& metrics_address() const { return metrics_; }
  const std::string& api_address() const { return api_; }
  const std::string& remote_port() const { return remote_port_; }
  child_process& process() { return process_; }

  // Polls /readyz until it answers 200 and returns that answer. Every answer before must be
  // a 503 that says why it is not ready.
  http_reply wait_ready() {
    auto deadline = steady::now() + 20s;
    for (;;) {
      auto reply = http_get(metrics_, "/readyz");
      if (reply.status == 200)
        return reply;
      INFO("/readyz: " << reply.status << " " << reply.body);
      REQUIRE(reply.status == 503);
      REQUIRE(reply.body.find("not ready") != std::string::npos);
      REQUIRE(steady::now() < deadline);
      std::this_thread::sleep_for(5ms); // the poll interval; /readyz offers no notification
    }
  }

private:
  static std::vector<std::string> arguments(const std::vector<std::string>& extra) {
    std::vector<std::string> argv{KINFORMERD_PATH, "--simulate",   "--listen-metrics",
                                  "127.0.0.1:0",   "--listen-api", "127.0.0.1:0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  child_process process_;
  std::string metrics_, api_, remote_port_;
};

// One Prometheus text-format sample.
struct sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses the text exposition format; every line that is neither a comment nor blank must be
// `name{labels} value` or `name value`.
std::vector<sample> parse_metrics(const std::string& text) {
  std::vector<sample> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    INFO("metrics line: " << line);
    sample s;
    std::size_t at = line.find_first_of("{ ");
    REQUIRE(at != std::string::npos);
    s.name = line.substr(0, at);
    REQUIRE(!s.name.empty());
    if (line[at] == '{') {
      ++at;
      while (line.at(at) != '}') {
        auto eq = line.find("=\"", at);
        REQUIRE(eq != std::string::npos);
        std::string name = line.substr(at, eq - at);
        std::string value;
        std::size_t i = eq + 2;
        for (; i < line.size() && line[i] != '"'; ++i)
          value.push_back(line[i] == '\\' && i + 1 < line.size() ? line[++i] : line[i]);
        REQUIRE(i < line.size());
        s.labels.emplace(std::move(name), std::move(value));
        at = i + 1;
        if (line.at(at) == ',')
          ++at;
      }
      ++at;
    }
    REQUIRE(at < line.size());
    REQUIRE(line[at] == ' ');
    std::string value = line.substr(at + 1);
    char* end = nullptr;
    s.value = std::strtod(value.c_str(), &end);
    REQUIRE(end != value.c_str());
    REQUIRE(*end == '\0');
    out.push_back(std::move(s));
  }
  return out;
}

struct kubectl_run {
  int code = -1;
  std::string out, err;
};

// Runs kubectl with `connection` (--server and its credentials) to completion.
kubectl_run run_kubectl(const std::vector<std::string>& connection,
                        const std::vector<std::string>& args) {
  std::vector<std::string> argv{KUBECTL_PATH};
  argv.insert(argv.end(), connection.begin(), connection.end());
  argv.insert(argv.end(), args.begin(), args.end());
  child_process kubectl(argv);
  auto out = kubectl.all_stdout(20s);
  auto code = kubectl.wait_exit(20s);
  REQUIRE(out);
  REQUIRE(code);
  return {*code, *out, kubectl.stderr_text()};
}

// Runs kubectl against the read API and returns its parsed JSON output.
json::value kubectl_json(const std::vector<std::string>& connection,
                         const std::vector<std::string>& args) {
  auto run = run_kubectl(connection, args);
  INFO("kubectl stderr: " << run.err);
  REQUIRE(run.code == 0);
  boost::system::error_code ec;
  auto value = json::parse(run.out, ec);
  INFO("kubectl stdout: " << run.out.substr(0, 500));
  REQUIRE_FALSE(ec);
  return value;
}

json::value kubectl_json(const std::string& api, const std::vector<std::string>& args) {
  return kubectl_json(std::vector<std::string>{"--server=http://" + api}, args);
}

// The value of the sample `name` whose labels include `labels`; 0 when there is none.
double sample_value(const std::vector<sample>& samples, const std::string& name,
                    const std::map<std::string, std::string>& labels = {}) {
  for (const auto& s : samples) {
    if (s.name != name)
      continue;
    bool all = true;
    for (const auto& [key, value] : labels) {
      auto it = s.labels.find(key);
      all = all && it != s.labels.end() && it->second == value;
    }
    if (all)
      return s.value;
  }
  return 0;
}

std::string text_at(const json::value& v, std::initializer_list<const char*> path) {
  const json::value* at = &v;
  for (const char* key : path) {
    const auto* next = at->is_object() ? at->as_object().if_contains(key) : nullptr;
    if (!next)
      return {};
    at = next;
  }
  return at->is_string() ? std::string(at->get_string()) : std::string();
}

bool kubectl_available() {
  return fs::exists(KUBECTL_PATH);
}

} // namespace

TEST_CASE("kinformerd serves /metrics, /healthz and /readyz", "[service_e2e]") {
  temp_dir dir;
  auto secret = dir.write("secret", "e2e-secret");
  kinformerd daemon({"--config", dir.write("kinformerd.yaml", config_yaml(secret))});

  SECTION("/readyz answers 503 until every informer synced, then 200") {
    auto ready = daemon.wait_ready();
    CHECK_THAT(ready.body, Catch::StartsWith("ok"));
    CHECK_THAT(ready.body, Catch::Contains("1 informers synced"));
  }

  SECTION("/healthz is 200 and /metrics parses with the informer's series") {
    auto health = http_get(daemon.metrics_address(), "/healthz");
    CHECK(health.status == 200);
    daemon.wait_ready();

    auto reply = http_get(daemon.metrics_address(), "/metrics");
    REQUIRE(reply.status == 200);
    auto samples = parse_metrics(reply.body);
    REQUIRE(!samples.empty());

    std::optional<double> pods, synced, rss;
    for (const auto& s : samples) {
      auto kind = s.labels.find("kind");
      bool is_pods = kind != s.labels.end() && kind->second.find("Kind=Pod") != std::string::npos;
      if (s.name == "kinformer_informer_objects" && is_pods)
        pods = s.value;
      if (s.name == "kinformer_informer_synced" && is_pods)
        synced = s.value;
      if (s.name == "process_resident_memory_bytes")
        rss = s.value;
    }
    INFO(reply.body.substr(0, 2000));
    REQUIRE(pods);
    CHECK(*pods == simulated_pods);
    REQUIRE(synced);
    CHECK(*synced == 1);
    REQUIRE(rss);
    CHECK(*rss > 0);
  }
}

TEST_CASE("kubectl reads pods through kinformerd's read API", "[service_e2e]") {
  if (!kubectl_available())
    FAIL("kubectl not found at " KUBECTL_PATH ": deploy/install-deps.sh installs it");
  temp_dir dir;
  auto secret = dir.write("secret", "e2e-secret");
  kinformerd daemon({"--config", dir.write("kinformerd.yaml", config_yaml(secret))});
  daemon.wait_ready();

  auto all = kubectl_json(daemon.api_address(), {"get", "pods", "-A", "-o", "json"});
  const auto& items = all.at("items").as_array();
  CHECK(items.size() == simulated_pods);

  // A label a pod in "default" has, and the pods of "default" that have it, from the full list.
  std::string app;
  std::set<std::string> expected;
  for (const auto& item : items)
    if (text_at(item, {"metadata", "namespace"}) == "default" && app.empty())
      app = text_at(item, {"metadata", "labels", "app"});
  REQUIRE(!app.empty());
  for (const auto& item : items)
    if (text_at(item, {"metadata", "namespace"}) == "default" &&
        text_at(item, {"metadata", "labels", "app"}) == app)
      expected.insert(text_at(item, {"metadata", "name"}));

  auto selected = kubectl_json(daemon.api_address(),
                               {"get", "pods", "-n", "default", "-l", "app=" + app, "-o", "json"});
  std::set<std::string> names;
  for (const auto& item : selected.at("items").as_array()) {
    CHECK(text_at(item, {"metadata", "namespace"}) == "default");
    CHECK(text_at(item, {"metadata", "labels", "app"}) == app);
    names.insert(text_at(item, {"metadata", "name"}));
  }
  CHECK(names == expected);
  CHECK(names.size() < simulated_pods);
}

// The read API as shipped manifests run it: TLS on the listener and a bearer token, read by
// kubectl; /metrics counts what it answered.
TEST_CASE("kubectl reads through kinformerd's read API over TLS with a token, and /metrics "
          "counts it",
          "[service_e2e]") {
  if (!kubectl_available())
    FAIL("kubectl not found at " KUBECTL_PATH ": deploy/install-deps.sh installs it");
  temp_dir dir;
  auto tls = kinformer::sim::make_self_signed_tls();
  REQUIRE(tls.ok());
  auto ca = dir.write("ca.pem", tls->ca_cert_pem);
  auto config = config_yaml(dir.write("secret", "e2e-secret")) +
                "listen:\n  api_token_file: " + dir.write("token", "read-token\n") +
                "\n  api_tls:\n    certificate: " + dir.write("tls.crt", tls->server_cert_pem) +
                "\n    key: " + dir.write("tls.key", tls->server_key_pem) + "\n";
  kinformerd daemon({"--config", dir.write("kinformerd.yaml", config)});
  daemon.wait_ready();
  const std::string server = "--server=https://" + daemon.api_address();

  auto all = kubectl_json({server, "--certificate-authority=" + ca, "--token=read-token"},
                          {"get", "pods", "-A", "-o", "json"});
  CHECK(all.at("items").as_array().size() == simulated_pods);
  auto table = run_kubectl({server, "--certificate-authority=" + ca, "--token=read-token"},
                           {"get", "pods", "-n", "default"});
  CHECK(table.code == 0);
  CHECK_THAT(table.out, Catch::StartsWith("NAME") && Catch::Contains("STATUS"));

  // A wrong token, no token, a server kubectl does not trust, and plain HTTP are all refused.
  auto wrong = run_kubectl({server, "--certificate-authority=" + ca, "--token=wrong"},
                           {"get", "pods", "-A"});
  CHECK(wrong.code != 0);
  CHECK_THAT(wrong.err, Catch::Contains("Forbidden") || Catch::Contains("forbidden") ||
                            Catch::Contains("Unauthorized"));
  auto untrusted = run_kubectl({server, "--token=read-token"}, {"get", "pods", "-A"});
  CHECK(untrusted.code != 0);
  CHECK_THAT(untrusted.err, Catch::Contains("certificate"));
  auto plain = run_kubectl({"--server=http://" + daemon.api_address(), "--token=read-token"},
                           {"get", "pods", "-A"});
  CHECK(plain.code != 0);
  CHECK_THAT(plain.err, Catch::Contains("BadRequest")); // at once, not after retries

  auto reply = http_get(daemon.metrics_address(), "/metrics");
  REQUIRE(reply.status == 200);
  auto samples = parse_metrics(reply.body);
  INFO(reply.body.substr(0, 3000));
  CHECK(sample_value(samples, "kinformer_read_api_requests_total",
                     {{"verb", "list"}, {"code", "200"}}) >= 2);
  CHECK(sample_value(samples, "kinformer_read_api_requests_total", {{"verb", "discovery"}}) >= 1);
  // At least the 300 pods' JSON went out.
  CHECK(sample_value(samples, "kinformer_read_api_bytes_written_total") > 300 * 1000);
  CHECK(sample_value(samples, "kinformer_read_api_open_watches") == 0);
}

// The keys a kinformer-subscribe child printed as ADDED before its SYNCED line.
std::set<std::string> added_until_synced(child_process& subscriber) {
  std::set<std::string> added;
  // A bound, not a timing: under TSan on 2 busy cores the subscriber's lines took over 60 s.
  auto deadline = steady::now() + 180s;
  for (;;) {
    auto now = steady::now();
    auto line = subscriber.next_line(deadline > now ? deadline - now : 0s);
    INFO("kinformer-subscribe stderr: " << (line ? "" : subscriber.stderr_text()));
    REQUIRE(line);
    boost::system::error_code ec;
    auto parsed = json::parse(*line, ec);
    INFO("line: " << *line);
    REQUIRE_FALSE(ec);
    std::string type = text_at(parsed, {"type"});
    if (type == "SYNCED")
      return added;
    CHECK(type == "ADDED");
    CHECK(added.insert(text_at(parsed, {"key"})).second);
  }
}

TEST_CASE("kinformer-subscribe receives every pod then SYNCED", "[service_e2e]") {
  temp_dir dir;
  auto secret = dir.write("secret", "e2e-secret");
  kinformerd daemon({"--config", dir.write("kinformerd.yaml", config_yaml(secret))});
  REQUIRE(!daemon.remote_port().empty());

  child_process subscriber({KINFORMER_SUBSCRIBE_PATH, "--connect=127.0.0.1:" + daemon.remote_port(),
                            "--plaintext", "--secret-file", secret, "-A", "pods"});
  auto added = added_until_synced(subscriber);
  CHECK(added.size() == simulated_pods);

  SECTION("--field-selector keeps one pod by name; -l with it, none that differs") {
    const std::string key = *added.begin();
    const auto slash = key.find('/');
    const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
    child_process by_name({KINFORMER_SUBSCRIBE_PATH, "--connect=127.0.0.1:" + daemon.remote_port(),
                           "--plaintext", "--secret-file", secret, "-A",
                           "--field-selector=metadata.name=" + name + ",metadata.namespace=" + ns,
                           "pods"});
    CHECK(added_until_synced(by_name) == std::set<std::string>{key});
    child_process excluded({KINFORMER_SUBSCRIBE_PATH, "--connect=127.0.0.1:" + daemon.remote_port(),
                            "--plaintext", "--secret-file", secret, "-A", "--field-selector",
                            "metadata.name!=" + name, "pods"});
    auto rest = added_until_synced(excluded);
    CHECK(rest.size() == simulated_pods - std::count_if(added.begin(), added.end(), [&](auto& k) {
                           return k.substr(k.find('/') + 1) == name;
                         }));
    CHECK_FALSE(rest.contains(key));
  }

  SECTION("without -n or -A, the kubeconfig context's namespace, as kubectl") {
    const auto kubeconfig = dir.write(
        "kubeconfig", "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                      "clusters:\n- name: k\n  cluster: {server: 'https://unused.invalid'}\n"
                      "users:\n- name: u\n  user: {token: t}\n"
                      "contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: ns-1}\n");
    child_process in_context({KINFORMER_SUBSCRIBE_PATH,
                              "--connect=127.0.0.1:" + daemon.remote_port(), "--plaintext",
                              "--secret-file", secret, "--kubeconfig", kubeconfig, "pods"});
    std::set<std::string> expected;
    for (const auto& key : added)
      if (key.starts_with("ns-1/"))
        expected.insert(key);
    CHECK_FALSE(expected.empty());
    CHECK(added_until_synced(in_context) == expected);
  }

  SECTION("a bad field selector exits with 2 and says why, before connecting") {
    child_process bad({KINFORMER_SUBSCRIBE_PATH, "--connect=127.0.0.1:" + daemon.remote_port(),
                       "--plaintext", "--field-selector", "metadata.name", "pods"});
    auto code = bad.wait_exit(10s);
    REQUIRE(code);
    CHECK(*code == 2);
    CHECK(bad.stderr_text().find("--field-selector") != std::string::npos);
  }
}

TEST_CASE("kinformerd stops on SIGTERM with status 0", "[service_e2e]") {
  temp_dir dir;
  auto secret = dir.write("secret", "e2e-secret");
  kinformerd daemon({"--config", dir.write("kinformerd.yaml", config_yaml(secret))});
  daemon.wait_ready();

  daemon.process().terminate();
  auto code = daemon.process().wait_exit(5s);
  std::string log = daemon.process().stderr_text();
  INFO("kinformerd stderr:\n" << log);
  REQUIRE(code);
  CHECK(*code == 0);
  CHECK_THAT(log, Catch::Contains("event=stopped"));
}

namespace {

// kinformerd as a cluster runs it: in front of a separate API server (the simulator, which
// requires kinformerd's own token), its read API checking each reader's token with TokenReview
// and SubjectAccessReview upstream.
struct authenticated_deployment {
  kinformer::sim::simulator server;
  temp_dir dir;
  std::unique_ptr<child_process> daemon;
  std::string api;

  static kinformer::sim::simulator_options server_options() {
    kinformer::sim::simulator_options o;
    o.token = "kinformerd-token";
    o.review_users = {{"reader-token", "reader", "u-1", {"readers"}}};
    o.review_grants = {{"group:readers", {"*"}, {"*"}, ""}};
    return o;
  }

  authenticated_deployment() : server(server_options()) {
    REQUIRE(server.start().ok());
    kinformer::sim::object_generator generator;
    REQUIRE(kinformer::sim::load_pods(server.store(), generator, simulated_pods, 3).ok());
    auto config = dir.write("kinformerd.yaml",
                            "cluster:\n  mode: server\n  server: " + server.url() +
                                "\n  token_file: " + dir.write("token", "kinformerd-token") +
                                "\ninformers:\n  - resource: pods\n"
                                "listen:\n  api: 127.0.0.1:0\n"
                                "  metrics: 127.0.0.1:0\n");
    daemon = std::make_unique<child_process>(
        std::vector<std::string>{KINFORMERD_PATH, "--config", config});
    bool started = daemon->wait_stderr_contains("event=started", 20s);
    INFO("kinformerd stderr:\n" << daemon->stderr_text());
    REQUIRE(started);
    api = logged_value(daemon->stderr_text(), "api_listening", "address");
  }
};

// A watch of every pod through the read API with the reader's token, held open: returns once
// its first event is in.
class open_watch {
public:
  explicit open_watch(const std::string& address) : socket_(ioc_) {
    auto colon = address.rfind(':');
    socket_.connect({net::ip::make_address(address.substr(0, colon)),
                     static_cast<unsigned short>(std::stoi(address.substr(colon + 1)))});
    timeval tv{10, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    http::request<http::empty_body> req{http::verb::get, "/api/v1/pods?watch=1", 11};
    req.set(http::field::host, address);
    req.set(http::field::authorization, "Bearer reader-token");
    http::write(socket_, req);
    std::string received;
    char buffer[4096];
    while (received.find("\"type\":\"ADDED\"") == std::string::npos) {
      boost::system::error_code ec;
      auto n = socket_.read_some(net::buffer(buffer), ec);
      INFO("the watch so far: " << received);
      REQUIRE_FALSE(ec);
      received.append(buffer, n);
    }
    CHECK(received.starts_with("HTTP/1.1 200"));
  }

private:
  net::io_context ioc_;
  tcp::socket socket_;
};

} // namespace

// In a cluster a shutdown that hangs costs every rollout its whole grace period and a SIGKILL.
TEST_CASE("kinformerd stops within seconds on SIGTERM after serving authenticated readers",
          "[service_e2e]") {
  authenticated_deployment deployment;
  // A reader without a token is refused: the checks are on.
  CHECK(http_get(deployment.api, "/api/v1/pods").status == 401);

  std::optional<open_watch> watch;
  SECTION("with a watcher connected") {
    watch.emplace(deployment.api);
  }
  SECTION("after a watcher has come and gone") {
    open_watch{deployment.api};
  }

  auto sent = steady::now();
  deployment.daemon->terminate();
  auto code = deployment.daemon->wait_exit(10s);
  INFO("kinformerd stderr:\n" << deployment.daemon->stderr_text());
  REQUIRE(code);
  CHECK(*code == 0);
  CHECK(steady::now() - sent < 5s);
}

namespace {

// A loopback port held bound but not listening, so that connecting to it is refused and no
// other test running beside this one (with servers of their own on port 0) can take it meanwhile.
class refusing_port {
public:
  refusing_port() : socket_(ioc_) {
    socket_.open(tcp::v4());
    // Not inherited by kinformerd, which would keep the port bound after release().
    ::fcntl(socket_.native_handle(), F_SETFD, FD_CLOEXEC);
    socket_.bind({net::ip::make_address("127.0.0.1"), 0});
  }
  unsigned short port() const { return socket_.local_endpoint().port(); }
  // Frees the port for the server that is to listen on it.
  void release() { socket_.close(); }

private:
  net::io_context ioc_;
  tcp::socket socket_;
};

std::string server_config(const std::string& server, const temp_dir& dir) {
  return dir.write("kinformerd.yaml", "cluster:\n  mode: server\n  server: " + server +
                                          "\ninformers:\n  - resource: pods\n"
                                          "listen:\n  api: \"\"\n  metrics: 127.0.0.1:0\n");
}

} // namespace

// A control-plane upgrade or restart makes an absent API server normal: kinformerd keeps running,
// says why it is not ready, and comes up by itself once the server answers.
TEST_CASE("kinformerd waits for an API server that is not there yet", "[service_e2e]") {
  temp_dir dir;
  refusing_port reserved;
  const auto port = reserved.port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  child_process daemon({KINFORMERD_PATH, "--config", server_config("http://" + address, dir)});
  REQUIRE(daemon.wait_stderr_contains("event=api_server_unreachable", 20s));
  REQUIRE(daemon.wait_stderr_contains("attempt=2 ", 20s));
  const auto log = daemon.stderr_text();
  INFO("kinformerd stderr:\n" << log);
  CHECK_FALSE(daemon.wait_exit(0s));
  const auto metrics = logged_value(log, "metrics_listening", "address");
  auto not_ready = http_get(metrics, "/readyz");
  CHECK(not_ready.status == 503);
  CHECK_THAT(not_ready.body, Catch::Contains("waiting for the API server") &&
                                 Catch::Contains(address) && Catch::Contains("refused"));
  CHECK(http_get(metrics, "/healthz").status == 200);

  SECTION("and comes up once it answers") {
    kinformer::sim::simulator_options options;
    options.listen = address;
    reserved.release();
    kinformer::sim::simulator server(options);
    auto started = server.start();
    INFO((started.ok() ? std::string() : started.err().describe()));
    REQUIRE(started.ok());
    kinformer::sim::object_generator generator;
    REQUIRE(kinformer::sim::load_pods(server.store(), generator, simulated_pods, 3).ok());
    REQUIRE(daemon.wait_stderr_contains("event=started", 40s));
    CHECK_THAT(daemon.stderr_text(), Catch::Contains("event=api_server_reached"));
    auto deadline = steady::now() + 20s;
    while (http_get(metrics, "/readyz").status != 200 && steady::now() < deadline)
      std::this_thread::sleep_for(20ms);
    CHECK(http_get(metrics, "/readyz").status == 200);
    daemon.terminate();
    CHECK(daemon.wait_exit(10s) == 0);
  }
  SECTION("and stops at once on SIGTERM while it waits") {
    auto sent = steady::now();
    daemon.terminate();
    CHECK(daemon.wait_exit(10s) == 0);
    CHECK(steady::now() - sent < 2s);
  }
}

TEST_CASE("kinformerd refuses a config file with an unknown key", "[service_e2e]") {
  temp_dir dir;
  auto config = dir.write("bad.yaml", "simulate:\n  pods: 10\n  no_such_field: 1\n");
  child_process process({KINFORMERD_PATH, "--simulate", "--config", config});
  auto code = process.wait_exit(20s);
  std::string err = process.stderr_text();
  INFO("stderr: " << err);
  REQUIRE(code);
  CHECK(*code == 2);
  CHECK_THAT(err, Catch::Contains("no_such_field"));
  CHECK_THAT(err, Catch::Contains("bad.yaml"));
}
