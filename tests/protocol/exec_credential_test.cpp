#include "protocol/exec_credential.hpp"
#include "tests/protocol/support/temp_dir.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kinformer;
using kinformer::test::temp_dir;
using namespace std::chrono;

namespace {

constexpr const char* v1 = "client.authentication.k8s.io/v1";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A plugin script: records its arguments, FOO and KUBERNETES_EXEC_INFO, counts its runs, and
// prints `credential_json`.
std::string write_plugin(const temp_dir& dir, const std::string& credential_json,
                         int exit_code = 0) {
  const std::string path = dir.write("plugin.sh", "#!/bin/sh\n"
                                                  "echo \"$@\" > \"" +
                                                      dir.file("args") +
                                                      "\"\n"
                                                      "echo \"$FOO\" > \"" +
                                                      dir.file("foo") +
                                                      "\"\n"
                                                      "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"" +
                                                      dir.file("info") +
                                                      "\"\n"
                                                      "echo run >> \"" +
                                                      dir.file("runs") +
                                                      "\"\n"
                                                      "cat <<'JSON'\n" +
                                                      credential_json +
                                                      "\nJSON\n"
                                                      "exit " +
                                                      std::to_string(exit_code) + "\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

std::string credential(const std::string& status) {
  return std::string(R"({"apiVersion":")") + v1 + R"(","kind":"ExecCredential","status":)" +
         status + "}";
}

std::size_t runs(const temp_dir& dir) {
  const std::string text = read_text(dir.file("runs"));
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

} // namespace

TEST_CASE("RFC 3339 times, as expirationTimestamp carries them") {
  const auto t = parse_rfc3339("2026-11-25T08:00:00Z");
  REQUIRE(t);
  CHECK(duration_cast<seconds>(t->time_since_epoch()).count() == 1795593600);
  CHECK(parse_rfc3339("2026-11-25T09:30:00+01:30") == t);
  CHECK(parse_rfc3339("2026-11-25T08:00:00.123456789Z") == t);
  for (const char* bad : {"", "2026-11-25", "2026-11-25 08:00:00Z", "2026-13-01T00:00:00Z",
                          "2026-02-30T00:00:00Z", "2026-11-25T08:00:00", "2026-11-25T08:00:00Zx"}) {
    INFO(bad);
    CHECK_FALSE(parse_rfc3339(bad));
  }
}

TEST_CASE("ExecCredential: a token or a certificate and key, of the apiVersion asked for") {
  auto token = parse_exec_credential(
      credential(R"({"token":"t-1","expirationTimestamp":"2026-11-25T08:00:00Z"})"), v1);
  REQUIRE(token.ok());
  CHECK(token->token == "t-1");
  CHECK(token->expiration == parse_rfc3339("2026-11-25T08:00:00Z"));

  auto cert = parse_exec_credential(
      credential(R"({"clientCertificateData":"CERT","clientKeyData":"KEY"})"), v1);
  REQUIRE(cert.ok());
  CHECK(cert->client_certificate_data == "CERT");
  CHECK_FALSE(cert->expiration);

  const std::pair<std::string, std::string> bad[] = {
      {"not json", "not JSON"},
      {credential(R"({"token":"t"})"), ""}, // placeholder: replaced below for apiVersion
      {credential("{}"), "neither a token nor a client certificate"},
      {credential(R"({"clientCertificateData":"C"})"), "without its key"},
      {credential(R"({"token":"t","expirationTimestamp":"soon"})"), "not an RFC 3339 time"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})", "no status"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"Pod","status":{}})",
       "not ExecCredential"},
  };
  for (const auto& [text, message] : bad) {
    if (message.empty())
      continue;
    INFO(text);
    auto parsed = parse_exec_credential(text, v1);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.err().code == errc::credentials);
    CHECK_THAT(parsed.err().message, Catch::Contains(message));
  }
  auto other_version =
      parse_exec_credential(credential(R"({"token":"t"})"), "client.authentication.k8s.io/v1beta1");
  REQUIRE_FALSE(other_version.ok());
  CHECK_THAT(other_version.err().message, Catch::Contains("the kubeconfig asked for"));
}

TEST_CASE("exec plugin: arguments, environment and KUBERNETES_EXEC_INFO, as client-go sets them") {
  temp_dir dir;
  exec_config config;
  config.api_version = v1;
  config.command = write_plugin(dir, credential(R"({"token":"from-plugin"})"));
  config.args = {"get-token", "--cluster", "dev"};
  config.env = {{"FOO", "bar"}};
  config.provide_cluster_info = true;
  exec_cluster_info cluster;
  cluster.server = "https://dev.example:6443";
  cluster.certificate_authority_data = "PEM";

  auto got = run_exec_plugin(config, cluster, false);
  REQUIRE(got.ok());
  CHECK(got->token == "from-plugin");
  CHECK(read_text(dir.file("args")) == "get-token --cluster dev\n");
  CHECK(read_text(dir.file("foo")) == "bar\n");
  const auto info = boost::json::parse(read_text(dir.file("info")));
  CHECK(info.at("kind") == "ExecCredential");
  CHECK(info.at("apiVersion") == v1);
  CHECK(info.at("spec").at("interactive") == false);
  CHECK(info.at("spec").at("cluster").at("server") == "https://dev.example:6443");
  CHECK(info.at("spec").at("cluster").at("certificate-authority-data") == "UEVN"); // base64
}

TEST_CASE("exec plugin failures are clear errors") {
  temp_dir dir;
  exec_config config;
  config.api_version = v1;
  SECTION("a command that is not installed names the install hint") {
    config.command = "kinformer-no-such-plugin";
    config.install_hint = "install it with: apt install no-such-plugin";
    auto got = run_exec_plugin(config, {}, false);
    REQUIRE_FALSE(got.ok());
    CHECK_THAT(got.err().message, Catch::Contains("not found; install it with"));
  }
  SECTION("a failing plugin") {
    config.command = write_plugin(dir, credential(R"({"token":"t"})"), 3);
    CHECK_THAT(run_exec_plugin(config, {}, false).err().message,
               Catch::Contains("exited with status 3"));
  }
  SECTION("interactiveMode Always without a terminal") {
    config.command = write_plugin(dir, credential(R"({"token":"t"})"));
    config.interactive_mode = exec_interactive_mode::always;
    CHECK_THAT(run_exec_plugin(config, {}, false).err().message,
               Catch::Contains("standard input is not a terminal"));
    CHECK_FALSE(std::filesystem::exists(dir.file("runs"))); // never started
  }
  SECTION("an apiVersion client-go does not know") {
    config.api_version = "client.authentication.k8s.io/v1alpha1";
    config.command = "true";
    CHECK_THAT(run_exec_plugin(config, {}, false).err().message,
               Catch::Contains("is not client.authentication.k8s.io/v1 or v1beta1"));
  }
}

TEST_CASE("exec credential cache: runs the plugin again only after expiry or a 401") {
  temp_dir dir;
  exec_config config;
  config.api_version = v1;
  config.interactive_mode = exec_interactive_mode::never;
  bool changed = false;

  SECTION("an expiry an hour away: one run, until invalidated") {
    config.command = write_plugin(
        dir, credential(R"({"token":"t","expirationTimestamp":"2999-01-01T00:00:00Z"})"));
    exec_credential_cache cache(config, {});
    for (int i = 0; i < 3; ++i)
      REQUIRE(cache.current(changed).ok());
    CHECK(runs(dir) == 1);
    cache.invalidate();
    REQUIRE(cache.current(changed).ok());
    CHECK_FALSE(changed); // the same token again
    CHECK(runs(dir) == 2);
  }
  SECTION("an expiry in the past: a run every time") {
    config.command = write_plugin(
        dir, credential(R"({"token":"t","expirationTimestamp":"2001-01-01T00:00:00Z"})"));
    exec_credential_cache cache(config, {});
    REQUIRE(cache.current(changed).ok());
    CHECK(changed);
    REQUIRE(cache.current(changed).ok());
    CHECK(runs(dir) == 2);
  }
}
