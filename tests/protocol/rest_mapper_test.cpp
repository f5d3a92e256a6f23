#include "protocol/discovery.hpp"
#include "protocol/rest_mapper.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace kinformer;

namespace {

// Trimmed from a real 1.29 API server: the fields the mapper reads, and some it must skip.
const std::string core_versions = R"({
  "kind": "APIVersions",
  "versions": ["v1"],
  "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]
})";

const std::string core_v1 = R"({
  "kind": "APIResourceList",
  "groupVersion": "v1",
  "resources": [
    {"name": "configmaps", "singularName": "configmap", "namespaced": true, "kind": "ConfigMap",
     "verbs": ["create","delete","deletecollection","get","list","patch","update","watch"],
     "shortNames": ["cm"], "storageVersionHash": "qFsyl6wFWjQ="},
    {"name": "namespaces", "singularName": "namespace", "namespaced": false, "kind": "Namespace",
     "verbs": ["create","delete","get","list","patch","update","watch"], "shortNames": ["ns"]},
    {"name": "namespaces/status", "singularName": "", "namespaced": false, "kind": "Namespace",
     "verbs": ["get","patch","update"]},
    {"name": "nodes", "singularName": "node", "namespaced": false, "kind": "Node",
     "verbs": ["create","delete","deletecollection","get","list","patch","update","watch"],
     "shortNames": ["no"]},
    {"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod",
     "verbs": ["create","delete","deletecollection","get","list","patch","update","watch"],
     "shortNames": ["po"], "categories": ["all"]},
    {"name": "pods/log", "singularName": "", "namespaced": true, "kind": "Pod", "verbs": ["get"]},
    {"name": "pods/status", "singularName": "", "namespaced": true, "kind": "Pod",
     "verbs": ["get","patch","update"]},
    {"name": "events", "singularName": "event", "namespaced": true, "kind": "Event",
     "verbs": ["create","delete","get","list","watch"], "shortNames": ["ev"]}
  ]
})";

const std::string groups_without_crd = R"({
  "kind": "APIGroupList",
  "apiVersion": "v1",
  "groups": [
    {"name": "apps",
     "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
     "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}},
    {"name": "events.k8s.io",
     "versions": [{"groupVersion": "events.k8s.io/v1", "version": "v1"}],
     "preferredVersion": {"groupVersion": "events.k8s.io/v1", "version": "v1"}}
  ]
})";

const std::string groups_with_crd = R"({
  "kind": "APIGroupList",
  "apiVersion": "v1",
  "groups": [
    {"name": "apps",
     "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
     "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}},
    {"name": "events.k8s.io",
     "versions": [{"groupVersion": "events.k8s.io/v1", "version": "v1"}],
     "preferredVersion": {"groupVersion": "events.k8s.io/v1", "version": "v1"}},
    {"name": "example.com",
     "versions": [{"groupVersion": "example.com/v1beta1", "version": "v1beta1"},
                  {"groupVersion": "example.com/v1alpha1", "version": "v1alpha1"}],
     "preferredVersion": {"groupVersion": "example.com/v1beta1", "version": "v1beta1"}}
  ]
})";

const std::string apps_v1 = R"({
  "kind": "APIResourceList",
  "apiVersion": "v1",
  "groupVersion": "apps/v1",
  "resources": [
    {"name": "deployments", "singularName": "deployment", "namespaced": true,
     "kind": "Deployment",
     "verbs": ["create","delete","deletecollection","get","list","patch","update","watch"],
     "shortNames": ["deploy"], "categories": ["all"]},
    {"name": "deployments/scale", "singularName": "", "namespaced": true, "group": "autoscaling",
     "version": "v1", "kind": "Scale", "verbs": ["get","patch","update"]},
    {"name": "deployments/status", "singularName": "", "namespaced": true, "kind": "Deployment",
     "verbs": ["get","patch","update"]}
  ]
})";

const std::string events_v1 = R"({
  "kind": "APIResourceList",
  "groupVersion": "events.k8s.io/v1",
  "resources": [
    {"name": "events", "singularName": "event", "namespaced": true, "kind": "Event",
     "verbs": ["create","delete","get","list","watch"], "shortNames": ["ev"]}
  ]
})";

const std::string example_v1beta1 = R"({
  "kind": "APIResourceList",
  "apiVersion": "v1",
  "groupVersion": "example.com/v1beta1",
  "resources": [
    {"name": "widgets", "singularName": "widget", "namespaced": true, "kind": "Widget",
     "verbs": ["delete","deletecollection","get","list","patch","create","update","watch"],
     "shortNames": ["wg"]},
    {"name": "widgets/status", "singularName": "", "namespaced": true, "kind": "Widget",
     "verbs": ["get","patch","update"]},
    {"name": "gizmoclasses", "singularName": "gizmoclass", "namespaced": false,
     "kind": "GizmoClass", "verbs": ["get","list","watch"]}
  ]
})";

const std::string example_v1alpha1 = R"({
  "kind": "APIResourceList",
  "groupVersion": "example.com/v1alpha1",
  "resources": [
    {"name": "widgets", "singularName": "widget", "namespaced": true, "kind": "Widget",
     "verbs": ["get","list","watch"]}
  ]
})";

// A fake API server: canned bodies per path, counting every request.
struct fake_discovery {
  std::map<std::string, std::string> documents;
  std::vector<std::string> requests;

  discovery_fetch fetcher() {
    return [this](const std::string& path) -> result<std::string> {
      requests.push_back(path);
      auto it = documents.find(path);
      if (it == documents.end())
        return make_error(errc::not_found, "404 page not found");
      return it->second;
    };
  }
  void install_crd() {
    documents["/apis"] = groups_with_crd;
    documents["/apis/example.com/v1beta1"] = example_v1beta1;
    documents["/apis/example.com/v1alpha1"] = example_v1alpha1;
  }
};

fake_discovery cluster_without_crd() {
  fake_discovery d;
  d.documents = {{"/api", core_versions},
                 {"/api/v1", core_v1},
                 {"/apis", groups_without_crd},
                 {"/apis/apps/v1", apps_v1},
                 {"/apis/events.k8s.io/v1", events_v1}};
  return d;
}

fake_discovery cluster_with_crd() {
  auto d = cluster_without_crd();
  d.install_crd();
  return d;
}

} // namespace

TEST_CASE("discovery documents decode") {
  SECTION("APIVersions") {
    auto versions = decode_api_versions(core_versions);
    REQUIRE(versions.ok());
    CHECK(*versions == std::vector<std::string>{"v1"});
  }
  SECTION("APIGroupList keeps versions in order and the preferred one") {
    auto groups = decode_api_group_list(groups_with_crd);
    REQUIRE(groups.ok());
    REQUIRE(groups->size() == 3);
    const auto& example = (*groups)[2];
    CHECK(example.name == "example.com");
    CHECK(example.versions == std::vector<std::string>{"v1beta1", "v1alpha1"});
    CHECK(example.preferred_version == "v1beta1");
  }
  SECTION("APIResourceList skips subresources") {
    auto list = decode_api_resource_list(core_v1);
    REQUIRE(list.ok());
    CHECK(list->group_version == "v1");
    std::vector<std::string> names;
    for (const auto& r : list->resources)
      names.push_back(r.name);
    CHECK(names == std::vector<std::string>{"configmaps", "namespaces", "nodes", "pods", "events"});
    const auto& pods = list->resources[3];
    CHECK(pods.singular_name == "pod");
    CHECK(pods.kind == "Pod");
    CHECK(pods.namespaced);
    CHECK(pods.short_names == std::vector<std::string>{"po"});
    CHECK(std::find(pods.verbs.begin(), pods.verbs.end(), "watch") != pods.verbs.end());
    CHECK_FALSE(list->resources[1].namespaced);
  }
}

TEST_CASE("malformed discovery documents give clear errors") {
  struct bad {
    const char* body;
    errc code;
    const char* mentions;
  };
  SECTION("APIResourceList") {
    for (
        const auto& b : std::vector<bad>{
            {"", errc::invalid_json, "APIResourceList"},
            {R"({"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods")",
             errc::invalid_json, "APIResourceList"},
            {"[1,2]", errc::invalid_object, "not a JSON object"},
            {R"({"kind":"APIGroupList","groups":[]})", errc::invalid_object, "expected kind"},
            {R"({"kind":"APIResourceList","resources":[]})", errc::invalid_object,
             "missing groupVersion"},
            {R"({"kind":"APIResourceList","groupVersion":"v1","resources":{}})",
             errc::invalid_object, "resources"},
            {R"({"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods"}]})",
             errc::invalid_object, "missing kind"},
            {R"({"groupVersion":"v1","resources":[{"name":"pods","kind":"Pod","namespaced":"yes"}]})",
             errc::invalid_object, "namespaced"},
            {R"({"groupVersion":"v1","resources":[{"name":"pods","kind":"Pod","verbs":[1]}]})",
             errc::invalid_object, "verbs"},
            {R"({"groupVersion":"v1","resources":[{"name":7,"kind":"Pod"}]})", errc::invalid_object,
             "name"},
            {R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden: User cannot get path","reason":"Forbidden","code":403})",
             errc::status, "forbidden"},
        }) {
      INFO(b.body);
      auto list = decode_api_resource_list(b.body);
      REQUIRE_FALSE(list.ok());
      CHECK(list.err().code == b.code);
      CHECK_THAT(list.err().message, Catch::Contains(b.mentions));
    }
  }
  SECTION("APIGroupList") {
    for (const auto& b : std::vector<bad>{
             {"{", errc::invalid_json, "APIGroupList"},
             {R"({"kind":"APIGroupList"})", errc::invalid_object, "groups"},
             {R"({"groups":[{"versions":[]}]})", errc::invalid_object, "missing name"},
             {R"({"groups":[{"name":"apps","versions":"v1"}]})", errc::invalid_object, "apps"},
             {R"({"groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1"}]}]})",
              errc::invalid_object, "missing version"},
             {R"({"groups":[{"name":"apps","versions":[],"preferredVersion":"v1"}]})",
              errc::invalid_object, "preferredVersion"},
         }) {
      INFO(b.body);
      auto groups = decode_api_group_list(b.body);
      REQUIRE_FALSE(groups.ok());
      CHECK(groups.err().code == b.code);
      CHECK_THAT(groups.err().message, Catch::Contains(b.mentions));
    }
  }
  SECTION("APIVersions") {
    for (const auto& b : std::vector<bad>{
             {"null", errc::invalid_object, "not a JSON object"},
             {R"({"kind":"APIVersions","versions":[]})", errc::invalid_object, "no versions"},
             {R"({"kind":"APIVersions","versions":["v1",2]})", errc::invalid_object, "versions"},
         }) {
      INFO(b.body);
      auto versions = decode_api_versions(b.body);
      REQUIRE_FALSE(versions.ok());
      CHECK(versions.err().code == b.code);
      CHECK_THAT(versions.err().message, Catch::Contains(b.mentions));
    }
  }
  SECTION("a preferredVersion may be absent: the first version is preferred") {
    auto groups = decode_api_group_list(
        R"({"groups":[{"name":"x.io","versions":[{"version":"v2"},{"version":"v1"}]}]})");
    REQUIRE(groups.ok());
    CHECK((*groups)[0].preferred_version == "v2");
  }
}

TEST_CASE("kinds map to their resource and scope") {
  auto discovery = cluster_with_crd();
  rest_mapper mapper(discovery.fetcher());

  auto pod = mapper.mapping_for({"", "v1", "Pod"});
  REQUIRE(pod.ok());
  CHECK(pod->resource == group_version_resource{"", "v1", "pods"});
  CHECK(pod->scope == resource_scope::namespaced);

  auto node = mapper.mapping_for({"", "v1", "Node"});
  REQUIRE(node.ok());
  CHECK(node->resource.resource == "nodes");
  CHECK(node->scope == resource_scope::cluster);

  auto deployment = mapper.mapping_for({"apps", "", "Deployment"}); // group only
  REQUIRE(deployment.ok());
  CHECK(deployment->resource == group_version_resource{"apps", "v1", "deployments"});
  CHECK(deployment->kind == group_version_kind{"apps", "v1", "Deployment"});

  SECTION("a CRD: group only picks the preferred version, an explicit version is honoured") {
    auto preferred = mapper.mapping_for({"example.com", "", "Widget"});
    REQUIRE(preferred.ok());
    CHECK(preferred->resource == group_version_resource{"example.com", "v1beta1", "widgets"});
    auto alpha = mapper.mapping_for({"example.com", "v1alpha1", "Widget"});
    REQUIRE(alpha.ok());
    CHECK(alpha->resource.version == "v1alpha1");
    CHECK(alpha->verbs == std::vector<std::string>{"get", "list", "watch"});
    auto cluster_scoped = mapper.mapping_for({"example.com", "", "GizmoClass"});
    REQUIRE(cluster_scoped.ok());
    CHECK(cluster_scoped->resource.resource == "gizmoclasses");
    CHECK(cluster_scoped->scope == resource_scope::cluster);
  }
  SECTION("the same kind in another group is a different mapping") {
    auto core_event = mapper.mapping_for({"", "", "Event"});
    auto events_event = mapper.mapping_for({"events.k8s.io", "", "Event"});
    REQUIRE(core_event.ok());
    REQUIRE(events_event.ok());
    CHECK(core_event->resource.group.empty());
    CHECK(events_event->resource.group == "events.k8s.io");
  }
  // Everything above came from one read of discovery.
  CHECK(mapper.refresh_count() == 1);
}

TEST_CASE("kubectl-style resource names") {
  auto discovery = cluster_with_crd();
  rest_mapper mapper(discovery.fetcher());
  struct expectation {
    const char* argument;
    group_version_resource resource;
    const char* kind;
    resource_scope scope;
  };
  for (const auto& e : std::vector<expectation>{
           {"pods", {"", "v1", "pods"}, "Pod", resource_scope::namespaced},
           {"pod", {"", "v1", "pods"}, "Pod", resource_scope::namespaced},
           {"po", {"", "v1", "pods"}, "Pod", resource_scope::namespaced},
           {"Pods", {"", "v1", "pods"}, "Pod", resource_scope::namespaced},
           {"ns", {"", "v1", "namespaces"}, "Namespace", resource_scope::cluster},
           {"nodes", {"", "v1", "nodes"}, "Node", resource_scope::cluster},
           {"cm", {"", "v1", "configmaps"}, "ConfigMap", resource_scope::namespaced},
           {"deployments", {"apps", "v1", "deployments"}, "Deployment", resource_scope::namespaced},
           {"deploy", {"apps", "v1", "deployments"}, "Deployment", resource_scope::namespaced},
           {"deployments.apps",
            {"apps", "v1", "deployments"},
            "Deployment",
            resource_scope::namespaced},
           {"deployment.apps",
            {"apps", "v1", "deployments"},
            "Deployment",
            resource_scope::namespaced},
           {"deployments.v1.apps",
            {"apps", "v1", "deployments"},
            "Deployment",
            resource_scope::namespaced},
           {"widgets.example.com",
            {"example.com", "v1beta1", "widgets"},
            "Widget",
            resource_scope::namespaced},
           {"widgets.v1alpha1.example.com",
            {"example.com", "v1alpha1", "widgets"},
            "Widget",
            resource_scope::namespaced},
           {"wg", {"example.com", "v1beta1", "widgets"}, "Widget", resource_scope::namespaced},
           {"gizmoclasses",
            {"example.com", "v1beta1", "gizmoclasses"},
            "GizmoClass",
            resource_scope::cluster},
           // The core group comes first, as in kubectl; the group qualifier picks the other.
           {"events", {"", "v1", "events"}, "Event", resource_scope::namespaced},
           {"events.events.k8s.io",
            {"events.k8s.io", "v1", "events"},
            "Event",
            resource_scope::namespaced},
       }) {
    INFO(e.argument);
    auto mapping = mapper.resource_for(e.argument);
    REQUIRE(mapping.ok());
    CHECK(mapping->resource == e.resource);
    CHECK(mapping->kind.kind == e.kind);
    CHECK(mapping->kind.gv() == e.resource.gv());
    CHECK(mapping->scope == e.scope);
  }
  CHECK(mapper.refresh_count() == 1);
}

TEST_CASE("a miss re-reads discovery once and finds a CRD installed after start") {
  auto discovery = cluster_without_crd();
  rest_mapper mapper(discovery.fetcher());
  REQUIRE(mapper.resource_for("pods").ok());
  CHECK(mapper.refresh_count() == 1);

  discovery.install_crd();
  auto widget = mapper.resource_for("widgets.example.com");
  REQUIRE(widget.ok());
  CHECK(widget->resource == group_version_resource{"example.com", "v1beta1", "widgets"});
  CHECK(mapper.refresh_count() == 2);

  // Known now: no further discovery traffic.
  auto requests_before = discovery.requests.size();
  CHECK(mapper.mapping_for({"example.com", "", "Widget"}).ok());
  CHECK(discovery.requests.size() == requests_before);
}

TEST_CASE("an unknown kind or resource is a no_match naming it, after one refresh") {
  auto discovery = cluster_with_crd();
  rest_mapper mapper(discovery.fetcher());

  auto kind = mapper.mapping_for({"example.com", "", "Sprocket"});
  REQUIRE_FALSE(kind.ok());
  CHECK(kind.err().code == errc::no_match);
  CHECK_THAT(kind.err().message, Catch::Contains("Sprocket") && Catch::Contains("example.com"));
  // The first lookup read discovery and found nothing: no second read in the same lookup.
  CHECK(mapper.refresh_count() == 1);

  auto resource = mapper.resource_for("sprockets.example.com");
  REQUIRE_FALSE(resource.ok());
  CHECK(resource.err().code == errc::no_match);
  CHECK_THAT(resource.err().message, Catch::Contains("sprockets.example.com"));
  CHECK(mapper.refresh_count() == 2); // one refresh for this miss, not more

  auto wrong_version = mapper.mapping_for({"apps", "v1beta2", "Deployment"});
  REQUIRE_FALSE(wrong_version.ok());
  CHECK_THAT(wrong_version.err().message, Catch::Contains("v1beta2"));

  auto wrong_group = mapper.resource_for("pods.apps");
  REQUIRE_FALSE(wrong_group.ok());
  CHECK(wrong_group.err().code == errc::no_match);

  for (const char* invalid : {"", ".pods", "pods."}) {
    auto r = mapper.resource_for(invalid);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::invalid_argument);
  }
}

TEST_CASE("discovery failures") {
  SECTION("an unreadable /api fails the lookup with the cause") {
    auto discovery = cluster_without_crd();
    discovery.documents["/api"] = "{\"kind\":\"APIVersions\",\"versions\":[";
    rest_mapper mapper(discovery.fetcher());
    auto r = mapper.resource_for("pods");
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::invalid_json);
    CHECK_THAT(r.err().message, Catch::StartsWith("/api:"));
  }
  SECTION("/apis unreachable") {
    auto discovery = cluster_without_crd();
    discovery.documents.erase("/apis");
    rest_mapper mapper(discovery.fetcher());
    auto r = mapper.refresh();
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::not_found);
    CHECK_THAT(r.err().message, Catch::Contains("/apis"));
  }
  SECTION("one broken group version does not hide the others") {
    auto discovery = cluster_with_crd();
    discovery.documents["/apis/example.com/v1beta1"] =
        R"({"kind":"APIResourceList","groupVersion":)";
    rest_mapper mapper(discovery.fetcher());
    REQUIRE(mapper.refresh().ok());
    REQUIRE(mapper.failed_group_versions().size() == 1);
    CHECK_THAT(mapper.failed_group_versions()[0].message,
               Catch::Contains("/apis/example.com/v1beta1"));
    CHECK(mapper.resource_for("deployments").ok());
    // Widgets are still served by the other version.
    auto widget = mapper.mapping_for({"example.com", "", "Widget"});
    REQUIRE(widget.ok());
    CHECK(widget->resource.version == "v1alpha1");
    // A miss names the broken group version, so the user knows why.
    auto gizmo = mapper.resource_for("gizmoclasses");
    REQUIRE_FALSE(gizmo.ok());
    CHECK(gizmo.err().code == errc::no_match);
    CHECK_THAT(gizmo.err().message, Catch::Contains("example.com/v1beta1"));
  }
  SECTION("a document for the wrong group version is rejected") {
    auto discovery = cluster_without_crd();
    discovery.documents["/apis/apps/v1"] = events_v1;
    rest_mapper mapper(discovery.fetcher());
    REQUIRE(mapper.refresh().ok());
    REQUIRE(mapper.failed_group_versions().size() == 1);
    CHECK_THAT(mapper.failed_group_versions()[0].message, Catch::Contains("expected \"apps/v1\""));
    CHECK_FALSE(mapper.resource_for("deployments").ok());
  }
}
