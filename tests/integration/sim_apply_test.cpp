// The simulator's server-side apply and field ownership (app/kubesim/field_ownership.hpp): what
// an apply creates, merges, removes and refuses, and how other writers' fields are tracked.

#include "app/kubesim/field_ownership.hpp"
#include "app/kubesim/storage.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <map>

using namespace kinformer;
using namespace kinformer::sim;
namespace json = boost::json;

namespace {

const group_version_resource deployments{"apps", "v1", "deployments"};

std::string deployment(int replicas, std::string labels = R"({"app":"web"})") {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":)" +
         labels + R"(},"spec":{"replicas":)" + std::to_string(replicas) + "}}";
}

write_options as(std::string manager, bool force = false) {
  write_options o;
  o.field_manager = std::move(manager);
  o.force = force;
  return o;
}

json::object tree_of(const api_result<stored_object>& r) {
  REQUIRE(r.ok());
  return r.value().object->tree().as_object();
}

// manager/operation -> the fields it owns, dotted.
std::map<std::string, std::set<std::string>> owners(const json::object& object) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& e : read_managed_fields(object))
    for (const auto& f : e.fields)
      out[e.manager + "/" + e.operation].insert(dotted(f));
  return out;
}

} // namespace

TEST_CASE("apply: creates the object and records the applier's fields as FieldsV1") {
  storage store;
  auto made = tree_of(
      store.patch(deployments, "default", "web", patch_type::apply, deployment(3), as("ctl")));
  CHECK(made.at("spec").at("replicas") == 3);
  const auto& entry = made.at("metadata").at("managedFields").at(0).as_object();
  CHECK(entry.at("manager") == "ctl");
  CHECK(entry.at("operation") == "Apply");
  CHECK(entry.at("apiVersion") == "apps/v1");
  CHECK(entry.at("fieldsType") == "FieldsV1");
  CHECK(json::serialize(entry.at("fieldsV1")) ==
        R"({"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{}}})");
  CHECK(owners(made) == std::map<std::string, std::set<std::string>>{
                            {"ctl/Apply", {".metadata.labels.app", ".spec.replicas"}}});
}

TEST_CASE("apply: the same configuration again writes nothing, a field no longer applied is "
          "removed") {
  storage store;
  auto first = store.patch(deployments, "default", "web", patch_type::apply,
                           deployment(3, R"({"app":"web","tier":"front"})"), as("ctl"));
  REQUIRE(first.ok());
  auto again = store.patch(deployments, "default", "web", patch_type::apply,
                           deployment(3, R"({"app":"web","tier":"front"})"), as("ctl"));
  REQUIRE(again.ok());
  CHECK(again.value().object->meta().resource_version ==
        first.value().object->meta().resource_version);
  auto fewer = tree_of(
      store.patch(deployments, "default", "web", patch_type::apply, deployment(3), as("ctl")));
  CHECK(!fewer.at("metadata").at("labels").as_object().contains("tier"));
  CHECK(owners(fewer).at("ctl/Apply").count(".metadata.labels.tier") == 0);
}

TEST_CASE("apply: another manager's field with another value is a conflict naming it, the same "
          "value is shared, force takes it over") {
  storage store;
  REQUIRE(
      store.patch(deployments, "default", "web", patch_type::apply, deployment(3), as("ctl")).ok());
  // Someone scales by hand (a merge patch with its own field manager).
  auto edited = tree_of(store.patch(deployments, "default", "web", patch_type::merge,
                                    R"({"spec":{"replicas":5}})", as("kubectl-edit")));
  CHECK(owners(edited).at("kubectl-edit/Update") == std::set<std::string>{".spec.replicas"});
  CHECK(owners(edited).at("ctl/Apply") == std::set<std::string>{".metadata.labels.app"});

  auto refused =
      store.patch(deployments, "default", "web", patch_type::apply, deployment(3), as("ctl"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.failure().code == 409);
  CHECK(refused.failure().reason == "Conflict");
  CHECK(refused.failure().message ==
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using apps/v1: "
        ".spec.replicas");
  CHECK(refused.failure().cause_types == std::vector<std::string>{"FieldManagerConflict"});

  // Agreeing with the current value is no conflict: both own it.
  auto agreed = tree_of(
      store.patch(deployments, "default", "web", patch_type::apply, deployment(5), as("ctl")));
  CHECK(owners(agreed).at("ctl/Apply").count(".spec.replicas") == 1);
  CHECK(owners(agreed).at("kubectl-edit/Update").count(".spec.replicas") == 1);

  auto forced = tree_of(store.patch(deployments, "default", "web", patch_type::apply, deployment(2),
                                    as("ctl", true)));
  CHECK(forced.at("spec").at("replicas") == 2);
  CHECK(owners(forced).count("kubectl-edit/Update") == 0);
}

TEST_CASE("apply: a field another manager also owns stays when the applier drops it") {
  storage store;
  REQUIRE(store
              .patch(deployments, "default", "web", patch_type::apply,
                     deployment(3, R"({"app":"web","team":"a"})"), as("ctl"))
              .ok());
  REQUIRE(store
              .patch(deployments, "default", "web", patch_type::apply,
                     deployment(3, R"({"team":"a"})"), as("other"))
              .ok());
  auto dropped = tree_of(
      store.patch(deployments, "default", "web", patch_type::apply, deployment(3), as("ctl")));
  CHECK(dropped.at("metadata").at("labels").at("team") == "a");
}

TEST_CASE("apply: needs a field manager and a JSON object, writes without a manager leave "
          "ownership alone") {
  storage store;
  auto no_manager =
      store.patch(deployments, "default", "web", patch_type::apply, deployment(3), {});
  REQUIRE_FALSE(no_manager.ok());
  CHECK(no_manager.failure().code == 400);
  CHECK(no_manager.failure().message == "fieldManager is required for apply requests");
  auto not_object = store.patch(deployments, "default", "web", patch_type::apply, "[1]", as("ctl"));
  REQUIRE_FALSE(not_object.ok());
  CHECK(not_object.failure().code == 400);

  REQUIRE(
      store.patch(deployments, "default", "web", patch_type::apply, deployment(3), as("ctl")).ok());
  auto untracked = tree_of(store.patch(deployments, "default", "web", patch_type::merge,
                                       R"({"spec":{"replicas":4}})", {}));
  CHECK(owners(untracked) == std::map<std::string, std::set<std::string>>{
                                 {"ctl/Apply", {".metadata.labels.app", ".spec.replicas"}}});
}

TEST_CASE("field ownership: FieldsV1 round-trips, list elements count as the whole list") {
  field_set fields{{"metadata", "labels", "app"}, {"spec", "replicas"}, {"spec", "template"}};
  CHECK(from_fields_v1(to_fields_v1(fields)) == fields);
  auto kubectl_style = json::parse(
                           R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}},
                               "f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{}}}}})")
                           .as_object();
  CHECK(from_fields_v1(kubectl_style) ==
        field_set{{"metadata", "labels"}, {"metadata", "labels", "app"}, {"spec", "containers"}});
}
