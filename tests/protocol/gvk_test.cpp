#include "protocol/gvk.hpp"

#include <catch2/catch.hpp>

using namespace kinformer;

TEST_CASE("apiVersion splits into group and version") {
  CHECK(group_version::from_api_version("v1") == group_version{"", "v1"});
  CHECK(group_version::from_api_version("apps/v1") == group_version{"apps", "v1"});
  CHECK(group_version{"", "v1"}.api_version() == "v1");
  CHECK(group_version{"apps", "v1"}.api_version() == "apps/v1");
}

TEST_CASE("resources know their URL prefix") {
  CHECK(group_version_resource{"", "v1", "pods"}.api_prefix() == "/api/v1");
  CHECK(group_version_resource{"apps", "v1", "deployments"}.api_prefix() == "/apis/apps/v1");
  CHECK(group_version_kind{"apps", "v1", "Deployment"}.to_string() == "apps/v1, Kind=Deployment");
}

TEST_CASE("object keys are namespace/name, or name when cluster-scoped") {
  CHECK(make_object_key("default", "web") == "default/web");
  CHECK(make_object_key("", "node-1") == "node-1");
  auto k = split_object_key("default/web");
  CHECK(k.ns == "default");
  CHECK(k.name == "web");
  auto c = split_object_key("node-1");
  CHECK(c.ns.empty());
  CHECK(c.name == "node-1");
}
