// What an informer requires of an object beyond valid JSON (protocol/object_check.hpp), alone
// and as the decoders apply it to watch events and List items.

#include "protocol/decode.hpp"
#include "protocol/list_decoder.hpp"
#include "protocol/object.hpp"
#include "protocol/object_check.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace kinformer;

namespace {

object_ptr parse(const std::string& text) {
  auto obj = object::parse(text);
  REQUIRE(obj.ok());
  return *obj;
}

std::string pod(const std::string& metadata) {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{)" + metadata + "}}";
}

const object_expectations pods{"Pod", "v1", true};

} // namespace

TEST_CASE("an object with a name, a resourceVersion and the watched kind in its scope passes") {
  CHECK(check_object(*parse(pod(R"("name":"a","namespace":"d","resourceVersion":"5")")), pods));
  const object_expectations nodes{"Node", "v1", false};
  CHECK(check_object(*parse(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n",)"
                            R"("resourceVersion":"1"}})"),
                     nodes));
  CHECK(check_object(*parse(pod(R"("name":"a","resourceVersion":"5")")), object_expectations{}));
}

TEST_CASE("each missing or wrong part of an object is named") {
  auto failure = [](const std::string& text, const object_expectations& expected) {
    auto checked = check_object(*parse(text), expected);
    REQUIRE_FALSE(checked);
    CHECK(checked.err().code == errc::invalid_object);
    return checked.err().message;
  };
  CHECK_THAT(failure(pod(R"("namespace":"d","resourceVersion":"5")"), pods),
             Catch::Contains("metadata.name is missing"));
  CHECK_THAT(failure(pod(R"("name":"a","namespace":"d")"), pods),
             Catch::Contains("\"d/a\": metadata.resourceVersion is missing"));
  CHECK_THAT(failure(pod(R"("name":"a","resourceVersion":"5")"), pods),
             Catch::Contains("the kind is namespaced"));
  CHECK_THAT(failure(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n","namespace":"d",)"
                     R"("resourceVersion":"1"}})",
                     object_expectations{"Node", "v1", false}),
             Catch::Contains("the kind is cluster-scoped"));
  CHECK_THAT(failure(pod(R"("name":")" + std::string(3 << 20, 'x') +
                         R"(","namespace":"d",)"
                         R"("resourceVersion":"5")"),
                     pods),
             Catch::Contains("over the limit of 253"));
  CHECK_THAT(failure(pod(R"("name":"a","namespace":")" + std::string(64, 'n') +
                         R"(","resourceVersion":"5")"),
                     pods),
             Catch::Contains("metadata.namespace is over 63 bytes"));
  CHECK_THAT(failure(R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a",)"
                     R"("namespace":"d","resourceVersion":"5"}})",
                     pods),
             Catch::Contains("kind is \"ConfigMap\", expected \"Pod\""));
  CHECK_THAT(failure(R"({"kind":"Pod","apiVersion":"v2","metadata":{"name":"a",)"
                     R"("namespace":"d","resourceVersion":"5"}})",
                     pods),
             Catch::Contains("apiVersion is \"v2\", expected \"v1\""));
}

TEST_CASE("a watch event whose object fails the check is an error, bookmarks are not checked") {
  decode_options options;
  options.expect = &pods;
  auto bad = decode_watch_event(R"({"type":"MODIFIED","object":)" +
                                    pod(R"("name":"a","resourceVersion":"5")") + "}",
                                options);
  REQUIRE_FALSE(bad);
  CHECK(bad.err().code == errc::invalid_object);
  CHECK_THAT(bad.err().message, Catch::StartsWith("MODIFIED event: Pod \"a\""));
  auto deleted =
      decode_watch_event(R"({"type":"DELETED","object":)" + pod(R"("name":"a")") + "}", options);
  CHECK_FALSE(deleted);
  auto bookmark =
      decode_watch_event(R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1",)"
                         R"("metadata":{"resourceVersion":"9"}}})",
                         options);
  CHECK(bookmark);
  auto good =
      decode_watch_event(R"({"type":"ADDED","object":)" +
                             pod(R"("name":"a","namespace":"d","resourceVersion":"5")") + "}",
                         options);
  CHECK(good);
}

TEST_CASE("a List item that fails the check fails the list, also when the List names its kind "
          "after its items") {
  decode_options options;
  options.expect = &pods;
  auto typed = decode_list(R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[)"
                           R"({"metadata":{"name":"a","namespace":"d","resourceVersion":"1"}},)"
                           R"({"metadata":{"name":"b","resourceVersion":"2"}}]})",
                           options);
  REQUIRE_FALSE(typed);
  CHECK_THAT(typed.err().message, Catch::StartsWith("List items[1]: Pod \"b\""));

  auto late_ok = decode_list(R"({"metadata":{},"items":[)"
                             R"({"metadata":{"name":"a","namespace":"d","resourceVersion":"1"}}],)"
                             R"("kind":"PodList","apiVersion":"v1"})",
                             options);
  REQUIRE(late_ok);
  CHECK(late_ok->items.size() == 1);
  auto late_wrong =
      decode_list(R"({"metadata":{},"items":[)"
                  R"({"metadata":{"name":"a","namespace":"d","resourceVersion":"1"}}],)"
                  R"("kind":"ConfigMapList","apiVersion":"v1"})",
                  options);
  REQUIRE_FALSE(late_wrong);
  CHECK_THAT(late_wrong.err().message, Catch::Contains("expected \"Pod\""));
}
