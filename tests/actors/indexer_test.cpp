#include "actors/indexer.hpp"
#include "actors/store.hpp"
#include "tests/actors/test_objects.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace kinformer;
using kinformer::testing::make_pod;
using kinformer::testing::pod_spec;

namespace {

using strings = std::vector<std::string>;

strings sorted(strings v) {
  std::sort(v.begin(), v.end());
  return v;
}

strings keys_in(const store_snapshot& snap, std::string_view index, std::string_view value) {
  auto keys = snap.index_keys(index, value);
  REQUIRE(keys.ok());
  return sorted(*keys);
}

strings values_of(const store_snapshot& snap, std::string_view index) {
  auto values = snap.list_index_values(index);
  REQUIRE(values.ok());
  return sorted(*values);
}

// Indexes a pod by each of its label values: a multi-valued index.
index_func by_label_values = [](const object& obj) {
  strings out;
  for (const auto& [key, value] : obj.meta().labels)
    out.emplace_back(value);
  return out;
};

index_func by_app = [](const object& obj) {
  auto app = obj.meta().label("app");
  return app ? strings{std::string(*app)} : strings{};
};

} // namespace

TEST_CASE("every store indexes by namespace") {
  store s;
  (void)s.replace(
      {make_pod("a", "x"), make_pod("a", "y"), make_pod("b", "z"), make_pod("", "cluster-scoped")},
      "1");
  auto snap = s.snapshot();
  CHECK(snap.indexes().has_index(namespace_index_name));
  CHECK(keys_in(snap, namespace_index_name, "a") == strings{"a/x", "a/y"});
  CHECK(keys_in(snap, namespace_index_name, "b") == strings{"b/z"});
  CHECK(keys_in(snap, namespace_index_name, "") == strings{"cluster-scoped"});
  CHECK(keys_in(snap, namespace_index_name, "none").empty());
  CHECK(values_of(snap, namespace_index_name) == strings{"", "a", "b"});
  auto objects = snap.by_index(namespace_index_name, "a");
  REQUIRE(objects.ok());
  CHECK(objects->size() == 2);
}

TEST_CASE("an unknown index is an error, and an index name is taken once") {
  store s;
  auto snap = s.snapshot();
  auto keys = snap.index_keys("by-app", "web");
  REQUIRE_FALSE(keys.ok());
  CHECK(keys.err().code == errc::not_found);
  CHECK(keys.err().message == "index with name by-app does not exist");
  CHECK_FALSE(snap.by_index("by-app", "web").ok());
  CHECK_FALSE(snap.list_index_values("by-app").ok());

  REQUIRE(s.add_index("by-app", by_app).ok());
  auto again = s.add_index("by-app", by_app);
  REQUIRE_FALSE(again.ok());
  CHECK(again.err().code == errc::invalid_argument);
  CHECK(again.err().message == "index by-app already exists");
  auto no_function = s.add_index("empty", index_func{});
  REQUIRE_FALSE(no_function.ok());
  CHECK(no_function.err().code == errc::invalid_argument);
  CHECK_FALSE(s.add_index(std::string(namespace_index_name), by_app).ok());
}

TEST_CASE("an index added after objects exist indexes them") {
  store s;
  (void)s.replace({make_pod(pod_spec{"a", "web-1", "1", {{"app", "web"}}}),
                   make_pod(pod_spec{"a", "db-1", "1", {{"app", "db"}}}),
                   make_pod(pod_spec{"a", "none", "1"})},
                  "1");
  auto before = s.snapshot();
  REQUIRE(s.add_index("by-app", by_app).ok());
  auto snap = s.snapshot();
  CHECK(keys_in(snap, "by-app", "web") == strings{"a/web-1"});
  CHECK(values_of(snap, "by-app") == strings{"db", "web"});
  // A snapshot taken before the index was added does not have it.
  CHECK_FALSE(before.indexes().has_index("by-app"));
}

TEST_CASE("updates move keys between buckets, deletes remove them, empty buckets go") {
  store s;
  REQUIRE(s.add_index("labels", by_label_values).ok());
  auto p1 = make_pod(pod_spec{"a", "p", "1", {{"app", "web"}, {"tier", "front"}}});
  (void)s.apply(event_type::added, p1);
  auto v1 = s.snapshot();
  CHECK(values_of(v1, "labels") == strings{"front", "web"});

  // "front" -> "back"; "web" stays.
  (void)s.apply(event_type::modified,
                make_pod(pod_spec{"a", "p", "2", {{"app", "web"}, {"tier", "back"}}}));
  auto v2 = s.snapshot();
  CHECK(keys_in(v2, "labels", "back") == strings{"a/p"});
  CHECK(keys_in(v2, "labels", "web") == strings{"a/p"});
  CHECK(keys_in(v2, "labels", "front").empty());
  CHECK(values_of(v2, "labels") == strings{"back", "web"});

  // Duplicate values index the key once.
  (void)s.apply(event_type::modified,
                make_pod(pod_spec{"a", "p", "3", {{"app", "same"}, {"tier", "same"}}}));
  auto v3 = s.snapshot();
  CHECK(values_of(v3, "labels") == strings{"same"});
  CHECK(keys_in(v3, "labels", "same") == strings{"a/p"});

  (void)s.apply(event_type::deleted, make_pod("a", "p", "4"));
  auto v4 = s.snapshot();
  CHECK(values_of(v4, "labels").empty());
  CHECK(values_of(v4, namespace_index_name).empty());

  // Every earlier snapshot still shows its own moment.
  CHECK(values_of(v1, "labels") == strings{"front", "web"});
  CHECK(keys_in(v1, "labels", "front") == strings{"a/p"});
  CHECK(values_of(v2, "labels") == strings{"back", "web"});
  CHECK(keys_in(v3, "labels", "same") == strings{"a/p"});
}

TEST_CASE("a bucket shared with a snapshot is copied before it changes") {
  store s;
  REQUIRE(s.add_index("by-app", by_app).ok());
  for (int i = 0; i < 10; ++i)
    (void)s.apply(event_type::added,
                  make_pod(pod_spec{"a", "p" + std::to_string(i), "1", {{"app", "web"}}}));
  auto before = s.snapshot();
  (void)s.apply(event_type::added, make_pod(pod_spec{"a", "p10", "1", {{"app", "web"}}}));
  (void)s.apply(event_type::deleted, make_pod("a", "p0"));
  CHECK(keys_in(before, "by-app", "web").size() == 10);
  CHECK(keys_in(before, "by-app", "web").front() == "a/p0");
  auto after = s.snapshot();
  CHECK(keys_in(after, "by-app", "web").size() == 10);
  CHECK(keys_in(after, "by-app", "web").front() == "a/p1");
}

TEST_CASE("a namespace move re-files the key") {
  // Keys include the namespace, so this only happens through a custom key-preserving update;
  // the indexer itself must still handle it.
  indexer idx;
  auto in_a = make_pod("a", "p");
  auto in_b = make_pod("b", "p");
  idx.on_add(*in_a);
  idx.on_update(*in_a, *in_b);
  auto snap = idx.snapshot();
  auto a = snap.index_keys(namespace_index_name, "a");
  auto b = snap.index_keys(namespace_index_name, "b");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->empty());
  CHECK(*b == strings{"b/p"});
}

TEST_CASE("field index keys follow controller-runtime's IndexField") {
  CHECK(field_index_name("spec.nodeName") == "field:spec.nodeName");
  CHECK(namespaced_index_key("ns", "v") == "ns/v");
  CHECK(namespaced_index_key("", "v") == "__all_namespaces/v");

  auto fn = make_field_index_func(field_path_extractor("spec.nodeName"));
  auto namespaced = make_pod(pod_spec{"ns", "p", "1", {}, "node-1"});
  CHECK(fn(*namespaced) == strings{"ns/node-1", "__all_namespaces/node-1"});
  auto cluster = make_pod(pod_spec{"", "c", "1", {}, "node-1"});
  CHECK(fn(*cluster) == strings{"__all_namespaces/node-1"});
  // A missing field is indexed as "", as a field selector reads it.
  auto unscheduled = make_pod(pod_spec{"ns", "u", "1"});
  CHECK(fn(*unscheduled) == strings{"ns/", "__all_namespaces/"});

  store s;
  REQUIRE(s.add_field_index("spec.nodeName").ok());
  (void)s.replace({namespaced, cluster, unscheduled}, "1");
  auto snap = s.snapshot();
  CHECK(keys_in(snap, "field:spec.nodeName", "ns/node-1") == strings{"ns/p"});
  CHECK(keys_in(snap, "field:spec.nodeName", "__all_namespaces/node-1") == strings{"c", "ns/p"});
  CHECK(values_of(snap, "field:spec.nodeName") ==
        strings{"__all_namespaces/", "__all_namespaces/node-1", "ns/", "ns/node-1"});

  // Scheduling the pod moves it between field-index buckets.
  (void)s.apply(event_type::modified, make_pod(pod_spec{"ns", "u", "2", {}, "node-2"}));
  auto moved = s.snapshot();
  CHECK(keys_in(moved, "field:spec.nodeName", "ns/").empty());
  CHECK(keys_in(moved, "field:spec.nodeName", "ns/node-2") == strings{"ns/u"});
  CHECK(keys_in(moved, "field:spec.nodeName", "__all_namespaces/node-2") == strings{"ns/u"});
}

TEST_CASE("heap bytes of indexes count their keys") {
  store s;
  auto empty = s.snapshot().indexes().heap_bytes();
  (void)s.replace({make_pod("a", "x"), make_pod("b", "y")}, "1");
  CHECK(s.snapshot().indexes().heap_bytes() > empty);
}
