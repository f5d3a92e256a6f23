// ListOptions as the API server reads and checks them: 400 for what does not parse, 422 Invalid
// for combinations ValidateListOptions forbids, and the values otherwise.

#include "app/apiserver/list_query.hpp"

#include <catch2/catch.hpp>

using namespace kinformer;
using namespace kinformer::apiserver;

namespace {

// The query's Status code, or 0 when it is accepted.
int code_of(const std::string& target, bool watch_path = false) {
  auto parsed = parse_target(target);
  REQUIRE(parsed.ok());
  auto query = parse_list_query(*parsed, watch_path);
  if (auto* failure = std::get_if<status>(&query))
    return failure->code;
  return 0;
}

list_query query_of(const std::string& target, bool watch_path = false) {
  auto parsed = parse_target(target);
  REQUIRE(parsed.ok());
  auto query = parse_list_query(*parsed, watch_path);
  REQUIRE(std::holds_alternative<list_query>(query));
  return std::get<list_query>(query);
}

} // namespace

TEST_CASE("list_query: the values of a list and of a watch") {
  auto list = query_of("/api/v1/pods?labelSelector=app%3Dweb&fieldSelector=metadata.name%3Dx"
                       "&limit=5&resourceVersion=7&resourceVersionMatch=NotOlderThan");
  CHECK(!list.watch);
  CHECK(list.labels.to_string() == "app=web");
  CHECK(list.fields.to_string() == "metadata.name=x");
  CHECK(list.limit == 5);
  CHECK(list.resource_version == "7");
  CHECK(list.match == resource_version_match::not_older_than);

  auto watch = query_of("/api/v1/pods?watch=true&allowWatchBookmarks=1&timeoutSeconds=30"
                        "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan");
  CHECK(watch.watch);
  CHECK(watch.allow_bookmarks);
  CHECK(watch.timeout_seconds == 30);
  CHECK(watch.send_initial_events == true);
  CHECK(query_of("/api/v1/watch/pods", true).watch);
  CHECK(!query_of("/api/v1/pods").send_initial_events.has_value());
  CHECK(query_of("/api/v1/pods?limit=5&continue=abc").continue_token == "abc");
}

TEST_CASE("list_query: what does not parse is 400") {
  CHECK(code_of("/api/v1/pods?labelSelector=%3D%3D") == 400);
  CHECK(code_of("/api/v1/pods?fieldSelector=%3Dx") == 400);
  CHECK(code_of("/api/v1/pods?watch=maybe") == 400);
  CHECK(code_of("/api/v1/pods?limit=abc") == 400);
  CHECK(code_of("/api/v1/pods?timeoutSeconds=soon") == 400);
  CHECK(code_of("/api/v1/pods?watch=1&sendInitialEvents=perhaps") == 400);
}

TEST_CASE("list_query: what ValidateListOptions forbids is 422 Invalid") {
  // Lists.
  CHECK(code_of("/api/v1/pods?resourceVersionMatch=Sometimes&resourceVersion=1") == 422);
  CHECK(code_of("/api/v1/pods?resourceVersionMatch=NotOlderThan") == 422);
  CHECK(code_of("/api/v1/pods?resourceVersionMatch=Exact&resourceVersion=0") == 422);
  CHECK(code_of("/api/v1/pods?resourceVersionMatch=Exact&resourceVersion=5&continue=x") == 422);
  CHECK(code_of("/api/v1/pods?sendInitialEvents=false") == 422);
  CHECK(code_of("/api/v1/pods?resourceVersionMatch=Exact&resourceVersion=5") == 0);
  // Watches.
  CHECK(code_of("/api/v1/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true") == 422);
  // kube-apiserver v1.37 takes it without allowWatchBookmarks (and sends no bookmark at the end).
  CHECK(code_of("/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan") ==
        0);
  CHECK(code_of("/api/v1/pods?watch=1&resourceVersionMatch=NotOlderThan") == 422);
  CHECK(code_of("/api/v1/pods?watch=1&sendInitialEvents=false&resourceVersionMatch=Exact") == 422);
  CHECK(code_of("/api/v1/pods?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan") ==
        0);

  auto parsed = parse_target("/api/v1/pods?resourceVersionMatch=Sometimes&resourceVersion=1");
  REQUIRE(parsed.ok());
  auto query = parse_list_query(*parsed, false);
  REQUIRE(std::holds_alternative<status>(query));
  CHECK(std::get<status>(query).message ==
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: "
        "\"Sometimes\": supported values: \"Exact\", \"NotOlderThan\", \"\"");
}

namespace {

status failure_of(const std::string& target) {
  auto parsed = parse_target(target);
  REQUIRE(parsed.ok());
  auto query = parse_list_query(*parsed, false);
  REQUIRE(std::holds_alternative<status>(query));
  return std::get<status>(query);
}

} // namespace

// Each as kube-apiserver v1.37.2 answered it (docs/real-kubernetes.md, wire differences).
TEST_CASE("list_query: a resourceVersion that is not a number, in the real server's words") {
  auto list = failure_of("/api/v1/pods?resourceVersion=abc");
  CHECK(list.code == 400);
  CHECK(list.reason == "BadRequest");
  CHECK(list.message == "invalid resource version: resourceVersion: Invalid value: \"abc\": "
                        "strconv.ParseUint: parsing \"abc\": invalid syntax");
  auto watch = failure_of("/api/v1/pods?watch=1&resourceVersion=abc");
  CHECK(watch.code == 500); // the storage layer's error, passed on as it is
  CHECK(watch.reason.empty());
  CHECK(watch.message == "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing "
                         "\"abc\": invalid syntax");
  CHECK(failure_of("/api/v1/pods?resourceVersion=-1").code == 400);
  CHECK_THAT(failure_of("/api/v1/pods?resourceVersion=99999999999999999999").message,
             Catch::EndsWith("value out of range"));
  CHECK(code_of("/api/v1/pods?resourceVersion=18446744073709551615") == 0);
}

TEST_CASE("list_query: limit as the real server reads it") {
  CHECK(query_of("/api/v1/pods?limit=-1").limit == 0); // no paging, not an error
  CHECK(query_of("/api/v1/pods?limit=0").limit == 0);
  auto words = failure_of("/api/v1/pods?limit=abc");
  CHECK(words.code == 400);
  CHECK(words.message == "strconv.ParseInt: parsing \"abc\": invalid syntax");
}
