#include "app/common/client_flags.hpp"
#include "tests/protocol/support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

using namespace kinformer;
using kinformer::test::temp_dir;

namespace {

// Sets an environment variable for one scope and restores it after.
class scoped_env {
public:
  scoped_env(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
  ~scoped_env() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char* name_;
  std::optional<std::string> old_;
};

const char* clusters_file = R"(
current-context: dev
clusters:
- name: dev
  cluster: {server: 'https://dev.example:6443'}
- name: prod
  cluster: {server: 'https://prod.example:6443'}
)";

const char* contexts_file = R"(
contexts:
- name: dev
  context: {cluster: dev, user: dev-user, namespace: team-a}
- name: prod
  context: {cluster: prod, user: prod-user}
users:
- name: dev-user
  user: {token: dev-token}
- name: prod-user
  user: {token: prod-token}
)";

} // namespace

TEST_CASE("client flags: the connection comes from KUBECONFIG's files, merged, at --context") {
  temp_dir dir;
  const auto a = dir.write("a", clusters_file);
  const auto b = dir.write("b", contexts_file);
  scoped_env kubeconfig("KUBECONFIG", a + ":" + b);
  scoped_env home("HOME", dir.path().string());

  client_flags flags;
  auto config = resolve_connection(flags);
  REQUIRE(config.ok());
  CHECK(config->server == "https://dev.example:6443");
  CHECK(config->token == "dev-token");
  CHECK(*resolve_namespace(flags, *config) == "team-a");

  flags.context = "prod";
  config = resolve_connection(flags);
  REQUIRE(config.ok());
  CHECK(config->server == "https://prod.example:6443");
  CHECK(config->token == "prod-token");
  CHECK(*resolve_namespace(flags, *config) == "default");

  SECTION("-n wins over the context's namespace, -A means all, both is an error") {
    flags.context.clear();
    config = resolve_connection(flags);
    REQUIRE(config.ok());
    flags.namespace_ = "other";
    CHECK(*resolve_namespace(flags, *config) == "other");
    flags.namespace_.clear();
    flags.all_namespaces = true;
    CHECK(resolve_namespace(flags, *config)->empty());
    flags.namespace_ = "other";
    CHECK_FALSE(resolve_namespace(flags, *config).ok());
  }
  SECTION("--server and --token override what the kubeconfig says") {
    flags.server = "https://override.example:443/";
    flags.token = "mine";
    config = resolve_connection(flags);
    REQUIRE(config.ok());
    CHECK(config->server == "https://override.example:443");
    CHECK(config->token == "mine");
    CHECK(config->default_namespace == "default"); // prod's context names none
  }
  SECTION("--server alone reads no kubeconfig: a bare URL gets no context's credentials") {
    client_flags bare;
    bare.server = "http://127.0.0.1:8080";
    config = resolve_connection(bare);
    REQUIRE(config.ok());
    CHECK(config->server == "http://127.0.0.1:8080");
    CHECK(config->token.empty());
    CHECK(*resolve_namespace(bare, *config) == "default");
  }
  SECTION("--kubeconfig names one file, which alone is read") {
    client_flags one;
    one.kubeconfig = a; // clusters only: the context is in the other file
    CHECK_THAT(resolve_connection(one).err().describe(), Catch::Contains("no context named"));
  }
}

TEST_CASE("client flags: without KUBECONFIG, ~/.kube/config, without any, in-cluster or an error") {
  temp_dir dir;
  scoped_env kubeconfig("KUBECONFIG", "");
  scoped_env home("HOME", dir.path().string());
  scoped_env host("KUBERNETES_SERVICE_HOST", "");
  scoped_env port("KUBERNETES_SERVICE_PORT", "");

  client_flags flags;
  auto none = resolve_connection(flags);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.err().describe(), Catch::Contains("--server URL or --kubeconfig FILE"));
  flags.context = "dev";
  CHECK_THAT(resolve_connection(flags).err().describe(),
             Catch::Contains("--context dev: no kubeconfig"));

  dir.write(".kube/config", std::string(clusters_file) + contexts_file);
  auto config = resolve_connection(flags);
  REQUIRE(config.ok());
  CHECK(config->server == "https://dev.example:6443");
}
