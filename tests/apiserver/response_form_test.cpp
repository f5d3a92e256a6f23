// Content negotiation: the Accept headers real clients send, and the 406 cases.

#include "app/apiserver/response_form.hpp"

#include <catch2/catch.hpp>

using namespace kinformer::apiserver;

TEST_CASE("plain JSON, wildcards and an absent header ask for objects") {
  for (auto verb : {request_verb::get, request_verb::list, request_verb::watch}) {
    CHECK(negotiate_shape("", verb) == response_shape::object);
    CHECK(negotiate_shape("application/json", verb) == response_shape::object);
    CHECK(negotiate_shape("*/*", verb) == response_shape::object);
    CHECK(negotiate_shape("application/*", verb) == response_shape::object);
    CHECK(negotiate_shape("Application/JSON; charset=utf-8", verb) == response_shape::object);
  }
  // client-go's default for built-in types prefers protobuf, then JSON.
  CHECK(negotiate_shape("application/vnd.kubernetes.protobuf, */*", request_verb::list) ==
        response_shape::object);
}

TEST_CASE("metadata-only clients get PartialObjectMetadata in the form the verb needs") {
  // What client-go's metadata client and controller-runtime's metadata cache send.
  const char* list =
      "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
      "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
  const char* item =
      "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
      "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
  CHECK(negotiate_shape(list, request_verb::list) == response_shape::partial_metadata);
  CHECK(negotiate_shape(item, request_verb::watch) == response_shape::partial_metadata);
  CHECK(negotiate_shape(item, request_verb::get) == response_shape::partial_metadata);
  CHECK(negotiate_shape("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1",
                        request_verb::get) == response_shape::partial_metadata);
  // The item form for a list (and the list form for a watch) is not what the verb returns:
  // the plain JSON fallback answers instead, and without one it is a 406.
  CHECK(negotiate_shape(item, request_verb::list) == response_shape::object);
  CHECK_FALSE(negotiate_shape("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                              request_verb::watch));
}

TEST_CASE("kubectl's Table request gets a Table") {
  const char* kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,"
                        "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
  for (auto verb : {request_verb::get, request_verb::list, request_verb::watch})
    CHECK(negotiate_shape(kubectl, verb) == response_shape::table);
}

TEST_CASE("what cannot be produced is skipped, and nothing left is a 406") {
  CHECK_FALSE(negotiate_shape("application/yaml", request_verb::list));
  CHECK_FALSE(negotiate_shape("application/vnd.kubernetes.protobuf", request_verb::list));
  CHECK_FALSE(negotiate_shape("text/html", request_verb::get));
  CHECK_FALSE(negotiate_shape("application/json;as=Scale;g=autoscaling;v=v1", request_verb::get));
  CHECK_FALSE(negotiate_shape("application/json;as=Table;g=example.com;v=v1", request_verb::get));
  CHECK_FALSE(negotiate_shape("application/json;as=Table;g=meta.k8s.io;v=v2", request_verb::get));
  CHECK_FALSE(negotiate_shape("application/json;q=0", request_verb::get));
  CHECK(negotiate_shape("application/yaml, application/json;q=0.5", request_verb::get) ==
        response_shape::object);
}

TEST_CASE("a higher q wins over an earlier range") {
  CHECK(negotiate_shape("application/json;q=0.5,application/json;as=Table;g=meta.k8s.io;v=v1",
                        request_verb::list) == response_shape::table);
  CHECK(negotiate_shape("application/json,application/json;as=Table;g=meta.k8s.io;v=v1",
                        request_verb::list) == response_shape::object);
  CHECK(negotiate_shape(" , ,application/json;as=Table;g=meta.k8s.io;v=v1;q=bad,*/*",
                        request_verb::list) == response_shape::object); // a bad q is 0
}

TEST_CASE("a server without tables answers kubectl by its JSON fallback") {
  const char* kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
  CHECK(negotiate_shape(kubectl, request_verb::list, false) == response_shape::object);
  CHECK_FALSE(
      negotiate_shape("application/json;as=Table;v=v1;g=meta.k8s.io", request_verb::list, false));
}
