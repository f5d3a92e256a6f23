// deploy/: `kubectl kustomize deploy/` renders (offline), with every object the service needs,
// a ClusterRole granting exactly get/list/watch on the configured informers' resources, a
// hardened Deployment whose probes hit the metrics port, and a ConfigMap kinformerd accepts.
// Fails when kubectl is not on PATH (deploy/install-deps.sh installs it).

#include "app/kinformerd/config.hpp"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <sys/wait.h>

using namespace kinformer::service;

namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path)
    return false;
  std::string dirs = path;
  for (std::size_t start = 0; start <= dirs.size();) {
    const auto end = std::min(dirs.find(':', start), dirs.size());
    if (std::filesystem::exists(std::filesystem::path(dirs.substr(start, end - start)) / program))
      return true;
    start = end + 1;
  }
  return false;
}

struct command_output {
  int status = -1;
  std::string text;
};

command_output run(const std::string& command) {
  command_output out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe);
  char buffer[4096];
  while (auto n = std::fread(buffer, 1, sizeof buffer, pipe))
    out.text.append(buffer, n);
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The rendered objects by kind; each kind's objects in order.
std::map<std::string, std::vector<YAML::Node>> render_deploy() {
  const auto rendered = run("kubectl kustomize '" KINFORMER_SOURCE_DIR "/deploy' 2>&1");
  INFO(rendered.text);
  REQUIRE(rendered.status == 0);
  std::map<std::string, std::vector<YAML::Node>> by_kind;
  for (const auto& doc : YAML::LoadAll(rendered.text))
    by_kind[doc["kind"].as<std::string>()].push_back(doc);
  return by_kind;
}

std::set<std::string> strings(const YAML::Node& list) {
  std::set<std::string> values;
  for (const auto& v : list)
    values.insert(v.as<std::string>());
  return values;
}

// "deployments.apps" -> {"apps", "deployments"}; "pods" -> {"", "pods"}.
std::pair<std::string, std::string> group_and_resource(const std::string& name) {
  const auto dot = name.find('.');
  if (dot == std::string::npos)
    return {"", name};
  return {name.substr(dot + 1), name.substr(0, dot)};
}

} // namespace

TEST_CASE("kubectl kustomize deploy/ renders the whole service", "[deploy]") {
  if (!on_path("kubectl"))
    FAIL("kubectl is not on PATH: deploy/install-deps.sh installs it");
  auto objects = render_deploy();
  for (const char* kind :
       {"Namespace", "ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment",
        "PodDisruptionBudget", "Service", "ServiceMonitor", "NetworkPolicy"}) {
    INFO(kind);
    CHECK(objects[kind].size() == 1);
  }
  // One ClusterRole (and binding) to read the informers' resources, one for access reviews.
  REQUIRE(objects["ClusterRole"].size() == 2);
  REQUIRE(objects["ClusterRoleBinding"].size() == 2);
  auto named = [&](const char* kind, const std::string& name) {
    for (const auto& o : objects[kind])
      if (o["metadata"]["name"].as<std::string>() == name)
        return o;
    FAIL(kind << " " << name << " is not rendered");
    return YAML::Node();
  };
  const YAML::Node reader = named("ClusterRole", "kinformerd");
  const YAML::Node reviewer = named("ClusterRole", "kinformerd-access-review");
  const std::string ns = objects["Namespace"].at(0)["metadata"]["name"].as<std::string>();
  for (const char* kind : {"ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment",
                           "PodDisruptionBudget", "Service", "ServiceMonitor"})
    CHECK(objects[kind].at(0)["metadata"]["namespace"].as<std::string>() == ns);

  // The ConfigMap is the example config, and kinformerd accepts it.
  const auto& config_map = objects["ConfigMap"].at(0);
  auto config = parse_config_text(config_map["data"]["config.yaml"].as<std::string>(), "ConfigMap");
  INFO((config ? "" : config.err().describe()));
  REQUIRE(config.ok());
  CHECK(config->cluster.mode == connection_mode::in_cluster);

  SECTION("the ClusterRole reads exactly the configured resources") {
    std::set<std::pair<std::string, std::string>> granted;
    for (const auto& rule : reader["rules"]) {
      CHECK(strings(rule["verbs"]) == std::set<std::string>{"get", "list", "watch"});
      CHECK_FALSE(rule["nonResourceURLs"]);
      for (const auto& group : rule["apiGroups"])
        for (const auto& resource : rule["resources"]) {
          CHECK(resource.as<std::string>() != "*");
          granted.emplace(group.as<std::string>(), resource.as<std::string>());
        }
    }
    std::set<std::pair<std::string, std::string>> configured;
    for (const auto& informer : config->informers)
      configured.insert(group_and_resource(informer.resource));
    CHECK(granted == configured);

    for (const char* role : {"kinformerd", "kinformerd-access-review"}) {
      const YAML::Node binding = named("ClusterRoleBinding", role);
      CHECK(binding["roleRef"]["name"].as<std::string>() == role);
      const auto& subject = binding["subjects"][0];
      CHECK(subject["kind"].as<std::string>() == "ServiceAccount");
      CHECK(subject["name"].as<std::string>() ==
            objects["ServiceAccount"].at(0)["metadata"]["name"].as<std::string>());
      CHECK(subject["namespace"].as<std::string>() == ns);
    }
  }

  SECTION("the access-review ClusterRole creates TokenReviews and SubjectAccessReviews only") {
    std::set<std::pair<std::string, std::string>> granted;
    for (const auto& rule : reviewer["rules"]) {
      CHECK(strings(rule["verbs"]) == std::set<std::string>{"create"});
      for (const auto& group : rule["apiGroups"])
        for (const auto& resource : rule["resources"])
          granted.emplace(group.as<std::string>(), resource.as<std::string>());
    }
    CHECK(granted == std::set<std::pair<std::string, std::string>>{
                         {"authentication.k8s.io", "tokenreviews"},
                         {"authorization.k8s.io", "subjectaccessreviews"}});
    // The shipped config turns the checks on.
    CHECK_FALSE(config->listen.api_anonymous.value_or(false));
    CHECK(config->listen.api_authorization == "subjectaccessreview");
    CHECK(config->listen.api_token_file.empty());
  }

  SECTION("the Deployment is hardened, probed and mounts the generated ConfigMap") {
    const auto& pod = objects["Deployment"].at(0)["spec"]["template"]["spec"];
    CHECK(pod["serviceAccountName"].as<std::string>() ==
          objects["ServiceAccount"].at(0)["metadata"]["name"].as<std::string>());
    CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
    CHECK(pod["securityContext"]["seccompProfile"]["type"].as<std::string>() == "RuntimeDefault");
    REQUIRE(pod["containers"].size() == 1);
    const auto& container = pod["containers"][0];
    CHECK(container["securityContext"]["readOnlyRootFilesystem"].as<bool>());
    CHECK(container["securityContext"]["allowPrivilegeEscalation"].as<bool>() == false);
    CHECK(strings(container["securityContext"]["capabilities"]["drop"]) ==
          std::set<std::string>{"ALL"});
    CHECK(container["resources"]["requests"]["memory"]);
    CHECK(container["resources"]["limits"]["memory"]);
    CHECK(container["livenessProbe"]["httpGet"]["path"].as<std::string>() == "/healthz");
    CHECK(container["livenessProbe"]["httpGet"]["port"].as<std::string>() == "metrics");
    CHECK(container["readinessProbe"]["httpGet"]["path"].as<std::string>() == "/readyz");
    CHECK(container["readinessProbe"]["httpGet"]["port"].as<std::string>() == "metrics");

    std::map<std::string, int> ports;
    for (const auto& port : container["ports"])
      ports[port["name"].as<std::string>()] = port["containerPort"].as<int>();
    // The container ports are where the config's listen addresses put the servers.
    CHECK(config->listen.api.ends_with(":" + std::to_string(ports.at("api"))));
    CHECK(config->listen.metrics.ends_with(":" + std::to_string(ports.at("metrics"))));

    // kustomize appends a content hash to the generated name and rewrites the reference.
    CHECK(pod["volumes"][0]["configMap"]["name"].as<std::string>() ==
          config_map["metadata"]["name"].as<std::string>());
    CHECK(container["volumeMounts"][0]["mountPath"].as<std::string>() == "/etc/kinformerd");
  }

  SECTION("two replicas elect a leader: a PodDisruptionBudget keeps one, a Role grants only "
          "the configured Lease, and each pod knows its name") {
    REQUIRE(config->leader_election.enabled);
    const auto& deployment = objects["Deployment"].at(0);
    CHECK(deployment["spec"]["replicas"].as<int>() == 2);
    const auto& pdb = objects["PodDisruptionBudget"].at(0);
    CHECK(pdb["spec"]["minAvailable"].as<int>() == 1);
    for (const auto& label : pdb["spec"]["selector"]["matchLabels"])
      CHECK(deployment["spec"]["template"]["metadata"]["labels"][label.first.as<std::string>()]
                .as<std::string>() == label.second.as<std::string>());

    // create (which no resourceName can limit), then get and update of the one Lease.
    std::set<std::string> create_verbs, named_verbs;
    for (const auto& rule : objects["Role"].at(0)["rules"]) {
      CHECK(strings(rule["apiGroups"]) == std::set<std::string>{"coordination.k8s.io"});
      CHECK(strings(rule["resources"]) == std::set<std::string>{"leases"});
      if (rule["resourceNames"]) {
        CHECK(strings(rule["resourceNames"]) ==
              std::set<std::string>{config->leader_election.lease_name});
        named_verbs = strings(rule["verbs"]);
      } else {
        create_verbs = strings(rule["verbs"]);
      }
    }
    CHECK(create_verbs == std::set<std::string>{"create"});
    CHECK(named_verbs == std::set<std::string>{"get", "update"});
    const auto& binding = objects["RoleBinding"].at(0);
    CHECK(binding["roleRef"]["name"].as<std::string>() ==
          objects["Role"].at(0)["metadata"]["name"].as<std::string>());
    CHECK(binding["subjects"][0]["name"].as<std::string>() ==
          objects["ServiceAccount"].at(0)["metadata"]["name"].as<std::string>());

    const auto& env = deployment["spec"]["template"]["spec"]["containers"][0]["env"];
    bool pod_name = false;
    for (const auto& var : env)
      if (var["name"].as<std::string>() == "POD_NAME")
        pod_name = var["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>() == "metadata.name";
    CHECK(pod_name);
  }

  SECTION("the Service exposes the read API and metrics, announced for scraping") {
    const auto& service = objects["Service"].at(0);
    CHECK(service["metadata"]["annotations"]["prometheus.io/scrape"].as<std::string>() == "true");
    CHECK(service["metadata"]["annotations"]["prometheus.io/port"].as<std::string>() == "9090");
    std::set<std::string> names;
    for (const auto& port : service["spec"]["ports"])
      names.insert(port["name"].as<std::string>());
    CHECK(names == std::set<std::string>{"api", "metrics"});

    const auto& monitor = objects["ServiceMonitor"].at(0);
    CHECK(monitor["spec"]["endpoints"][0]["port"].as<std::string>() == "metrics");
    CHECK(monitor["spec"]["endpoints"][0]["path"].as<std::string>() == "/metrics");
    // The monitor's selector picks the Service.
    for (const auto& label : monitor["spec"]["selector"]["matchLabels"])
      CHECK(service["metadata"]["labels"][label.first.as<std::string>()].as<std::string>() ==
            label.second.as<std::string>());
  }
}
