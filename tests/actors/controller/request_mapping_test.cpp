// Deltas to reconcile requests, without actors: the object itself, and its controller owner.

#include "actors/controller/request_mapping.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

using namespace kinformer;

namespace {

struct owner {
  std::string api_version;
  std::string kind;
  std::string name;
  bool controller = false;
};

object_ptr config_map(std::string ns, std::string name, const std::vector<owner>& owners = {}) {
  boost::json::object meta{{"name", name}, {"resourceVersion", "1"}};
  if (!ns.empty())
    meta["namespace"] = ns;
  boost::json::array refs;
  for (const auto& o : owners)
    refs.push_back(boost::json::object{{"apiVersion", o.api_version},
                                       {"kind", o.kind},
                                       {"name", o.name},
                                       {"uid", "uid-" + o.name},
                                       {"controller", o.controller}});
  if (!refs.empty())
    meta["ownerReferences"] = std::move(refs);
  auto obj = object::from_json(boost::json::value(
      boost::json::object{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", meta}}));
  if (!obj)
    throw std::runtime_error(obj.err().describe());
  return std::move(obj).value();
}

delta added(object_ptr obj) {
  return delta{delta_type::added, std::move(obj), nullptr};
}

} // namespace

TEST_CASE("reconcile request: its key is the store's, and reads back") {
  CHECK(reconcile_request{"ns", "a"}.key() == "ns/a");
  CHECK(reconcile_request{"", "node-1"}.key() == "node-1");
  CHECK(reconcile_request::from_key("ns/a") == reconcile_request{"ns", "a"});
  CHECK(reconcile_request::from_key("node-1") == reconcile_request{"", "node-1"});
}

TEST_CASE("request mapping: the API group of an apiVersion") {
  CHECK(api_group_of("apps/v1") == "apps");
  CHECK(api_group_of("v1").empty());
  CHECK(api_group_of("example.com/v1beta1") == "example.com");
}

TEST_CASE("enqueue_for_object: every delta asks for its own object") {
  auto map = enqueue_for_object();
  CHECK(map(added(config_map("ns", "a"))) == std::vector<reconcile_request>{{"ns", "a"}});
  auto gone = config_map("ns", "b");
  CHECK(map(delta{delta_type::deleted, gone, gone}) == std::vector<reconcile_request>{{"ns", "b"}});
  CHECK(map(added(config_map("", "cluster-wide"))) ==
        std::vector<reconcile_request>{{"", "cluster-wide"}});
}

TEST_CASE("enqueue_for_owner: the controller owner of the right group and kind, in the object's "
          "namespace") {
  auto map = enqueue_for_owner("apps", "Deployment");
  auto obj = config_map("ns", "web-config",
                        {{"apps/v1", "Deployment", "web", true},
                         {"apps/v1", "Deployment", "other", false}, // not the controller
                         {"apps/v1", "ReplicaSet", "web-123", true},
                         {"extensions/v1beta1", "Deployment", "old", true}});
  CHECK(map(added(obj)) == std::vector<reconcile_request>{{"ns", "web"}});
  CHECK(map(added(config_map("ns", "orphan"))).empty());
}

TEST_CASE("enqueue_for_owner: every matching owner when not only the controller is asked for") {
  auto map = enqueue_for_owner("apps", "Deployment", false);
  auto obj =
      config_map("ns", "c", {{"apps/v1", "Deployment", "a", true}, {"apps/v1", "Deployment", "b"}});
  CHECK(map(added(obj)) == std::vector<reconcile_request>{{"ns", "a"}, {"ns", "b"}});
}

TEST_CASE("enqueue_for_owner: an update whose owner changed asks for both owners") {
  auto map = enqueue_for_owner("", "ConfigMap");
  auto before = config_map("ns", "c", {{"v1", "ConfigMap", "first", true}});
  auto after = config_map("ns", "c", {{"v1", "ConfigMap", "second", true}});
  CHECK(map(delta{delta_type::updated, after, before}) ==
        std::vector<reconcile_request>{{"ns", "second"}, {"ns", "first"}});
  CHECK(map(delta{delta_type::updated, after, after}) ==
        std::vector<reconcile_request>{{"ns", "second"}});
}

TEST_CASE("enqueue_for_owner: a cluster-scoped owner is asked for without a namespace") {
  auto map = enqueue_for_owner("", "Node", true, false);
  auto obj = config_map("ns", "c", {{"v1", "Node", "node-1", true}});
  CHECK(map(added(obj)) == std::vector<reconcile_request>{{"", "node-1"}});
}
