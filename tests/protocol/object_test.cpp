#include "protocol/object.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace kinformer;

namespace {
const char* pod_json = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {
    "name": "web-1", "namespace": "default", "uid": "u-1", "resourceVersion": "42",
    "generation": 3,
    "labels": {"app": "web", "tier": "front"},
    "annotations": {"note": "x"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                         "uid": "rs-1", "controller": true}],
    "managedFields": [{"manager": "kubectl"}]
  },
  "spec": {"nodeName": "node-a", "replicas": 2, "paused": false},
  "status": {"phase": "Running"}
})";
}

TEST_CASE("an object reads its metadata once, as views into its own JSON") {
  auto obj = object::parse(pod_json);
  REQUIRE(obj.ok());
  const auto& m = (*obj)->meta();
  CHECK((*obj)->kind() == "Pod");
  CHECK((*obj)->api_version() == "v1");
  CHECK((*obj)->key() == "default/web-1");
  CHECK(m.uid == "u-1");
  CHECK(m.resource_version == "42");
  CHECK(m.generation == 3);
  CHECK(m.label("app") == "web");
  CHECK(m.label("tier") == "front");
  CHECK_FALSE(m.label("missing").has_value());
  CHECK(m.annotation("note") == "x");
  REQUIRE(m.owner_references.size() == 1);
  CHECK(m.owner_references[0].kind == "ReplicaSet");
  CHECK(m.owner_references[0].controller);
  CHECK(m.deletion_timestamp.empty());
}

TEST_CASE("field values read dotted paths as strings") {
  auto obj = object::parse(pod_json);
  REQUIRE(obj.ok());
  CHECK(field_value(**obj, "status.phase") == "Running");
  CHECK(field_value(**obj, "spec.nodeName") == "node-a");
  CHECK(field_value(**obj, "spec.replicas") == "2");
  CHECK(field_value(**obj, "spec.paused") == "false");
  CHECK(field_value(**obj, "metadata.name") == "web-1");
  CHECK_FALSE(field_value(**obj, "spec.missing").has_value());
  CHECK_FALSE(field_value(**obj, "spec").has_value());
}

TEST_CASE("a transform runs before the object is frozen") {
  object_transform drop_managed_fields = [](boost::json::value& v) {
    v.as_object()["metadata"].as_object().erase("managedFields");
  };
  auto obj = object::parse(pod_json, &drop_managed_fields);
  REQUIRE(obj.ok());
  CHECK((*obj)->json().at("metadata").as_object().count("managedFields") == 0);
  CHECK((*obj)->meta().name == "web-1");

  boost::json::value v = boost::json::parse(pod_json);
  auto moved = object::from_json(std::move(v), &drop_managed_fields);
  REQUIRE(moved.ok());
  CHECK((*moved)->json().at("metadata").as_object().count("managedFields") == 0);
}

TEST_CASE("bad input is a clear error, never a crash") {
  CHECK(object::parse("{").err().code == errc::invalid_json);
  CHECK(object::parse("[]").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"metadata": 3})").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"metadata": {"name": 3}})").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"metadata": {"labels": {"a": 1}}})").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"metadata": {"generation": "x"}})").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"kind": 5})").err().code == errc::invalid_object);
}

TEST_CASE("the metadata-only projection keeps metadata and drops the rest") {
  auto obj = object::parse(pod_json);
  REQUIRE(obj.ok());
  auto partial = (*obj)->to_partial_metadata();
  CHECK(partial->kind() == "PartialObjectMetadata");
  CHECK(partial->api_version() == "meta.k8s.io/v1");
  CHECK(partial->key() == "default/web-1");
  CHECK(partial->meta().label("app") == "web");
  CHECK(partial->json().as_object().count("spec") == 0);
}

TEST_CASE("objects copied from a value own their storage") {
  object_ptr obj;
  {
    boost::json::value v = boost::json::parse(pod_json);
    auto r = object::from_json(v);
    REQUIRE(r.ok());
    obj = *r;
  }
  CHECK(obj->meta().label("app") == "web");
  CHECK(obj->heap_bytes() > 100);
  CHECK(boost::json::parse(obj->to_json()) == boost::json::parse(pod_json));
}

TEST_CASE("an object's tree lives in its own arena, not on the default heap") {
  // A tree copied onto the default heap would report the default resource here.
  auto obj = object::parse(pod_json);
  REQUIRE(obj.ok());
  CHECK((*obj)->json().storage().get() != boost::json::storage_ptr().get());
  boost::json::value v = boost::json::parse(pod_json);
  auto copied = object::from_json(static_cast<const boost::json::value&>(v));
  REQUIRE(copied.ok());
  CHECK((*copied)->json().storage().get() != boost::json::storage_ptr().get());
}

TEST_CASE("adopting a tree with its arena moves it without a copy") {
  auto arena = std::make_unique<boost::json::monotonic_resource>(4096);
  boost::json::value v = boost::json::parse(pod_json, boost::json::storage_ptr(arena.get()));
  const void* spec_before = &v.as_object().at("spec");
  auto resource = arena.get();
  auto obj = object::adopt(std::move(arena), std::move(v));
  REQUIRE(obj.ok());
  CHECK((*obj)->json().storage().get() == resource);
  CHECK(&(*obj)->json().as_object().at("spec") == spec_before);
  CHECK((*obj)->meta().name == "web-1");
}
