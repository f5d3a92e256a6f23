// The cache's decisions without an actor system: which informers a kind gets, and which of them
// answer a read.

#include "actors/cache_plan.hpp"
#include "protocol/object.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace kinformer;
using namespace std::chrono_literals;

namespace {

rest_mapping config_maps() {
  return {{"", "v1", "configmaps"},
          {"", "v1", "ConfigMap"},
          resource_scope::namespaced,
          {"get", "list", "watch"}};
}
rest_mapping nodes() {
  return {{"", "v1", "nodes"}, {"", "v1", "Node"}, resource_scope::cluster, {"list", "watch"}};
}

std::vector<std::string> namespaces_of(const kind_plan& plan) {
  std::vector<std::string> out;
  for (const auto& informer : plan.informers)
    out.push_back(informer.namespace_);
  return out;
}

field_selector fields(std::string_view text) {
  auto parsed = field_selector::parse(text);
  REQUIRE(parsed.ok());
  return *parsed;
}
label_selector labels(std::string_view text) {
  auto parsed = label_selector::parse(text);
  REQUIRE(parsed.ok());
  return *parsed;
}

// A discovery server in a map: path -> body.
discovery_fetch fake_discovery() {
  static const std::map<std::string, std::string> docs{
      {"/api", R"({"kind":"APIVersions","versions":["v1"]})"},
      {"/apis", R"({"kind":"APIGroupList","groups":[]})"},
      {"/api/v1", R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
         {"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap",
          "verbs":["get","list","watch"],"shortNames":["cm"]},
         {"name":"bindings","singularName":"binding","namespaced":true,"kind":"Binding",
          "verbs":["create"]}]})"}};
  return [](const std::string& path) -> result<std::string> {
    auto it = docs.find(path);
    if (it == docs.end())
      return make_error(errc::not_found, path);
    return it->second;
  };
}

} // namespace

TEST_CASE("no namespaces configured: one all-namespaces informer with the defaults") {
  cache_options options;
  options.default_label_selector = labels("app=demo");
  options.default_field_selector = fields("metadata.name!=skip");
  options.default_transform = std::make_shared<const object_transform>([](auto&) {});
  options.sync_period = 5s;
  options.watch.page_size = 11;
  options.observer = std::make_shared<const informer_observer>();
  auto plan = plan_kind(options, config_maps(), false, nullptr);
  REQUIRE(namespaces_of(plan) == std::vector<std::string>{""});
  const auto& config = plan.informers[0].config;
  CHECK(config.resource == group_version_resource{"", "v1", "configmaps"});
  CHECK(config.kind == "ConfigMap");
  CHECK(config.namespace_.empty());
  CHECK(config.labels == options.default_label_selector);
  CHECK(config.fields == options.default_field_selector);
  CHECK(config.transform == options.default_transform);
  CHECK(config.watch.page_size == 11);
  CHECK(config.observer == options.observer);
  CHECK_FALSE(config.metadata_only);
  CHECK(plan.sync_period == 5s);
  CHECK(plan.describe() == "v1, Kind=ConfigMap");
}

TEST_CASE("default namespaces: one informer each, sorted, duplicates dropped") {
  cache_options options;
  options.default_namespaces = {"b", "a", "b"};
  auto plan = plan_kind(options, config_maps(), true, nullptr);
  CHECK(namespaces_of(plan) == std::vector<std::string>{"a", "b"});
  for (const auto& informer : plan.informers) {
    CHECK(informer.config.namespace_ == informer.namespace_);
    CHECK(informer.config.fields.empty());
    CHECK(informer.config.metadata_only);
  }
  CHECK(plan.describe() == "v1, Kind=ConfigMap (metadata)");
}

TEST_CASE("the all-namespaces entry next to explicit ones excludes them") {
  cache_options options;
  options.default_namespaces = {"", "team-b", "team-a"};
  options.default_field_selector = fields("metadata.name!=skip");
  auto plan = plan_kind(options, config_maps(), false, nullptr);
  REQUIRE(namespaces_of(plan) == std::vector<std::string>{"team-a", "team-b", ""});
  CHECK(plan.informers[0].config.fields == options.default_field_selector);
  CHECK(plan.informers[2].config.fields.to_string() ==
        "metadata.name!=skip,metadata.namespace!=team-a,metadata.namespace!=team-b");
}

TEST_CASE("cluster-scoped kinds always get one cluster-wide informer") {
  cache_options options;
  options.default_namespaces = {"a", "b"};
  by_object_options by_object;
  by_object.namespaces = std::vector<std::string>{"c"};
  for (const by_object_options* entry : {static_cast<const by_object_options*>(nullptr),
                                         static_cast<const by_object_options*>(&by_object)}) {
    auto plan = plan_kind(options, nodes(), false, entry);
    REQUIRE(namespaces_of(plan) == std::vector<std::string>{""});
    CHECK(plan.informers[0].config.scope == resource_scope::cluster);
    CHECK(plan.informers[0].config.fields.empty());
  }
}

TEST_CASE("by_object settings override the defaults, unset ones fall back") {
  cache_options options;
  options.default_namespaces = {"a"};
  options.default_label_selector = labels("app=demo");
  options.default_field_selector = fields("metadata.name!=x");
  options.default_transform = std::make_shared<const object_transform>([](auto&) {});
  options.sync_period = 1s;

  SECTION("everything set") {
    by_object_options by_object;
    by_object.namespaces = std::vector<std::string>{"b", "c"};
    by_object.labels = labels("tier=web");
    by_object.fields = fields("metadata.name!=y");
    by_object.transform = std::make_shared<const object_transform>([](auto&) {});
    by_object.sync_period = 2s;
    by_object.compress_objects = true;
    auto plan = plan_kind(options, config_maps(), false, &by_object);
    CHECK(namespaces_of(plan) == std::vector<std::string>{"b", "c"});
    CHECK(plan.informers[0].config.compress_objects == true);
    CHECK(plan.informers[1].config.compress_objects == true);
    CHECK(plan.informers[0].config.labels == *by_object.labels);
    CHECK(plan.informers[0].config.fields == *by_object.fields);
    CHECK(plan.informers[0].config.transform == by_object.transform);
    CHECK(plan.sync_period == 2s);
  }
  SECTION("nothing set") {
    by_object_options by_object;
    auto plan = plan_kind(options, config_maps(), false, &by_object);
    CHECK(namespaces_of(plan) == std::vector<std::string>{"a"});
    CHECK(plan.informers[0].config.labels == options.default_label_selector);
    CHECK(plan.informers[0].config.fields == options.default_field_selector);
    CHECK(plan.informers[0].config.transform == options.default_transform);
    CHECK(plan.sync_period == 1s);
    CHECK_FALSE(plan.informers[0].config.compress_objects.has_value()); // the informer's default
    CHECK_FALSE(keeps_objects_compressed(plan.informers[0].config));
  }
  SECTION("metadata-only informers keep their text compressed unless told not to") {
    auto plan = plan_kind(options, config_maps(), true, nullptr);
    CHECK(keeps_objects_compressed(plan.informers[0].config));
    options.compress_objects = false;
    CHECK_FALSE(keeps_objects_compressed(
        plan_kind(options, config_maps(), true, nullptr).informers[0].config));
  }
  SECTION("compressed objects by default, one kind kept as received") {
    options.compress_objects = true;
    options.packing.samples = 5;
    CHECK(keeps_objects_compressed(
        plan_kind(options, config_maps(), false, nullptr).informers[0].config));
    by_object_options by_object;
    by_object.compress_objects = false;
    auto plan = plan_kind(options, config_maps(), false, &by_object);
    CHECK_FALSE(keeps_objects_compressed(plan.informers[0].config));
    CHECK(plan.informers[0].config.packing.samples == 5);
  }
  SECTION("an empty namespace list means all namespaces") {
    by_object_options by_object;
    by_object.namespaces = std::vector<std::string>{};
    auto plan = plan_kind(options, config_maps(), false, &by_object);
    CHECK(namespaces_of(plan) == std::vector<std::string>{""});
  }
}

TEST_CASE("find_by_object matches by resource, preferring the same projection") {
  std::vector<by_object_options> by_object(3);
  by_object[0].kind.resource = "nodes";
  by_object[1].kind.resource = "configmaps";
  by_object[1].kind.metadata_only = true;
  by_object[2].kind.resource = "configmaps";
  std::vector<std::optional<rest_mapping>> mappings{nodes(), config_maps(), config_maps()};
  CHECK(find_by_object(by_object, mappings, config_maps(), true) == std::optional<std::size_t>{1});
  CHECK(find_by_object(by_object, mappings, config_maps(), false) == std::optional<std::size_t>{2});
  CHECK(find_by_object(by_object, mappings, nodes(), true) == std::optional<std::size_t>{0});
  mappings[0] = std::nullopt; // an entry that did not resolve applies to nothing
  CHECK_FALSE(find_by_object(by_object, mappings, nodes(), false).has_value());
}

TEST_CASE("gets go to the namespace's informer, then the all-namespaces one, else fail") {
  cache_options options;
  options.default_namespaces = {"a", "b"};
  auto plan = plan_kind(options, config_maps(), false, nullptr);
  CHECK(*route_get(plan, "a") == 0);
  CHECK(*route_get(plan, "b") == 1);
  auto miss = route_get(plan, "c");
  REQUIRE_FALSE(miss.ok());
  CHECK(miss.err().code == errc::namespace_not_covered);
  CHECK(miss.err().describe() == "namespace_not_covered: namespace \"c\" is not covered by the "
                                 "cache for v1, Kind=ConfigMap (covered: a, b)");
  CHECK(miss.err().message ==
        "namespace \"c\" is not covered by the cache for v1, Kind=ConfigMap (covered: a, b)");

  options.default_namespaces.push_back("");
  plan = plan_kind(options, config_maps(), false, nullptr);
  CHECK(*route_get(plan, "a") == 0);
  CHECK(*route_get(plan, "c") == 2);

  auto cluster = plan_kind(options, nodes(), false, nullptr);
  CHECK(*route_get(cluster, "") == 0);
  CHECK(*route_get(cluster, "ignored") == 0);
}

TEST_CASE("lists: one namespace, or every informer merged") {
  cache_options options;
  options.default_namespaces = {"a", "b"};
  auto plan = plan_kind(options, config_maps(), false, nullptr);
  list_options all;
  CHECK(*route_list(plan, all, {}) == std::vector<std::size_t>{0, 1});
  list_options in_b;
  in_b.namespace_ = "b";
  CHECK(*route_list(plan, in_b, {}) == std::vector<std::size_t>{1});
  list_options in_c;
  in_c.namespace_ = "c";
  CHECK(route_list(plan, in_c, {}).err().code == errc::namespace_not_covered);

  list_options cluster_in_ns;
  cluster_in_ns.namespace_ = "a";
  CHECK(*route_list(plan_kind(options, nodes(), false, nullptr), cluster_in_ns, {}) ==
        std::vector<std::size_t>{0});
}

TEST_CASE("field selectors need exact terms over indexed fields") {
  auto plan = plan_kind(cache_options{}, config_maps(), false, nullptr);
  list_options options;
  options.fields = fields("data.value=x");
  auto no_index = route_list(plan, options, {});
  REQUIRE_FALSE(no_index.ok());
  CHECK(no_index.err().code == errc::no_index);
  CHECK(to_string(errc::no_index) == std::string("no_index"));
  CHECK(no_index.err().message == "the cache for v1, Kind=ConfigMap has no index for field "
                                  "\"data.value\": add one with index_field first");
  CHECK(route_list(plan, options, {"data.value"}).ok());

  // As in controller-runtime, metadata.name and metadata.namespace are no exception.
  options.fields = fields("metadata.name=x");
  CHECK(route_list(plan, options, {"data.value"}).err().code == errc::no_index);

  options.fields = fields("data.value!=x");
  auto inexact = route_list(plan, options, {"data.value"});
  REQUIRE_FALSE(inexact.ok());
  CHECK(inexact.err().code == errc::invalid_argument); // no index could serve it
  CHECK(inexact.err().message.find("non-exact field matches") != std::string::npos);
}

TEST_CASE("merged lists keep informer order and honour the limit") {
  auto make = [](std::string ns, std::string name) {
    auto obj = object::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" +
                             name + R"(","namespace":")" + ns + R"("}})");
    REQUIRE(obj.ok());
    return *obj;
  };
  std::vector<object_list> parts{{make("a", "1"), make("a", "2")}, {}, {make("b", "3")}};
  auto all = merge_lists(parts, 0);
  REQUIRE(all.size() == 3);
  CHECK(all[2]->key() == "b/3");
  auto limited = merge_lists(parts, 2);
  REQUIRE(limited.size() == 2);
  CHECK(limited[1]->key() == "a/2");
  // One informer's list, as it is or cut to the limit.
  std::vector<object_list> one{{make("a", "1"), make("a", "2"), make("a", "3")}};
  CHECK(merge_lists(one, 0).size() == 3);
  auto first_two = merge_lists(one, 2);
  REQUIRE(first_two.size() == 2);
  CHECK(first_two[1]->key() == "a/2");
}

TEST_CASE("resolve_kind by kind or resource name, refusing what cannot be watched") {
  rest_mapper mapper(fake_discovery());
  kind_request by_kind;
  by_kind.kind = {"", "", "ConfigMap"};
  CHECK(resolve_kind(mapper, by_kind)->resource.resource == "configmaps");
  kind_request by_name;
  by_name.resource = "cm";
  CHECK(resolve_kind(mapper, by_name)->kind.kind == "ConfigMap");

  kind_request unwatchable;
  unwatchable.resource = "bindings";
  auto refused = resolve_kind(mapper, unwatchable);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == errc::invalid_argument);

  kind_request unknown;
  unknown.resource = "widgets.example.com";
  CHECK(resolve_kind(mapper, unknown).err().code == errc::no_match);
  CHECK(resolve_kind(mapper, kind_request{}).err().code == errc::invalid_argument);
}
