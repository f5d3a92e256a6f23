// kinformerd's configuration: every field of the file, every flag, flags over the file, the
// connection mode from the environment, the mapping onto cache_options, and every error path.

#include "app/kinformerd/config.hpp"
#include "tests/protocol/support/temp_dir.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <map>

using namespace kinformer;
using namespace kinformer::service;
using namespace std::chrono_literals;
using kinformer::test::temp_dir;

namespace {

// An environment without KUBERNETES_SERVICE_*, or with the given variables.
env_lookup fake_env(std::map<std::string, std::string> vars = {}) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    if (auto it = vars.find(std::string(name)); it != vars.end())
      return it->second;
    return std::nullopt;
  };
}

result<service_config> parse_flags(std::vector<std::string> args,
                                   const env_lookup& env = fake_env()) {
  args.insert(args.begin(), "kinformerd");
  std::vector<const char*> argv;
  for (const auto& a : args)
    argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data(), env);
}

std::string error_of(const result<service_config>& parsed) {
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.err().code == errc::invalid_argument);
  return parsed.err().message;
}

const char* every_field = R"yaml(
cluster:
  mode: kubeconfig
  kubeconfig: /home/me/.kube/config
  context: prod
  token_file: /run/token
  certificate_authority: /etc/ca.pem
  insecure_skip_tls_verify: true
defaults:
  namespaces: [shop, ""]
  label_selector: "app=web,tier!=db"
  field_selector: "metadata.namespace!=kube-system"
  metadata_only: true
  compress_objects: true
  transform:
    drop_managed_fields: true
    drop_annotations: [a.example/x]
  resync_period: 1m30s
  fail_on_missing_informer: true
informers:
  - resource: pods
  - name: deploys
    resource: deployments.apps
    namespaces: [team-a]
    label_selector: "env in (prod,stage)"
    field_selector: "status.replicas!=0"
    metadata_only: false
    compress_objects: false
    transform: {drop_managed_fields: false}
    resync_period: 10m
handlers:
  log:
    - level: debug
      format: json
      informers: [pods]
    - name: second
  webhooks:
    - url: https://hooks.example/k
      batch_size: 10
      flush_interval: 250ms
      max_retries: 3
      max_backoff: 5s
      queue_bound: 20
      bearer_token_file: /run/hook-token
      certificate_authority: /run/hook-ca.crt
      client_certificate: /run/hook.crt
      client_key: /run/hook.key
      informers: [pods, deploys]
listen:
  api: "[::1]:0"
  metrics: ":9100"
  api_token_file: /run/api-token
  api_max_connections: 64
  api_max_watches: 0
  api_max_unpaged_lists: 2
  api_write_timeout_seconds: 5
  api_authorization: authenticated
  api_tls: {certificate: /tls/api.crt, key: /tls/api.key}
remote:
  port: 4242
  host: 127.0.0.1
  tls: {certificate: /tls/crt, key: /tls/key, ca: /tls/ca}
  shared_secret_file: /run/secret
log_level: warn
simulate:
  pods: 10
  namespaces: 2
  pod_bytes: 4000
  seed: 7
  churn_rate: 2.5
leader_election:
  enabled: true
  lease_name: my-lease
  lease_namespace: ops
  identity: replica-1
  lease_duration: 20s
  renew_deadline: 12s
  retry_period: 3s
)yaml";

} // namespace

TEST_CASE("every field of the config file is read", "[config]") {
  auto parsed = parse_config_text(every_field, "all.yaml");
  INFO((parsed ? "" : parsed.err().describe()));
  REQUIRE(parsed.ok());
  const service_config& c = *parsed;

  CHECK(c.cluster.mode == connection_mode::kubeconfig);
  CHECK(c.cluster.kubeconfig == "/home/me/.kube/config");
  CHECK(c.cluster.context == "prod");
  CHECK(c.cluster.token_file == "/run/token");
  CHECK(c.cluster.certificate_authority == "/etc/ca.pem");
  CHECK(c.cluster.insecure_skip_tls_verify);

  CHECK(c.defaults.namespaces == std::vector<std::string>{"shop", ""});
  CHECK(c.defaults.labels.to_string() == "app=web,tier!=db");
  CHECK(c.defaults.fields.to_string() == "metadata.namespace!=kube-system");
  CHECK(c.defaults.metadata_only);
  CHECK(c.defaults.compress_objects == true);
  CHECK(c.defaults.transform.drop_managed_fields);
  CHECK(c.defaults.transform.drop_annotations == std::vector<std::string>{"a.example/x"});
  CHECK(c.defaults.resync_period == 90s);
  CHECK(c.defaults.fail_on_missing_informer);

  REQUIRE(c.informers.size() == 2);
  const auto& pods = c.informers[0];
  CHECK(pods.name == "pods");
  CHECK(pods.resource == "pods");
  CHECK_FALSE(pods.namespaces);
  CHECK_FALSE(pods.labels);
  CHECK_FALSE(pods.fields);
  CHECK_FALSE(pods.metadata_only);
  CHECK_FALSE(pods.compress_objects);
  CHECK_FALSE(pods.transform);
  CHECK_FALSE(pods.resync_period);
  const auto& deploys = c.informers[1];
  CHECK(deploys.name == "deploys");
  CHECK(deploys.resource == "deployments.apps");
  CHECK(deploys.namespaces == std::vector<std::string>{"team-a"});
  CHECK(deploys.labels->to_string() == "env in (prod,stage)");
  CHECK(deploys.fields->to_string() == "status.replicas!=0");
  CHECK(deploys.metadata_only == false);
  CHECK(deploys.compress_objects == false);
  CHECK(deploys.transform == transform_options{});
  CHECK(deploys.resync_period == 10min);

  REQUIRE(c.handlers.log.size() == 2);
  CHECK(c.handlers.log[0].name == "log");
  CHECK(c.handlers.log[0].level == log_level::debug);
  CHECK(c.handlers.log[0].format == log_format::json);
  CHECK(c.handlers.log[0].informers == std::vector<std::string>{"pods"});
  CHECK(c.handlers.log[1].name == "second");
  CHECK(c.handlers.log[1].level == log_level::info);
  CHECK(c.handlers.log[1].format == log_format::logfmt);
  CHECK(c.handlers.log[1].informers.empty());
  REQUIRE(c.handlers.webhooks.size() == 1);
  const auto& hook = c.handlers.webhooks[0];
  CHECK(hook.name == "webhook");
  CHECK(hook.url == "https://hooks.example/k");
  CHECK(hook.batch_size == 10);
  CHECK(hook.flush_interval == 250ms);
  CHECK(hook.max_retries == 3);
  CHECK(hook.max_backoff == 5s);
  CHECK(hook.queue_bound == 20);
  CHECK(hook.bearer_token_file == "/run/hook-token");
  CHECK(hook.certificate_authority == "/run/hook-ca.crt");
  CHECK(hook.client_certificate == "/run/hook.crt");
  CHECK(hook.client_key == "/run/hook.key");
  CHECK_FALSE(hook.insecure_skip_tls_verify);
  CHECK(hook.informers == std::vector<std::string>{"pods", "deploys"});

  CHECK(c.listen.api == "[::1]:0");
  CHECK(c.listen.metrics == ":9100");
  CHECK(c.listen.api_token_file == "/run/api-token");
  CHECK(c.listen.api_max_connections == 64);
  CHECK(c.listen.api_max_watches == 0); // no bound
  CHECK(c.listen.api_max_unpaged_lists == 2);
  CHECK(c.listen.api_write_timeout_seconds == 5);
  CHECK(c.listen.api_authorization == "authenticated");
  CHECK(c.listen.api_tls_certificate == "/tls/api.crt");
  CHECK(c.listen.api_tls_key == "/tls/api.key");
  CHECK_FALSE(c.listen.api_anonymous);

  REQUIRE(c.remote);
  CHECK(c.remote->port == 4242);
  CHECK(c.remote->host == "127.0.0.1");
  CHECK(c.remote->certificate_file == "/tls/crt");
  CHECK(c.remote->key_file == "/tls/key");
  CHECK(c.remote->ca_file == "/tls/ca");
  CHECK(c.remote->shared_secret_file == "/run/secret");
  CHECK_FALSE(c.remote->plaintext);

  CHECK(c.level == log_level::warn);
  CHECK(c.simulate.pods == 10);
  CHECK(c.simulate.namespaces == 2);
  CHECK(c.simulate.pod_bytes == 4000);
  CHECK(c.simulate.seed == 7);
  CHECK(c.simulate.churn_rate == 2.5);
  CHECK(c.leader_election.enabled);
  CHECK(c.leader_election.lease_name == "my-lease");
  CHECK(c.leader_election.lease_namespace == "ops");
  CHECK(c.leader_election.identity == "replica-1");
  CHECK(c.leader_election.lease_duration == 20s);
  CHECK(c.leader_election.renew_deadline == 12s);
  CHECK(c.leader_election.retry_period == 3s);
  CHECK_FALSE(c.show_help);
}

TEST_CASE("an empty file gives the defaults", "[config]") {
  for (const char* text : {"", "# only a comment\n", "{}"}) {
    auto parsed = parse_config_text(text, "empty.yaml");
    REQUIRE(parsed.ok());
    const service_config defaults;
    CHECK_FALSE(parsed->cluster.mode);
    CHECK(parsed->informers.empty());
    CHECK(parsed->listen.api == defaults.listen.api);
    CHECK(parsed->listen.metrics == defaults.listen.metrics);
    CHECK_FALSE(parsed->remote);
    CHECK(parsed->level == log_level::info);
    CHECK(parsed->simulate.pods == defaults.simulate.pods);
  }
}

TEST_CASE("the example deploy/kinformerd.yaml parses", "[config]") {
  auto parsed = load_config_file(KINFORMER_SOURCE_DIR "/deploy/kinformerd.yaml");
  INFO((parsed ? "" : parsed.err().describe()));
  REQUIRE(parsed.ok());
  CHECK(parsed->cluster.mode == connection_mode::in_cluster);
  REQUIRE(parsed->informers.size() == 3);
  CHECK(parsed->informers[0].resource == "pods");
  CHECK(parsed->informers[1].resource == "deployments.apps");
  CHECK(parsed->informers[2].name == "configmap-metadata");
  CHECK(parsed->informers[2].metadata_only == true);
  CHECK(parsed->defaults.transform.drop_managed_fields);
  CHECK(parsed->listen.metrics == "0.0.0.0:9090");
  REQUIRE(parsed->handlers.log.size() == 1);
  CHECK(parsed->handlers.log[0].informers == std::vector<std::string>{"deployments.apps"});

  // Run outside a pod, as its header comment and the image's entrypoint suggest.
  const std::string example = KINFORMER_SOURCE_DIR "/deploy/kinformerd.yaml";
  auto simulated = parse_flags({"--config", example, "--simulate"});
  REQUIRE(simulated.ok());
  CHECK(simulated->cluster.mode == connection_mode::simulate);
  CHECK(simulated->informers.size() == 3);
  CHECK(simulated->handlers.log.size() == 1); // the file's handler, no default one added
  auto workstation = parse_flags({"--config", example, "--kubeconfig", "/home/me/.kube/config"});
  REQUIRE(workstation.ok());
  CHECK(workstation->cluster.mode == connection_mode::kubeconfig);
}

TEST_CASE("file errors name the file, line and field", "[config][errors]") {
  struct bad_case {
    const char* yaml;
    const char* message;
  };
  const bad_case cases[] = {
      {"informers:\n  - name: x\n", "bad.yaml:2: informers[0].resource: missing"},
      {"informers:\n  - resource: pods\n  - resource: pods\n",
       "informers[1].resource: \"pods\" is already watched by informers[0]"},
      {"informers:\n  - resource: pods\n  - resource: pods\n    name: b\n",
       "informers[1].resource: \"pods\" is already watched"},
      {"informers:\n  - {resource: pods, metadata_only: true, name: m}\n  - resource: pods\n",
       ""}, // full and metadata-only informers of one kind may coexist
      {"informers:\n  - {resource: pods}\n  - {resource: configmaps, name: pods}\n",
       "informers[1].name: \"pods\" is already the name of informers[0]"},
      {"informers:\n  - resource: Pods\n",
       "bad.yaml:2: informers[0].resource: \"Pods\" is not a resource name"},
      {"informers:\n  - resource: pods\n    lable_selector: a=b\n",
       "bad.yaml:3: informers[0].lable_selector: unknown key (known: name, resource"},
      {"informers:\n  - resource: pods\n    label_selector: \"a in (b\"\n",
       "bad.yaml:3: informers[0].label_selector: label selector"},
      {"informers:\n  - resource: pods\n    field_selector: \"a\"\n",
       "informers[0].field_selector: "},
      {"informers:\n  - resource: pods\n    resync_period: 10\n",
       "informers[0].resync_period: \"10\": missing or unknown unit"},
      {"informers:\n  - resource: pods\n    metadata_only: yes\n",
       "informers[0].metadata_only: \"yes\" is not true or false"},
      {"informers:\n  - resource: pods\n    namespaces: default\n",
       "informers[0].namespaces: must be a list"},
      {"informers:\n  - resource: pods\n    transform: {drop_managed: true}\n",
       "informers[0].transform.drop_managed: unknown key"},
      {"informers: pods\n", "bad.yaml:1: informers: must be a list"},
      {"informers:\n  - resource: [pods]\n", "informers[0].resource: must be a single value"},
      {"informers:\n  - resource:\n", "informers[0].resource: missing value"},
      {"informer:\n  - resource: pods\n", "bad.yaml:1: informer: unknown key (known: cluster"},
      {"log_level: info\nlog_level: debug\n", "bad.yaml:2: log_level: duplicate key"},
      {"log_level: loud\n", "log_level: \"loud\" is not a log level (debug, info, warn, error)"},
      {"- a\n- b\n", "top level: must be a map of keys"},
      {"cluster: {mode: cloud}\n", "cluster.mode: \"cloud\" is not a mode"},
      {"cluster: {mode: server}\n", "cluster.server: missing (mode is server)"},
      {"cluster: {mode: server, server: \"ftp://x\"}\n", "cluster.server: "},
      {"cluster: {mode: in-cluster, server: \"https://x\"}\n",
       "cluster.server: not used in mode in-cluster"},
      {"cluster: {server: \"https://x\", kubeconfig: /k}\n",
       "cluster: server and kubeconfig exclude each other"},
      {"cluster: {mode: server, server: \"https://x\", context: c}\n",
       "cluster.context: only used in mode kubeconfig"},
      {"cluster: {insecure_skip_tls_verify: 1}\n",
       "cluster.insecure_skip_tls_verify: \"1\" is not true or false"},
      {"defaults: {namespaces: [a, [b]]}\n", "defaults.namespaces[1]: must be a single value"},
      {"defaults: {resync_period: 5d}\n",
       "defaults.resync_period: \"5d\": missing or unknown unit"},
      {"defaults: {label_selector: \"!\"}\n", "defaults.label_selector: "},
      {"listen: {metrics: abc}\n", "bad.yaml:1: listen.metrics: \"abc\" is not host:port"},
      {"listen: {api: \"1.2.3.4:70000\"}\n", "listen.api: \"1.2.3.4:70000\" is not host:port"},
      {"listen: {api: \"::1:80\"}\n", "an IPv6 host is written [addr]:port"},
      {"listen: {metrics: \"\"}\n", "listen.metrics: \"\" is not host:port"},
      {"listen: {api: \"0.0.0.0:80\", metrics: \"0.0.0.0:80\"}\n",
       "listen.metrics: \"0.0.0.0:80\" is also listen.api"},
      {"handlers: {log: [{informers: [nope]}]}\ninformers: [{resource: pods}]\n",
       "handlers.log[0].informers[0]: no informer is named \"nope\""},
      {"handlers: {log: [{name: a}], webhooks: [{name: a, url: \"http://x\"}]}\n",
       "handlers.webhooks[0].name: \"a\" is already the name of handlers.log[0]"},
      {"handlers: {log: [{format: xml}]}\n", "handlers.log[0].format: \"xml\" is not a log format"},
      {"handlers: {log: [{level: verbose}]}\n",
       "handlers.log[0].level: \"verbose\" is not a log level"},
      {"handlers: {webhooks: [{batch_size: 1}]}\n", "handlers.webhooks[0].url: missing"},
      {"handlers: {webhooks: [{url: \"ftp://x\"}]}\n",
       "handlers.webhooks[0].url: \"ftp://x\" is not an http:// or https:// URL"},
      {"handlers: {webhooks: [{url: \"http://x\", insecure_skip_tls_verify: true}]}\n",
       "handlers.webhooks[0]: TLS options need an https:// url"},
      {"handlers: {webhooks: [{url: \"https://x\", insecure_skip_tls_verify: true, "
       "certificate_authority: /ca}]}\n",
       "handlers.webhooks[0]: certificate_authority and insecure_skip_tls_verify exclude each "
       "other"},
      {"handlers: {webhooks: [{url: \"https://x\", client_key: /k}]}\n",
       "handlers.webhooks[0]: client_certificate and client_key go together"},
      {"handlers: {webhooks: [{url: \"http://x\", batch_size: 0}]}\n",
       "handlers.webhooks[0].batch_size: must be at least 1"},
      {"handlers: {webhooks: [{url: \"http://x\", batch_size: -1}]}\n",
       "handlers.webhooks[0].batch_size: \"-1\" is not a non-negative integer"},
      {"handlers: {webhooks: [{url: \"http://x\", batch_size: 50, queue_bound: 10}]}\n",
       "handlers.webhooks[0].queue_bound: must be at least batch_size (50)"},
      {"handlers: {webhooks: [{url: \"http://x\", flush_interval: 0}]}\n",
       "handlers.webhooks[0].flush_interval: must be more than 0"},
      {"handlers: {webhooks: [{url: \"http://x\", max_backoff: 0}]}\n",
       "handlers.webhooks[0].max_backoff: must be more than 0"},
      {"handlers: {webhooks: [{url: \"http://x\", max_retries: many}]}\n",
       "handlers.webhooks[0].max_retries: \"many\" is not a non-negative integer"},
      {"handlers: {sms: []}\n", "handlers.sms: unknown key"},
      {"listen: {api_tls: {certificate: /c}}\n", "listen.api_tls.key: missing"},
      {"listen: {api_tls: {cert: /c}}\n", "listen.api_tls.cert: unknown key"},
      {"listen: {api_authorization: rbac}\n",
       "listen.api_authorization: \"rbac\" is not subjectaccessreview or authenticated"},
      {"listen: {api_anonymous: true, api_token_file: /t}\n",
       "listen.api_anonymous: true, but api_token_file requires a token"},
      {"listen: {api_anonymous: maybe}\n", "listen.api_anonymous"},
      {"remote: {port: 4242}\n", "remote.tls.certificate: missing (or set remote.plaintext: true"},
      {"remote: {port: 4242, tls: {certificate: /c}}\n", "remote.tls.key: missing"},
      {"remote: {port: 4242, tls: {certificate: /c, key: /k}}\n", "remote.tls.ca: missing"},
      {"remote: {tls: {certificate: /c, key: /k, ca: /ca}}\n", ""},
      // TLS with a shared secret and no CA is refused: nothing would verify either side.
      {"remote: {tls: {certificate: /c, key: /k}, shared_secret_file: /s}\n",
       "remote.tls.ca: missing: without a CA neither side's certificate is verified"},
      {"remote: {tls: {certificate: /c, key: /k, ca: /ca}, shared_secret_file: /s}\n", ""},
      {"remote: {plaintext: true}\n", ""}, // explicitly asked for
      {"remote: {port: 4242, plaintext: true, tls: {certificate: /c, key: /k}}\n",
       "remote.plaintext: true, but TLS files are given too"},
      {"remote: {port: 70000, plaintext: true}\n", "remote.port: \"70000\" is not a port"},
      {"remote: {plaintext: true, host: \"a b\"}\n", "remote.host: \"a b\" is not a host name"},
      {"remote: {plaintext: true, tls: {cert: /c}}\n", "remote.tls.cert: unknown key"},
      {"simulate: {namespaces: 0}\n", "simulate.namespaces: must be at least 1"},
      {"leader_election: {enabled: true, lease_duration: 10s}\n",
       "leader_election.lease_duration: must be greater than renew_deadline"},
      {"leader_election: {enabled: true, renew_deadline: 2s, retry_period: 2s}\n",
       "leader_election.renew_deadline: must be greater than 1.2 x retry_period"},
      {"leader_election: {enabled: true, lease_duration: 500ms, renew_deadline: 400ms, "
       "retry_period: 100ms}\n",
       "leader_election.lease_duration: at least 1s"},
      {"leader_election: {enabled: true, lease_name: \"\"}\n",
       "leader_election.lease_name: must not be empty"},
      {"leader_election: {enabled: false, lease_duration: 1s}\n", ""}, // off: not checked
      {"leader_election: {enable: true}\n", "leader_election.enable: unknown key"},
      {"simulate: {churn_rate: fast}\n", "simulate.churn_rate: \"fast\" is not a number"},
      {"simulate: {churn_rate: -1}\n", "simulate.churn_rate: must be a finite number, 0 or more"},
      {"simulate: {churn_rate: inf}\n", "simulate.churn_rate: must be a finite number, 0 or more"},
      {"simulate: {seed: x}\n", "simulate.seed: \"x\" is not a non-negative integer"},
      {"informers: [\n", "bad.yaml: not valid YAML: "},
      {"a: b: c\n", "bad.yaml: not valid YAML: "},
  };
  for (const auto& c : cases) {
    INFO(c.yaml);
    auto parsed = parse_config_text(c.yaml, "bad.yaml");
    if (std::string_view(c.message).empty()) {
      INFO((parsed ? "" : parsed.err().describe()));
      CHECK(parsed.ok());
      continue;
    }
    const std::string message = error_of(parsed);
    INFO(message);
    CHECK(message.find(c.message) != std::string::npos);
  }
}

TEST_CASE("a missing config file is a not_found error naming it", "[config][errors]") {
  auto parsed = load_config_file("/nonexistent/kinformerd.yaml");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.err().code == errc::not_found);
  CHECK(parsed.err().message.find("/nonexistent/kinformerd.yaml") != std::string::npos);
}

TEST_CASE("durations", "[config]") {
  CHECK(*parse_duration("0") == 0ms);
  CHECK(*parse_duration("500ms") == 500ms);
  CHECK(*parse_duration("30s") == 30s);
  CHECK(*parse_duration("10m") == 10min);
  CHECK(*parse_duration("1h") == 1h);
  CHECK(*parse_duration("1h2m3s4ms") == 1h + 2min + 3s + 4ms);
  for (const char* bad :
       {"", "30", "s", "-5s", "1.5s", "10 s", "5d", "1h-", "99999999999999999h"}) {
    INFO(bad);
    auto parsed = parse_duration(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.err().code == errc::invalid_argument);
  }
}

TEST_CASE("listen addresses", "[config]") {
  for (const char* good : {"127.0.0.1:8080", "0.0.0.0:0", ":9090", "localhost:1", "[::1]:0",
                           "[::]:65535", "[fe80::1%eth0]:80"}) {
    INFO(good);
    CHECK(check_listen_address(good).ok());
  }
  for (const char* bad : {"", "abc", "8080", "host:", "host:x", "host:65536", "host:-1", "::1:80",
                          "[::1]80", "[::1", "[zz]:1", "a b:80", "host:80x"}) {
    INFO(bad);
    auto checked = check_listen_address(bad);
    REQUIRE_FALSE(checked.ok());
    CHECK(checked.err().message.find("is not host:port") != std::string::npos);
  }
}

TEST_CASE("resource names", "[config]") {
  for (const char* good : {"pods", "deployments.apps", "widgets.example.com", "po",
                           "horizontalpodautoscalers.v2.autoscaling", "x-y"})
    CHECK(check_resource_name(good).ok());
  for (const char* bad : {"", "Pods", ".pods", "pods.", "a..b", "pods/status", "pods ", "-x"}) {
    INFO(bad);
    CHECK_FALSE(check_resource_name(bad).ok());
  }
}

TEST_CASE("flags alone configure the service", "[config][flags]") {
  auto parsed = parse_flags({"--server",
                             "https://127.0.0.1:6443",
                             "--token-file=/run/t",
                             "--certificate-authority",
                             "/ca.pem",
                             "--insecure-skip-tls-verify",
                             "--watch",
                             "pods",
                             "--watch=deployments.apps",
                             "--namespace",
                             "a",
                             "--namespace",
                             "b",
                             "--selector",
                             "app=web",
                             "--field-selector",
                             "status.phase=Running",
                             "--metadata-only",
                             "--compress-objects",
                             "--listen-api",
                             "127.0.0.1:0",
                             "--listen-metrics",
                             "[::1]:0",
                             "--log-level",
                             "debug",
                             "--leader-elect"});
  INFO((parsed ? "" : parsed.err().describe()));
  REQUIRE(parsed.ok());
  const service_config& c = *parsed;
  CHECK(c.leader_election.enabled);
  CHECK(c.cluster.mode == connection_mode::server);
  CHECK(c.cluster.server == "https://127.0.0.1:6443");
  CHECK(c.cluster.token_file == "/run/t");
  CHECK(c.cluster.certificate_authority == "/ca.pem");
  CHECK(c.cluster.insecure_skip_tls_verify);
  REQUIRE(c.informers.size() == 2);
  CHECK(c.informers[0].resource == "pods");
  CHECK(c.informers[0].name == "pods");
  CHECK(c.informers[1].resource == "deployments.apps");
  CHECK(c.defaults.namespaces == std::vector<std::string>{"a", "b"});
  CHECK(c.defaults.labels.to_string() == "app=web");
  CHECK(c.defaults.fields.to_string() == "status.phase=Running");
  CHECK(c.defaults.metadata_only);
  CHECK(c.defaults.compress_objects == true);
  CHECK(c.listen.api == "127.0.0.1:0");
  CHECK(c.listen.metrics == "[::1]:0");
  CHECK(c.level == log_level::debug);
  CHECK(c.handlers.log.empty()); // only --simulate adds a default handler
}

TEST_CASE("the compress-objects flag: absent leaves the informers' default, =false turns it off",
          "[config][flags]") {
  auto absent =
      parse_flags({"--server", "https://127.0.0.1:6443", "--watch", "pods", "--metadata-only"});
  INFO((absent ? "" : absent.err().describe()));
  REQUIRE(absent.ok());
  CHECK_FALSE(absent->defaults.compress_objects.has_value());
  // Unset, a metadata-only informer keeps its text compressed (actors/messages.hpp).
  informer_config metadata_only;
  metadata_only.metadata_only = true;
  metadata_only.compress_objects = to_cache_options(*absent).compress_objects;
  CHECK(keeps_objects_compressed(metadata_only));

  auto off = parse_flags({"--server", "https://127.0.0.1:6443", "--watch", "pods",
                          "--metadata-only", "--compress-objects=false"});
  REQUIRE(off.ok());
  CHECK(off->defaults.compress_objects == false);
  metadata_only.compress_objects = to_cache_options(*off).compress_objects;
  CHECK_FALSE(keeps_objects_compressed(metadata_only));
}

TEST_CASE("flags override the config file", "[config][flags]") {
  temp_dir dir;
  const auto file = dir.write("config.yaml", R"(
cluster: {mode: kubeconfig, kubeconfig: /k, context: c}
defaults:
  namespaces: [from-file]
  label_selector: "a=1"
  metadata_only: false
informers: [{resource: pods, name: p}]
handlers: {log: [{informers: [p]}]}
listen: {api: "127.0.0.1:1", metrics: "127.0.0.1:2"}
log_level: error
)");
  SECTION("file alone") {
    auto parsed = parse_flags({"--config", file});
    REQUIRE(parsed.ok());
    CHECK(parsed->cluster.mode == connection_mode::kubeconfig);
    CHECK(parsed->cluster.context == "c");
    CHECK(parsed->defaults.namespaces == std::vector<std::string>{"from-file"});
    CHECK(parsed->level == log_level::error);
  }
  SECTION("flags win, wherever they stand") {
    auto parsed = parse_flags({"--namespace", "x", "--server=http://127.0.0.1:1", "--selector",
                               "b=2", "--watch", "configmaps", "--listen-api", "", "--log-level",
                               "info", "--config", file, "--metadata-only=true"});
    INFO((parsed ? "" : parsed.err().describe()));
    REQUIRE(parsed.ok());
    CHECK(parsed->cluster.mode == connection_mode::server);
    CHECK(parsed->cluster.kubeconfig.empty());
    CHECK(parsed->cluster.context.empty());
    CHECK(parsed->defaults.namespaces == std::vector<std::string>{"x"});
    CHECK(parsed->defaults.labels.to_string() == "b=2");
    CHECK(parsed->defaults.metadata_only);
    REQUIRE(parsed->informers.size() == 2);
    CHECK(parsed->informers[0].name == "p");
    CHECK(parsed->informers[1].resource == "configmaps");
    CHECK(parsed->handlers.log.size() == 1);
    CHECK(parsed->listen.api.empty());
    CHECK(parsed->listen.metrics == "127.0.0.1:2");
    CHECK(parsed->level == log_level::info);
  }
  SECTION("--watch of an informer the file already has") {
    CHECK(error_of(parse_flags({"--config", file, "--watch", "p"})) ==
          "--watch: \"p\" is already watched (informers[0])");
  }
  SECTION("errors in the file come through") {
    const auto broken = dir.write("broken.yaml", "informers:\n  - resource: pods\n    nme: x\n");
    CHECK(error_of(parse_flags({"--config", broken}))
              .find("broken.yaml:3: informers[0].nme: "
                    "unknown key") != std::string::npos);
  }
}

TEST_CASE("the connection mode: explicit choices, then the environment", "[config][flags]") {
  const auto in_pod =
      fake_env({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  CHECK(parse_flags({"--watch", "pods"}, in_pod)->cluster.mode == connection_mode::in_cluster);
  CHECK(parse_flags({"--watch", "pods", "--kubeconfig", "/k"}, in_pod)->cluster.mode ==
        connection_mode::kubeconfig);
  CHECK(parse_flags({"--watch", "pods", "--server", "https://h"}, in_pod)->cluster.mode ==
        connection_mode::server);
  CHECK(
      parse_flags({"--watch", "pods", "--kubeconfig", "/k", "--context", "dev"})->cluster.context ==
      "dev");
  // Only one of the two variables is not a pod.
  const auto half = fake_env({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}});
  CHECK(error_of(parse_flags({"--watch", "pods"}, half))
            .starts_with("cluster: no API server given: use --server URL, --kubeconfig FILE"));
  CHECK(error_of(parse_flags({"--server", "https://a", "--kubeconfig", "/k", "--watch", "pods"})) ==
        "--kubeconfig: conflicts with --server");
  CHECK(error_of(parse_flags({"--simulate", "--server", "https://a"})) ==
        "--server: conflicts with --simulate");
}

TEST_CASE("kubectl's flags: -n, -l, -A, --version, and KUBECONFIG or ~/.kube/config",
          "[config][flags]") {
  auto parsed =
      parse_flags({"--server=https://a", "--watch", "pods", "-n", "x", "-ny", "-l", "app=web"});
  REQUIRE(parsed.ok());
  CHECK(parsed->defaults.namespaces == std::vector<std::string>{"x", "y"});
  CHECK(parsed->defaults.labels.to_string() == "app=web");

  temp_dir dir;
  const auto file = dir.write("config.yaml", "defaults: {namespaces: [from-file]}\n"
                                             "informers: [{resource: pods}]\n");
  auto all = parse_flags({"--config", file, "--server", "https://a", "-A"});
  REQUIRE(all.ok());
  CHECK(all->defaults.namespaces.empty()); // every namespace
  CHECK(error_of(parse_flags({"--server", "https://a", "--watch", "pods", "-A", "-n", "x"})) ==
        "--namespace: conflicts with --all-namespaces");
  CHECK(error_of(parse_flags({"--server", "https://a", "--watch", "pods", "-n", "x", "-A"})) ==
        "--all-namespaces: conflicts with --namespace");

  auto version = parse_flags({"--watch", "pods", "--version"});
  REQUIRE(version.ok());
  CHECK(version->show_version);

  // No connection flag: a kubeconfig kubectl would find comes before the service account.
  const auto kubeconfig = dir.write("kube", "current-context: c\n");
  const auto in_pod_with_kubeconfig =
      fake_env({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                {"KUBERNETES_SERVICE_PORT", "443"},
                {"KUBECONFIG", dir.file("missing") + ":" + kubeconfig}});
  auto from_env = parse_flags({"--watch", "pods"}, in_pod_with_kubeconfig);
  REQUIRE(from_env.ok());
  CHECK(from_env->cluster.mode == connection_mode::kubeconfig);
  CHECK(from_env->cluster.kubeconfig.empty()); // the files are found again when connecting
  dir.write(".kube/config", "current-context: c\n");
  auto from_home = parse_flags({"--watch", "pods"}, fake_env({{"HOME", dir.path().string()}}));
  REQUIRE(from_home.ok());
  CHECK(from_home->cluster.mode == connection_mode::kubeconfig);
}

TEST_CASE("simulate mode alone watches pods and logs deltas", "[config][flags]") {
  auto parsed = parse_flags({"--simulate"});
  REQUIRE(parsed.ok());
  CHECK(parsed->cluster.mode == connection_mode::simulate);
  REQUIRE(parsed->informers.size() == 1);
  CHECK(parsed->informers[0].resource == "pods");
  REQUIRE(parsed->handlers.log.size() == 1);
  CHECK(parsed->handlers.log[0].informers.empty());
  // With informers given, those are used instead.
  auto deployments = parse_flags({"--simulate=true", "--watch", "deployments.apps"});
  REQUIRE(deployments.ok());
  REQUIRE(deployments->informers.size() == 1);
  CHECK(deployments->informers[0].resource == "deployments.apps");
}

TEST_CASE("the help flag stops parsing", "[config][flags]") {
  for (auto args :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"--bogus", "-h"}}) {
    auto parsed = parse_flags(args);
    REQUIRE(parsed.ok());
    CHECK(parsed->show_help);
  }
  const auto help = command_line_help();
  for (const char* flag :
       {"--config", "--server", "--token-file", "--certificate-authority",
        "--insecure-skip-tls-verify", "--kubeconfig", "--context", "--watch", "--namespace",
        "--selector", "--field-selector", "--metadata-only", "--listen-api", "--listen-metrics",
        "--log-level", "--simulate", "--leader-elect", "--help"}) {
    INFO(flag);
    CHECK(help.find(flag) != std::string_view::npos);
  }
}

TEST_CASE("flag errors name the flag", "[config][flags][errors]") {
  struct bad_case {
    std::vector<std::string> args;
    std::string message;
  };
  const bad_case cases[] = {
      {{"--server", "https://a", "--watch"}, "--watch: 1 required"},
      // CLI11 takes --namespace as the next flag, so x is left over.
      {{"--server", "https://a", "--watch", "--namespace", "x"}, "not expected: x"},
      {{"--server", "https://a", "--watch", "Pods"}, "--watch: \"Pods\" is not a resource name"},
      {{"--server", "https://a", "--watch", "pods", "--watch", "pods"},
       "--watch: \"pods\" is already watched (informers[0])"},
      {{"--server", "https://a", "--wtach", "pods"}, "not expected: pods --wtach (see --help)"},
      {{"--server", "https://a", "pods"}, "not expected: pods"},
      {{"--server", "ftp://a", "--watch", "pods"}, "--server: "},
      {{"--server", "https://a", "--watch", "pods", "--selector", "a in (b"},
       "--selector: label selector"},
      {{"--server", "https://a", "--watch", "pods", "--field-selector", "x"}, "--field-selector: "},
      {{"--server", "https://a", "--watch", "pods", "--listen-metrics", "abc"},
       "--listen-metrics: \"abc\" is not host:port"},
      {{"--server", "https://a", "--watch", "pods", "--listen-api", "1.2.3.4"},
       "--listen-api: \"1.2.3.4\" is not host:port"},
      {{"--server", "https://a", "--watch", "pods", "--log-level", "loud"},
       "--log-level: \"loud\" is not a log level"},
      {{"--server", "https://a", "--watch", "pods", "--metadata-only=maybe"},
       "--metadata-only: \"maybe\" is not true or false"},
      {{"--server", "https://a", "--watch", "pods", "--config"}, "--config: 1 required"},
      {{"--config", "/a.yaml", "--config", "/b.yaml"}, "--config: given twice"},
      {{"--server", "https://a"}, "informers: none configured (give --watch RESOURCE"},
      {{"--server", "https://a", "--watch", "pods", "--listen-api", "127.0.0.1:7",
        "--listen-metrics", "127.0.0.1:7"},
       "listen.metrics: \"127.0.0.1:7\" is also listen.api"},
  };
  for (const auto& c : cases) {
    INFO(c.args.back());
    const std::string message = error_of(parse_flags(c.args));
    INFO(message);
    CHECK(message.find(c.message) != std::string::npos);
  }
  auto missing_file = parse_flags({"--config", "/nonexistent/k.yaml"});
  REQUIRE_FALSE(missing_file.ok());
  CHECK(missing_file.err().code == errc::not_found);
}

TEST_CASE("to_cache_options maps defaults and one by_object entry per informer", "[config]") {
  auto parsed = parse_config_text(every_field, "all.yaml");
  REQUIRE(parsed.ok());
  const cache_options options = to_cache_options(*parsed);
  CHECK(options.default_namespaces == std::vector<std::string>{"shop", ""});
  CHECK(options.default_label_selector.to_string() == "app=web,tier!=db");
  CHECK(options.default_field_selector.to_string() == "metadata.namespace!=kube-system");
  CHECK(options.default_transform != nullptr);
  CHECK(options.sync_period == 90s);
  CHECK(options.reader_fail_on_missing_informer);
  CHECK(options.compress_objects == true);
  CHECK(options.change_window == read_api_change_window); // the read API resumes watches
  REQUIRE(options.by_object.size() == 2);

  const auto& pods = options.by_object[0];
  CHECK(pods.kind.resource == "pods");
  CHECK(pods.kind.kind.kind.empty());
  CHECK(pods.kind.metadata_only); // from defaults.metadata_only
  CHECK_FALSE(pods.namespaces);
  CHECK_FALSE(pods.labels);
  CHECK_FALSE(pods.fields);
  CHECK(pods.transform == nullptr); // falls back to the default
  CHECK_FALSE(pods.sync_period);
  CHECK_FALSE(pods.compress_objects); // falls back to the default

  const auto& deploys = options.by_object[1];
  CHECK(deploys.kind.resource == "deployments.apps");
  CHECK_FALSE(deploys.kind.metadata_only);
  CHECK(deploys.namespaces == std::vector<std::string>{"team-a"});
  CHECK(deploys.labels->to_string() == "env in (prod,stage)");
  CHECK(deploys.fields->to_string() == "status.replicas!=0");
  REQUIRE(deploys.transform != nullptr); // explicitly none: keeps managedFields
  boost::json::value obj = boost::json::parse(R"({"metadata":{"managedFields":[1]}})");
  (*deploys.transform)(obj);
  CHECK(obj.at("metadata").as_object().contains("managedFields"));
  CHECK(deploys.sync_period == 10min);
  CHECK(deploys.compress_objects == false);
}

TEST_CASE("transforms drop managedFields and annotations", "[config]") {
  CHECK(make_transform({}) == nullptr);
  transform_options options;
  options.drop_managed_fields = true;
  options.drop_annotations = {"drop/me"};
  const auto transform = make_transform(options);
  REQUIRE(transform);

  boost::json::value pod = boost::json::parse(R"({"kind":"Pod","metadata":{"name":"p",
      "managedFields":[{"manager":"kubectl"}],"annotations":{"drop/me":"x","keep":"y"}}})");
  (*transform)(pod);
  CHECK(pod == boost::json::parse(R"({"kind":"Pod","metadata":{"name":"p",
      "annotations":{"keep":"y"}}})"));

  boost::json::value only_dropped =
      boost::json::parse(R"({"metadata":{"annotations":{"drop/me":"x"}}})");
  (*transform)(only_dropped);
  CHECK(only_dropped == boost::json::parse(R"({"metadata":{}})"));

  // Odd shapes are left alone, never a crash.
  for (const char* odd : {"[]", "1", R"({"metadata":3})", R"({"metadata":{"annotations":[1]}})"}) {
    boost::json::value value = boost::json::parse(odd);
    const boost::json::value before = value;
    (*transform)(value);
    CHECK(value == before);
  }
}

TEST_CASE("load_connection applies the overrides to each source", "[config]") {
  cluster_options server;
  server.mode = connection_mode::server;
  server.server = "https://[::1]:6443";
  server.token_file = "/run/token";
  server.certificate_authority = "/ca.pem";
  server.insecure_skip_tls_verify = true;
  auto connection = load_connection(server);
  REQUIRE(connection.ok());
  CHECK(connection->server == "https://[::1]:6443");
  CHECK(connection->token_file == "/run/token");
  CHECK(connection->ca_file == "/ca.pem");
  CHECK(connection->insecure_skip_tls_verify);

  temp_dir dir;
  cluster_options kubeconfig;
  kubeconfig.mode = connection_mode::kubeconfig;
  kubeconfig.kubeconfig = dir.write("config", R"(
apiVersion: v1
kind: Config
current-context: a
clusters:
- {name: c, cluster: {server: "https://k.example:443", certificate-authority-data: Q0E=}}
contexts:
- {name: a, context: {cluster: c, user: u}}
- {name: b, context: {cluster: c, user: u, namespace: team}}
users:
- {name: u, user: {token: from-file}}
)");
  kubeconfig.context = "b";
  auto from_file = load_connection(kubeconfig);
  REQUIRE(from_file.ok());
  CHECK(from_file->server == "https://k.example:443");
  CHECK(from_file->default_namespace == "team");
  CHECK(from_file->token == "from-file");
  CHECK(from_file->ca_data == "CA");
  kubeconfig.token_file = "/run/override";
  kubeconfig.certificate_authority = "/other-ca.pem";
  auto overridden = load_connection(kubeconfig);
  REQUIRE(overridden.ok());
  CHECK(overridden->token.empty());
  CHECK(overridden->token_file == "/run/override");
  CHECK(overridden->ca_data.empty());
  CHECK(overridden->ca_file == "/other-ca.pem");

  kubeconfig.context = "missing";
  CHECK_FALSE(load_connection(kubeconfig).ok());
  cluster_options simulate;
  simulate.mode = connection_mode::simulate;
  CHECK_FALSE(load_connection(simulate).ok());
}
