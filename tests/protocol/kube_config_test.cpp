#include "protocol/base64.hpp"
#include "protocol/kube_config.hpp"
#include "tests/protocol/support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace kinformer;
using kinformer::test::temp_dir;

namespace {

const char* two_context_kubeconfig = R"(
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443/
    certificate-authority-data: Q0EgUEVNIFRFWFQ=
    tls-server-name: api.dev.internal
    proxy-url: http://proxy.corp:3128
- name: prod-cluster
  cluster:
    server: https://[fd00::1]:443
    certificate-authority: certs/ca.pem
    insecure-skip-tls-verify: true
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
users:
- name: dev-user
  user:
    token: secret-token
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZIQ==
- name: prod-user
  user:
    tokenFile: tokens/prod
    client-certificate: /abs/client.crt
    client-key: keys/client.key
)";

// A kubeconfig whose single context points at `user_yaml` (indented as a user body).
std::string with_user(const std::string& user_yaml) {
  return "current-context: c\n"
         "clusters: [{name: k, cluster: {server: 'https://h:1'}}]\n"
         "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
         "users:\n- name: u\n  user:\n" +
         user_yaml;
}

std::string error_of(const result<connection_config>& r) {
  REQUIRE_FALSE(r.ok());
  return r.err().describe();
}

} // namespace

TEST_CASE("kubeconfig: the current context selects cluster, user and namespace") {
  temp_dir dir;
  const auto path = dir.write("config", two_context_kubeconfig);
  auto config = load_kubeconfig(path);
  REQUIRE(config.ok());
  CHECK(config->server == "https://dev.example:6443");
  CHECK(config->ca_data == "CA PEM TEXT");
  CHECK(config->ca_file.empty());
  CHECK(config->tls_server_name == "api.dev.internal");
  CHECK(config->proxy_url == "http://proxy.corp:3128");
  CHECK_FALSE(config->insecure_skip_tls_verify);
  CHECK(config->token == "secret-token");
  CHECK(config->client_cert_data == "CERT");
  CHECK(config->client_key_data == "KEY!");
  CHECK(config->default_namespace == "team-a");
}

TEST_CASE("kubeconfig: an explicit context wins, relative paths resolve against its directory") {
  temp_dir dir;
  const auto path = dir.write("sub/config", two_context_kubeconfig);
  auto config = load_kubeconfig(path, "prod");
  REQUIRE(config.ok());
  CHECK(config->server == "https://[fd00::1]:443");
  CHECK(config->insecure_skip_tls_verify);
  CHECK(config->ca_file == (dir.path() / "sub/certs/ca.pem").string());
  CHECK(config->token_file == (dir.path() / "sub/tokens/prod").string());
  CHECK(config->client_cert_file == "/abs/client.crt");
  CHECK(config->client_key_file == (dir.path() / "sub/keys/client.key").string());
  CHECK(config->default_namespace == "default");
}

TEST_CASE("kubeconfig: unsupported and malformed inputs give errors naming the field") {
  temp_dir dir;
  SECTION("exec plugin without an apiVersion") {
    auto r = load_kubeconfig(dir.write("c", with_user("    exec: {command: aws}\n")));
    CHECK_THAT(error_of(r), Catch::Contains("user \"u\": exec: apiVersion \"\" is not"));
  }
  SECTION("exec plugin with a bad interactiveMode") {
    auto r = load_kubeconfig(dir.write(
        "c", with_user("    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, "
                       "interactiveMode: Sometimes}\n")));
    CHECK_THAT(error_of(r), Catch::Contains("interactiveMode \"Sometimes\" is not Never"));
  }
  SECTION("auth-provider") {
    auto r = load_kubeconfig(dir.write("c", with_user("    auth-provider: {name: gcp}\n")));
    CHECK_THAT(error_of(r), Catch::Contains("auth-provider plugins are not supported"));
  }
  SECTION("bad base64") {
    auto r = load_kubeconfig(dir.write("c", with_user("    client-certificate-data: '%%%'\n"
                                                      "    client-key-data: S0VZIQ==\n")));
    CHECK_THAT(error_of(r), Catch::Contains("client-certificate-data is not valid base64"));
  }
  SECTION("certificate without key") {
    auto r = load_kubeconfig(dir.write("c", with_user("    client-certificate: a.crt\n")));
    CHECK_THAT(error_of(r), Catch::Contains("needs both client-certificate and client-key"));
  }
  SECTION("token of the wrong type") {
    auto r = load_kubeconfig(dir.write("c", with_user("    token: [a, b]\n")));
    CHECK_THAT(error_of(r), Catch::Contains("user \"u\": token must be a string"));
  }
  SECTION("unknown context") {
    auto r = load_kubeconfig(dir.write("c", two_context_kubeconfig), "staging");
    CHECK_THAT(error_of(r), Catch::Contains("no context named \"staging\""));
  }
  SECTION("no current context") {
    auto r = load_kubeconfig(dir.write("c", "clusters: []\n"));
    CHECK_THAT(error_of(r), Catch::Contains("no current-context"));
  }
  SECTION("missing server") {
    auto r = load_kubeconfig(dir.write("c", "current-context: c\n"
                                            "clusters: [{name: k, cluster: {}}]\n"
                                            "contexts: [{name: c, context: {cluster: k}}]\n"));
    CHECK_THAT(error_of(r), Catch::Contains("cluster \"k\": server is missing"));
  }
  SECTION("bad server URL") {
    auto r = load_kubeconfig(dir.write("c", "current-context: c\n"
                                            "clusters: [{name: k, cluster: {server: 'ftp://x'}}]\n"
                                            "contexts: [{name: c, context: {cluster: k}}]\n"));
    CHECK_THAT(error_of(r), Catch::Contains("scheme must be https:// or http://"));
  }
  SECTION("bad boolean") {
    auto r = load_kubeconfig(dir.write(
        "c",
        "current-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://h', insecure-skip-tls-verify: maybe}}]\n"
        "contexts: [{name: c, context: {cluster: k}}]\n"));
    CHECK_THAT(error_of(r), Catch::Contains("insecure-skip-tls-verify must be true or false"));
  }
  SECTION("clusters is not a list") {
    auto r = load_kubeconfig(dir.write("c", "current-context: c\nclusters: 3\n"
                                            "contexts: [{name: c, context: {cluster: k}}]\n"));
    CHECK_THAT(error_of(r), Catch::Contains("clusters must be a list"));
  }
  SECTION("not YAML") {
    auto r = load_kubeconfig(dir.write("c", "current-context: [unterminated\n"));
    CHECK_THAT(error_of(r), Catch::Contains("not valid YAML"));
  }
  SECTION("not a map") {
    auto r = load_kubeconfig(dir.write("c", "- a\n- b\n"));
    CHECK_THAT(error_of(r), Catch::Contains("not a map"));
  }
  SECTION("missing file") {
    auto r = load_kubeconfig(dir.file("absent"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::not_found);
  }
}

TEST_CASE("kubeconfig: several files merge as kubectl merges KUBECONFIG") {
  temp_dir dir;
  // The first file sets the current context and its own cluster "shared"; the second names a
  // cluster "shared" too (ignored: the first definition wins), and defines the context, the
  // user (with a relative token file, resolved against the second file's directory) and a
  // current-context of its own (ignored).
  const auto first = dir.write("a/config", R"(
current-context: work
clusters:
- name: shared
  cluster: {server: 'https://first.example:6443'}
)");
  const auto second = dir.write("b/config", R"(
current-context: other
clusters:
- name: shared
  cluster: {server: 'https://second.example:6443'}
contexts:
- name: work
  context: {cluster: shared, user: me, namespace: team-b}
users:
- name: me
  user: {tokenFile: tokens/me}
)");
  auto config = load_kubeconfig(std::vector<std::string>{first, second});
  REQUIRE(config.ok());
  CHECK(config->server == "https://first.example:6443");
  CHECK(config->token_file == (dir.path() / "b/tokens/me").string());
  CHECK(config->default_namespace == "team-b");

  // In the other order the second file's definitions win, its current-context too.
  CHECK_THAT(error_of(load_kubeconfig(std::vector<std::string>{second, first})),
             Catch::Contains("no context named \"other\""));
  config = load_kubeconfig(std::vector<std::string>{second, first}, "work");
  REQUIRE(config.ok());
  CHECK(config->server == "https://second.example:6443");

  // An explicit context is looked up across all files; an unknown one names every file.
  CHECK_THAT(error_of(load_kubeconfig(std::vector<std::string>{first, second}, "nope")),
             Catch::Contains("no context named \"nope\"") && Catch::Contains(first) &&
                 Catch::Contains(second));
  // A malformed file is an error even when another file has everything.
  const auto broken = dir.write("c/config", "clusters: {not: a list}\n");
  CHECK_THAT(error_of(load_kubeconfig(std::vector<std::string>{broken, second})),
             Catch::Contains("clusters must be a list"));
}

TEST_CASE("kubeconfig search paths: KUBECONFIG's existing files in order, else ~/.kube/config") {
  temp_dir dir;
  const auto a = dir.write("a", "{}");
  const auto b = dir.write("b", "{}");
  const auto missing = dir.file("missing");
  const std::string list = b + ":" + missing + "::" + a + ":" + b;
  CHECK(kubeconfig_search_paths(list, dir.path().string()) == std::vector<std::string>{b, a});

  // Unset (or empty) KUBECONFIG: the home directory's config, when there is one.
  CHECK(kubeconfig_search_paths("", dir.path().string()).empty());
  const auto home_config = dir.write(".kube/config", "{}");
  CHECK(kubeconfig_search_paths("", dir.path().string()) == std::vector<std::string>{home_config});
  CHECK(kubeconfig_search_paths("", "").empty());
}

TEST_CASE("kubeconfig: an exec user, as EKS, GKE and AKS write them") {
  temp_dir dir;
  auto config = load_kubeconfig(dir.write("kube/config", with_user(R"(    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/get-token
      args: [eks, get-token, --cluster-name, prod]
      env: [{name: AWS_PROFILE, value: ops}]
      installHint: install the AWS CLI
      provideClusterInfo: true
      interactiveMode: Never
)")));
  REQUIRE(config.ok());
  REQUIRE(config->exec);
  const exec_config& exec = *config->exec;
  CHECK(exec.api_version == "client.authentication.k8s.io/v1beta1");
  CHECK(exec.command == (dir.path() / "kube/bin/get-token").string());
  CHECK(exec.args == std::vector<std::string>{"eks", "get-token", "--cluster-name", "prod"});
  REQUIRE(exec.env.size() == 1);
  CHECK(exec.env[0] == std::pair<std::string, std::string>{"AWS_PROFILE", "ops"});
  CHECK(exec.install_hint == "install the AWS CLI");
  CHECK(exec.provide_cluster_info);
  CHECK(exec.interactive_mode == exec_interactive_mode::never);

  // A bare command name is looked up in PATH, not next to the kubeconfig.
  auto bare = load_kubeconfig(
      dir.write("c2", with_user("    exec: {apiVersion: client.authentication.k8s.io/v1, command: "
                                "gke-gcloud-auth-plugin}\n")));
  REQUIRE(bare.ok());
  CHECK(bare->exec->command == "gke-gcloud-auth-plugin");
  CHECK(bare->exec->interactive_mode == exec_interactive_mode::if_available);
}

TEST_CASE("kubeconfig: a context without a user is anonymous") {
  temp_dir dir;
  auto r =
      load_kubeconfig(dir.write("c", "current-context: c\n"
                                     "clusters: [{name: k, cluster: {server: 'http://h:80'}}]\n"
                                     "contexts: [{name: c, context: {cluster: k}}]\n"));
  REQUIRE(r.ok());
  CHECK(r->server == "http://h:80");
  CHECK(r->token.empty());
  CHECK(r->token_file.empty());
}

TEST_CASE("in-cluster config reads the service account directory") {
  temp_dir dir;
  SECTION("complete") {
    dir.write("token", "tok-1\n");
    dir.write("ca.crt", "PEM");
    dir.write("namespace", "kube-system");
    auto r = in_cluster_config("10.96.0.1", "443", dir.path().string());
    REQUIRE(r.ok());
    CHECK(r->server == "https://10.96.0.1:443");
    CHECK(r->token == "tok-1");
    CHECK(r->token_file == dir.file("token"));
    CHECK(r->ca_file == dir.file("ca.crt"));
    CHECK(r->default_namespace == "kube-system");
  }
  SECTION("IPv6 hosts are bracketed; namespace defaults") {
    dir.write("token", "tok");
    dir.write("ca.crt", "PEM");
    auto r = in_cluster_config("fd00:10:96::1", "443", dir.path().string());
    REQUIRE(r.ok());
    CHECK(r->server == "https://[fd00:10:96::1]:443");
    CHECK(r->default_namespace == "default");
  }
  SECTION("missing token") {
    dir.write("ca.crt", "PEM");
    auto r = in_cluster_config("10.0.0.1", "443", dir.path().string());
    CHECK_THAT(error_of(r), Catch::Contains("service account token file"));
  }
  SECTION("missing CA") {
    dir.write("token", "tok");
    auto r = in_cluster_config("10.0.0.1", "443", dir.path().string());
    CHECK_THAT(error_of(r), Catch::Contains("service account CA file"));
  }
  SECTION("not in a cluster") {
    auto r = in_cluster_config("", "", dir.path().string());
    CHECK_THAT(error_of(r), Catch::Contains("KUBERNETES_SERVICE_HOST"));
  }
  SECTION("bad port") {
    dir.write("token", "tok");
    dir.write("ca.crt", "PEM");
    auto r = in_cluster_config("10.0.0.1", "http", dir.path().string());
    CHECK_THAT(error_of(r), Catch::Contains("port \"http\""));
  }
  SECTION("from the environment") {
    dir.write("token", "tok");
    dir.write("ca.crt", "PEM");
    ::setenv("KUBERNETES_SERVICE_HOST", "10.1.2.3", 1);
    ::setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
    auto r = in_cluster_config(dir.path().string());
    ::unsetenv("KUBERNETES_SERVICE_HOST");
    ::unsetenv("KUBERNETES_SERVICE_PORT");
    REQUIRE(r.ok());
    CHECK(r->server == "https://10.1.2.3:6443");
  }
}

TEST_CASE("server URLs are parsed and validated") {
  auto ep = parse_server_url("https://[::1]:8443/prefix/");
  REQUIRE(ep.ok());
  CHECK(ep->tls);
  CHECK(ep->host == "::1");
  CHECK(ep->port == "8443");
  CHECK(ep->base_path == "/prefix");

  auto plain = parse_server_url("http://127.0.0.1");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->tls);
  CHECK(plain->port == "80");
  CHECK(parse_server_url("https://h")->port == "443");

  for (const char* bad :
       {"h:443", "https://", "https://[::1", "https://::1:443", "https://h:0", "https://h:99999",
        "https://h:x", "https://h:", "https://u@h", "https://h/p?q=1", "https://[::1]x"}) {
    INFO(bad);
    auto r = parse_server_url(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::invalid_argument);
    CHECK_THAT(r.err().message, Catch::Contains("server URL"));
  }
  auto config = from_server_url("https://h:6443/");
  REQUIRE(config.ok());
  CHECK(config->server == "https://h:6443");
  CHECK_FALSE(from_server_url("nope").ok());
}

TEST_CASE("base64 decoding is strict") {
  CHECK(*decode_base64("YWI=") == "ab");
  for (std::string_view text : {"", "a", "ab", "abc", "user:p@ss", "\xff\x10"})
    CHECK(*decode_base64(encode_base64(text)) == text);
  CHECK(encode_base64("user:pass") == "dXNlcjpwYXNz");
  CHECK(*decode_base64("Q0VS\nVA==") == "CERT");
  CHECK(*decode_base64("") == "");
  CHECK_FALSE(decode_base64("YWI").ok());
  CHECK_FALSE(decode_base64("Y=WI").ok());
  CHECK_FALSE(decode_base64("YW*=").ok());
}
