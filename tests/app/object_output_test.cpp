#include "app/common/object_output.hpp"
#include "protocol/object.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <sstream>

using namespace kinformer;

namespace {

const char* pod_json =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"ns",)"
    R"("resourceVersion":"7","labels":{"on":"true","version":"1.10","empty":""}},)"
    R"("spec":{"containers":[{"name":"c","ports":[{"containerPort":8080}]}],)"
    R"("nodeName":null,"hostNetwork":false,"weight":2.5,"list":[],"map":{}}})";

delta make_delta(delta_type type) {
  return delta{type, *object::parse(pod_json), nullptr, false, false};
}

std::string written(const delta& d, output_format format) {
  std::ostringstream out;
  write_delta(out, d, format, name_prefix("Pod", ""));
  return out.str();
}

} // namespace

TEST_CASE("output formats: the choices, and what -o name prints") {
  CHECK(*parse_output_format("") == output_format::delta_line);
  CHECK(*parse_output_format("json") == output_format::json);
  CHECK(*parse_output_format("yaml") == output_format::yaml);
  CHECK(*parse_output_format("name") == output_format::name);
  CHECK_FALSE(parse_output_format("wide").ok());
  CHECK(name_prefix("Deployment", "apps") == "deployment.apps");
  CHECK(written(make_delta(delta_type::added), output_format::name) == "pod/web-1\n");
  // A relist that found the object unchanged is no event: nothing is printed.
  CHECK(written(make_delta(delta_type::sync), output_format::name).empty());
  CHECK(written(make_delta(delta_type::sync), output_format::json).empty());
  CHECK_THAT(written(make_delta(delta_type::sync), output_format::delta_line),
             Catch::Contains("\"SYNC\""));
}

TEST_CASE("output formats: json is the object, indented by 4") {
  const std::string text = written(make_delta(delta_type::deleted), output_format::json);
  CHECK(text.starts_with("{\n    \"apiVersion\": \"v1\",\n"));
  CHECK(boost::json::parse(text) == boost::json::parse(pod_json));
  CHECK_THAT(text, Catch::Contains("\"list\": []") && Catch::Contains("\"map\": {}"));
}

TEST_CASE("output formats: yaml reads back as the same object, strings kept strings") {
  const std::string text = written(make_delta(delta_type::updated), output_format::yaml);
  CHECK(text.starts_with("---\n"));
  const YAML::Node doc = YAML::Load(text);
  CHECK(doc["metadata"]["name"].as<std::string>() == "web-1");
  // "true", "1.10" and "" are strings: quoted, so that YAML does not read them as a bool, a
  // number or null.
  CHECK(doc["metadata"]["labels"]["on"].Tag() == "!");
  CHECK(doc["metadata"]["labels"]["version"].as<std::string>() == "1.10");
  CHECK(doc["metadata"]["labels"]["version"].Tag() == "!");
  CHECK(doc["metadata"]["labels"]["empty"].Tag() == "!");
  CHECK(doc["spec"]["containers"][0]["ports"][0]["containerPort"].as<int>() == 8080);
  CHECK(doc["spec"]["nodeName"].IsNull());
  CHECK(doc["spec"]["hostNetwork"].as<bool>() == false);
}

TEST_CASE("output formats: a delta line is one JSON object, each type and flag as it is") {
  CHECK(written(make_delta(delta_type::added), output_format::delta_line) ==
        R"({"type":"ADDED","key":"ns/web-1","resourceVersion":"7","initialList":false,)"
        R"("finalStateUnknown":false})"
        "\n");
  delta deleted{delta_type::deleted, *object::parse(pod_json), nullptr, true, true};
  CHECK(written(deleted, output_format::delta_line) ==
        R"({"type":"DELETED","key":"ns/web-1","resourceVersion":"7","initialList":true,)"
        R"("finalStateUnknown":true})"
        "\n");
  CHECK_THAT(written(make_delta(delta_type::updated), output_format::delta_line),
             Catch::StartsWith(R"({"type":"UPDATED",)"));
  // A name with characters JSON escapes (the key comes from the server) still makes one valid
  // line.
  const auto odd = *object::parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a\"b\\c\u0001","namespace":"ns",)"
      R"("resourceVersion":"8"}})");
  const std::string line =
      written(delta{delta_type::added, odd, nullptr, false, false}, output_format::delta_line);
  CHECK(boost::json::parse(line).at("key").as_string() == "ns/a\"b\\c\x01");
}
