// The write verbs against the embedded simulator over HTTP: create, update, patch (merge, JSON,
// strategic merge), the status subresource, delete with preconditions, dry runs, and the error
// codes a controller branches on (not_found, conflict, already_exists).

#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/resource_writer.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <mutex>
#include <vector>

using namespace kinformer;

namespace {

const resource_location config_maps{{"", "v1", "configmaps"}, "demo"};
const resource_location pods{{"", "v1", "pods"}, "demo"};

std::string config_map(const std::string& name, const std::string& value,
                       const std::string& resource_version = "") {
  boost::json::object meta{{"name", name}, {"namespace", "demo"}};
  if (!resource_version.empty())
    meta["resourceVersion"] = resource_version;
  return boost::json::serialize(boost::json::object{
      {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", meta}, {"data", {{"v", value}}}});
}

std::string data_of(const object_ptr& obj, const char* key = "v") {
  auto tree = obj->tree();
  auto* data = tree.as_object().if_contains("data");
  if (!data || !data->as_object().contains(key))
    return "<none>";
  return std::string(data->as_object().at(key).as_string());
}

struct fixture {
  sim::simulator server;
  std::mutex mutex;
  std::vector<api_verb> verbs; // every request the client finished
  std::shared_ptr<api_client> client;
  std::optional<resource_writer> writer;

  fixture() {
    REQUIRE(server.start().ok());
    client_options options;
    options.on_request = [this](const request_record& r) {
      std::lock_guard lock(mutex);
      verbs.push_back(r.verb);
    };
    auto created = api_client::create(*from_server_url(server.url()), options);
    REQUIRE(created.ok());
    client = std::move(created).value();
    writer.emplace(client);
  }
  ~fixture() {
    writer.reset();
    client.reset();
    server.stop();
  }

  bool stored(const std::string& name) {
    return server.store().get(config_maps.resource, "demo", name).ok();
  }
};

} // namespace

TEST_CASE("resource writer: the paths of objects, collections and subresources") {
  CHECK(resource_writer::object_path(config_maps, "a") == "/api/v1/namespaces/demo/configmaps/a");
  CHECK(resource_writer::object_path(config_maps, {}) == "/api/v1/namespaces/demo/configmaps");
  CHECK(resource_writer::object_path({{"apps", "v1", "deployments"}, "ns"}, "web", "status") ==
        "/apis/apps/v1/namespaces/ns/deployments/web/status");
  CHECK(resource_writer::object_path({{"", "v1", "nodes"}, ""}, "n1") == "/api/v1/nodes/n1");
}

TEST_CASE_METHOD(fixture, "resource writer: create answers the stored object, a second create "
                          "is already_exists") {
  auto made = writer->create(config_maps, config_map("a", "1"));
  REQUIRE(made.ok());
  CHECK((*made)->meta().name == "a");
  CHECK((*made)->meta().namespace_ == "demo");
  CHECK_FALSE((*made)->meta().resource_version.empty());
  CHECK(stored("a"));
  auto again = writer->create(config_maps, config_map("a", "2"));
  REQUIRE_FALSE(again.ok());
  CHECK(again.err().code == errc::already_exists);
  std::lock_guard lock(mutex);
  CHECK(verbs == std::vector<api_verb>{api_verb::create, api_verb::create});
}

TEST_CASE_METHOD(fixture, "resource writer: an update at a stale resourceVersion is a conflict, "
                          "at the current one it is stored") {
  auto made = writer->create(config_maps, config_map("a", "1"));
  REQUIRE(made.ok());
  std::string rv((*made)->meta().resource_version);
  auto updated = writer->update(config_maps, "a", config_map("a", "2", rv));
  REQUIRE(updated.ok());
  CHECK(data_of(*updated) == "2");
  CHECK((*updated)->meta().resource_version != rv);
  auto stale = writer->update(config_maps, "a", config_map("a", "3", rv));
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.err().code == errc::conflict);
  auto missing = writer->update(config_maps, "nobody", config_map("nobody", "1"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.err().code == errc::not_found);
}

TEST_CASE_METHOD(fixture, "resource writer: merge, JSON and strategic merge patches") {
  REQUIRE(writer->create(config_maps, config_map("a", "1")).ok());
  auto merged = writer->patch(config_maps, "a", patch_type::merge, R"({"data":{"w":"x"}})");
  REQUIRE(merged.ok());
  CHECK(data_of(*merged) == "1");
  CHECK(data_of(*merged, "w") == "x");
  auto json = writer->patch(config_maps, "a", patch_type::json,
                            R"([{"op":"replace","path":"/data/v","value":"2"}])");
  REQUIRE(json.ok());
  CHECK(data_of(*json) == "2");
  auto strategic =
      writer->patch(config_maps, "a", patch_type::strategic_merge, R"({"data":{"v":"3"}})");
  REQUIRE(strategic.ok());
  CHECK(data_of(*strategic) == "3");
  auto missing = writer->patch(config_maps, "nobody", patch_type::merge, R"({"data":{}})");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.err().code == errc::not_found);
  std::lock_guard lock(mutex);
  CHECK(verbs.back() == api_verb::patch);
}

TEST_CASE_METHOD(fixture, "resource writer: update_status and patch_status write through "
                          "the status subresource") {
  auto pod = boost::json::serialize(boost::json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "p"}, {"namespace", "demo"}, {"labels", {{"app", "x"}}}}},
      {"spec", {{"containers", boost::json::array{{{"name", "c"}, {"image", "i"}}}}}}});
  REQUIRE(writer->create(pods, pod).ok());
  auto patched =
      writer->patch_status(pods, "p", patch_type::merge, R"({"status":{"phase":"Running"}})");
  REQUIRE(patched.ok());
  CHECK((*patched)->tree().at("status").at("phase").as_string() == "Running");
  auto tree = (*patched)->tree();
  tree.at("status").as_object()["phase"] = "Succeeded";
  auto updated = writer->update_status(pods, "p", boost::json::serialize(tree));
  REQUIRE(updated.ok());
  CHECK((*updated)->tree().at("status").at("phase").as_string() == "Succeeded");
  CHECK(writer->patch_status(pods, "nobody", patch_type::merge, "{}").err().code ==
        errc::not_found);

  // As the API server: /status changes only .status, the object's URL everything but .status.
  auto status_and_label =
      writer->patch_status(pods, "p", patch_type::merge,
                           R"({"metadata":{"labels":{"app":"y"}},"status":{"phase":"Failed"}})");
  REQUIRE(status_and_label.ok());
  CHECK((*status_and_label)->meta().label("app") == "x");
  CHECK((*status_and_label)->tree().at("status").at("phase").as_string() == "Failed");
  auto label_and_status =
      writer->patch(pods, "p", patch_type::merge,
                    R"({"metadata":{"labels":{"app":"z"}},"status":{"phase":"Running"}})");
  REQUIRE(label_and_status.ok());
  CHECK((*label_and_status)->meta().label("app") == "z");
  CHECK((*label_and_status)->tree().at("status").at("phase").as_string() == "Failed");
  auto whole = (*label_and_status)->tree();
  whole.at("status").as_object()["phase"] = "Unknown";
  whole.at("metadata").as_object()["labels"].as_object()["app"] = "w";
  auto put = writer->update(pods, "p", boost::json::serialize(whole));
  REQUIRE(put.ok());
  CHECK((*put)->meta().label("app") == "w");
  CHECK((*put)->tree().at("status").at("phase").as_string() == "Failed");
  // A resource without a status subresource has no /status.
  REQUIRE(writer->create(config_maps, config_map("c", "1")).ok());
  CHECK(writer->patch_status(config_maps, "c", patch_type::merge, "{}").err().code ==
        errc::not_found);
}

TEST_CASE_METHOD(fixture, "resource writer: server-side apply creates, merges, and reports "
                          "another manager's field as a conflict unless forced") {
  apply_options ctl;
  ctl.field_manager = "example.com/ctl";
  auto wanted = [](const char* value) {
    return std::string(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},)") +
           R"("data":{"k":")" + value + R"("}})";
  };
  auto made = writer->apply(config_maps, "a", wanted("1"), ctl);
  REQUIRE(made.ok());
  CHECK(data_of(*made, "k") == "1");
  CHECK((*made)->tree().at("metadata").at("managedFields").at(0).at("manager") ==
        "example.com/ctl");

  write_options edit;
  edit.field_manager = "kubectl-edit";
  REQUIRE(writer->patch(config_maps, "a", patch_type::merge, R"({"data":{"k":"2"}})", edit).ok());
  auto refused = writer->apply(config_maps, "a", wanted("1"), ctl);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == errc::conflict);
  CHECK(refused.err().message.find("conflict with \"kubectl-edit\"") != std::string::npos);
  CHECK(refused.err().message.find(".data.k") != std::string::npos);
  ctl.force = true;
  auto forced = writer->apply(config_maps, "a", wanted("1"), ctl);
  REQUIRE(forced.ok());
  CHECK(data_of(*forced, "k") == "1");

  CHECK(writer->apply(config_maps, "a", wanted("1"), {}).err().code == errc::invalid_argument);
  std::lock_guard lock(mutex);
  CHECK(verbs.back() == api_verb::patch);
}

TEST_CASE_METHOD(fixture, "resource writer: a dry run answers without storing") {
  write_options dry;
  dry.dry_run = true;
  auto made = writer->create(config_maps, config_map("a", "1"), dry);
  REQUIRE(made.ok());
  CHECK((*made)->meta().name == "a");
  CHECK_FALSE(stored("a"));
}

TEST_CASE_METHOD(fixture, "resource writer: delete honours a resourceVersion precondition, then "
                          "a second delete is not_found") {
  auto made = writer->create(config_maps, config_map("a", "1"));
  REQUIRE(made.ok());
  delete_options stale;
  stale.resource_version = "1";
  auto refused = writer->remove(config_maps, "a", stale);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == errc::conflict);
  CHECK(stored("a"));
  delete_options current;
  current.resource_version = std::string((*made)->meta().resource_version);
  REQUIRE(writer->remove(config_maps, "a", current).ok());
  CHECK_FALSE(stored("a"));
  auto again = writer->remove(config_maps, "a");
  REQUIRE_FALSE(again.ok());
  CHECK(again.err().code == errc::not_found);
  std::lock_guard lock(mutex);
  CHECK(verbs.back() == api_verb::delete_);
  CHECK(std::string(to_string(api_verb::delete_)) == "delete");
}
