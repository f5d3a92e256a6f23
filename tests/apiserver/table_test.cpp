// The default Table: columns, rows, the object each row carries, list metadata.

#include "app/apiserver/table.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace kinformer;
using namespace kinformer::apiserver;
namespace json = boost::json;

namespace {

object_ptr pod(const std::string& name, const std::string& created) {
  auto obj = object::parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
                           R"(","namespace":"ns-1","resourceVersion":"7","creationTimestamp":")" +
                           created + R"(","labels":{"app":"a"}},"spec":{"nodeName":"n1"}})");
  REQUIRE(obj.ok());
  return *obj;
}

} // namespace

TEST_CASE("a Table has Name and Created At, and a row per object with its metadata") {
  std::vector<object_ptr> pods{pod("a", "2026-01-02T03:04:05Z"), pod("b\\\"q", "")};
  auto table = json::parse(table_json(pods, include_object::metadata, {"42", "tok", 3}));
  CHECK(table.at("kind") == "Table");
  CHECK(table.at("apiVersion") == "meta.k8s.io/v1");
  CHECK(table.at("metadata").at("resourceVersion") == "42");
  CHECK(table.at("metadata").at("continue") == "tok");
  CHECK(table.at("metadata").at("remainingItemCount") == 3);
  const auto& columns = table.at("columnDefinitions").as_array();
  REQUIRE(columns.size() == 2);
  CHECK(columns[0].at("name") == "Name");
  CHECK(columns[1].at("name") == "Created At");
  const auto& rows = table.at("rows").as_array();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("cells") == json::array{"a", "2026-01-02T03:04:05Z"});
  CHECK(rows[1].at("cells").at(0) == "b\"q"); // escaped on the way out
  const auto& object = rows[0].at("object");
  CHECK(object.at("kind") == "PartialObjectMetadata");
  CHECK(object.at("metadata").at("namespace") == "ns-1");
  CHECK_FALSE(object.as_object().contains("spec"));
}

TEST_CASE("includeObject chooses what a row carries, a watch's later events have no columns") {
  std::vector<object_ptr> one{pod("a", "2026-01-02T03:04:05Z")};
  auto full = json::parse(table_json(one, include_object::object, {"7", {}, {}}));
  CHECK(full.at("rows").at(0).at("object").at("spec").at("nodeName") == "n1");
  CHECK_FALSE(full.at("metadata").as_object().contains("continue"));
  auto none = json::parse(table_json(one, include_object::none, {"7", {}, {}}, false));
  CHECK_FALSE(none.at("rows").at(0).as_object().contains("object"));
  CHECK(none.at("columnDefinitions").is_null());

  CHECK(parse_include_object("") == include_object::metadata);
  CHECK(parse_include_object("Metadata") == include_object::metadata);
  CHECK(parse_include_object("None") == include_object::none);
  CHECK(parse_include_object("Object") == include_object::object);
  CHECK_FALSE(parse_include_object("object"));
}
