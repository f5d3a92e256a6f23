#include "app/apiserver/table.hpp"

#include "app/apiserver/table_printer.hpp"
#include "protocol/json_string.hpp"

namespace kinformer::apiserver {

namespace {

constexpr std::string_view columns =
    R"([{"name":"Name","type":"string","format":"name","description":"Name must be unique )"
    R"(within a namespace.","priority":0},{"name":"Created At","type":"date","format":"",)"
    R"("description":"CreationTimestamp is a timestamp representing the server time when )"
    R"(this object was created.","priority":0}])";

} // namespace

std::optional<include_object> parse_include_object(std::string_view value) {
  if (value.empty() || value == "Metadata")
    return include_object::metadata;
  if (value == "None")
    return include_object::none;
  if (value == "Object")
    return include_object::object;
  return std::nullopt;
}

std::string table_json(std::span<const object_ptr> objects, include_object include,
                       const table_meta& meta, bool with_columns, const table_printer* printer) {
  const auto now = std::chrono::system_clock::now();
  std::string out = R"({"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{)";
  out += R"("resourceVersion":)";
  append_json_string(out, meta.resource_version);
  if (!meta.continue_token.empty()) {
    out += R"(,"continue":)";
    append_json_string(out, meta.continue_token);
  }
  if (meta.remaining_item_count) {
    out += R"(,"remainingItemCount":)";
    out += std::to_string(*meta.remaining_item_count);
  }
  out += R"(},"columnDefinitions":)";
  out += with_columns ? (printer ? printer->columns : columns) : std::string_view("null");
  out += R"(,"rows":[)";
  bool first = true;
  for (const auto& obj : objects) {
    if (!first)
      out += ',';
    first = false;
    out += R"({"cells":[)";
    if (printer) {
      printer->cells(*obj, now, out);
    } else {
      append_json_string(out, obj->meta().name);
      out += ',';
      append_json_string(out, obj->field("metadata.creationTimestamp").value_or(""));
    }
    out += ']';
    switch (include) {
    case include_object::none:
      break;
    case include_object::metadata:
      out += R"(,"object":)";
      out += obj->partial_metadata_json();
      break;
    case include_object::object:
      out += R"(,"object":)";
      out += obj->json_text();
      break;
    }
    out += '}';
  }
  out += "]}";
  return out;
}

} // namespace kinformer::apiserver
