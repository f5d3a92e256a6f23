// The field labels each built-in kind accepts, and the real server's words for the others
// (app/apiserver/field_labels.hpp), as kube-apiserver v1.37.2 answered them.

#include "app/apiserver/field_labels.hpp"

#include <catch2/catch.hpp>

using namespace kinformer;
using namespace kinformer::apiserver;

namespace {

resource_info builtin(std::string group, std::string resource, std::string kind) {
  resource_info info;
  info.gvr = {std::move(group), "v1", std::move(resource)};
  info.kind = std::move(kind);
  add_builtin_field_labels(info);
  return info;
}

std::optional<status> check(const resource_info& info, const std::string& selector) {
  auto fields = field_selector::parse(selector);
  REQUIRE(fields.ok());
  return check_field_labels(info, *fields);
}

} // namespace

TEST_CASE("field_labels: what each kind supports is accepted") {
  CHECK_FALSE(check(builtin("", "pods", "Pod"),
                    "spec.nodeName=a,status.phase=Running,status.podIPs=x,metadata.name=p"));
  CHECK_FALSE(check(builtin("", "services", "Service"), "spec.type=x,spec.clusterIP=y"));
  CHECK_FALSE(check(builtin("events.k8s.io", "events", "Event"), "regarding.kind=Pod,reason=x"));
  CHECK_FALSE(check(builtin("", "configmaps", "ConfigMap"), "metadata.namespace=a"));
  CHECK_FALSE(check(builtin("batch", "jobs", "Job"), "status.successful=1"));
}

TEST_CASE("field_labels: anything else is a 400 in the server's words for the kind") {
  auto pods = check(builtin("", "pods", "Pod"), "spec.foo=x");
  REQUIRE(pods);
  CHECK(pods->code == 400);
  CHECK(pods->message == "field label not supported: spec.foo");
  CHECK(check(builtin("", "pods", "Pod"), "metadata.uid=x")->message ==
        "field label not supported: metadata.uid");
  auto config_maps = check(builtin("", "configmaps", "ConfigMap"), "spec.nodeName=x");
  REQUIRE(config_maps);
  CHECK(config_maps->message == "\"spec.nodeName\" is not a known field selector: only "
                                "\"metadata.name\", \"metadata.namespace\"");
  CHECK(check(builtin("apps", "deployments", "Deployment"), "spec.foo=x")->message ==
        "\"spec.foo\" is not a known field selector: only \"metadata.name\", "
        "\"metadata.namespace\"");
  CHECK(check(builtin("batch", "jobs", "Job"), "spec.foo=x")->message ==
        "field label \"spec.foo\" not supported for Job");
  // events.k8s.io names the involved object "regarding", core/v1 "involvedObject".
  CHECK(check(builtin("events.k8s.io", "events", "Event"), "involvedObject.kind=x")->message ==
        "field label not supported: involvedObject.kind");
  CHECK_FALSE(check(builtin("", "events", "Event"), "involvedObject.kind=x"));
}
