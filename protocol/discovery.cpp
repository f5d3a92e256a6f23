#include "protocol/discovery.hpp"

#include <boost/json.hpp>

namespace kinformer {

namespace json = boost::json;

namespace {

// Parses `body` and checks it is an object of the expected kind. A Status (the server refusing
// the request) becomes an errc::status error carrying its message.
result<json::value> parse_document(std::string_view body, std::string_view expected_kind) {
  json::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec)
    return make_error(errc::invalid_json,
                      std::string(expected_kind) + " document: " + ec.message());
  const auto* obj = doc.if_object();
  if (!obj)
    return make_error(errc::invalid_object,
                      std::string(expected_kind) + " document is not a JSON object");
  if (const auto* kind_value = obj->if_contains("kind")) {
    const auto* kind = kind_value->if_string();
    if (kind && *kind == "Status") {
      std::string message;
      if (const auto* m = obj->if_contains("message"); m && m->is_string())
        message = std::string(m->get_string());
      return make_error(errc::status, "discovery answered with a Status: " + message);
    }
    if (!kind || *kind != expected_kind)
      return make_error(errc::invalid_object,
                        "expected kind " + std::string(expected_kind) + ", got " +
                            (kind ? std::string(*kind) : std::string("a non-string kind")));
  }
  return doc;
}

error shape_error(std::string_view where, std::string_view what) {
  return make_error(errc::invalid_object, std::string(where) + ": " + std::string(what));
}

// Reads an optional string field: absent is "", present but not a string is an error.
result<std::string> string_field(const json::object& obj, std::string_view key,
                                 std::string_view where) {
  const auto* v = obj.if_contains(key);
  if (!v || v->is_null())
    return std::string();
  if (const auto* s = v->if_string())
    return std::string(*s);
  return shape_error(where, std::string(key) + " is not a string");
}

result<std::string> required_string(const json::object& obj, std::string_view key,
                                    std::string_view where) {
  auto value = string_field(obj, key, where);
  if (value && value->empty())
    return shape_error(where, "missing " + std::string(key));
  return value;
}

result<std::vector<std::string>> string_array(const json::object& obj, std::string_view key,
                                              std::string_view where) {
  std::vector<std::string> out;
  const auto* v = obj.if_contains(key);
  if (!v || v->is_null())
    return out;
  const auto* arr = v->if_array();
  if (!arr)
    return shape_error(where, std::string(key) + " is not an array");
  for (const auto& item : *arr) {
    const auto* s = item.if_string();
    if (!s)
      return shape_error(where, std::string(key) + " holds a non-string");
    out.emplace_back(*s);
  }
  return out;
}

const json::array* array_field(const json::object& obj, std::string_view key) {
  const auto* v = obj.if_contains(key);
  return v ? v->if_array() : nullptr;
}

result<api_resource> decode_resource(const json::value& value) {
  constexpr std::string_view where = "APIResourceList resource";
  const auto* obj = value.if_object();
  if (!obj)
    return shape_error(where, "not an object");
  api_resource r;
  auto name = required_string(*obj, "name", where);
  if (!name)
    return std::move(name).err();
  r.name = std::move(*name);
  auto singular = string_field(*obj, "singularName", where);
  if (!singular)
    return std::move(singular).err();
  r.singular_name = std::move(*singular);
  auto kind = required_string(*obj, "kind", where);
  if (!kind)
    return std::move(kind).err();
  r.kind = std::move(*kind);
  if (const auto* ns = obj->if_contains("namespaced")) {
    if (!ns->is_bool())
      return shape_error(where, r.name + ": namespaced is not a boolean");
    r.namespaced = ns->get_bool();
  }
  auto verbs = string_array(*obj, "verbs", where);
  if (!verbs)
    return std::move(verbs).err();
  r.verbs = std::move(*verbs);
  auto short_names = string_array(*obj, "shortNames", where);
  if (!short_names)
    return std::move(short_names).err();
  r.short_names = std::move(*short_names);
  return r;
}

} // namespace

result<std::vector<std::string>> decode_api_versions(std::string_view body) {
  auto doc = parse_document(body, "APIVersions");
  if (!doc)
    return std::move(doc).err();
  auto versions = string_array(doc->get_object(), "versions", "APIVersions");
  if (versions && versions->empty())
    return shape_error("APIVersions", "no versions");
  return versions;
}

result<std::vector<api_group>> decode_api_group_list(std::string_view body) {
  constexpr std::string_view where = "APIGroupList";
  auto doc = parse_document(body, where);
  if (!doc)
    return std::move(doc).err();
  const auto* groups = array_field(doc->get_object(), "groups");
  if (!groups)
    return shape_error(where, "groups is missing or not an array");

  std::vector<api_group> out;
  for (const auto& entry : *groups) {
    const auto* obj = entry.if_object();
    if (!obj)
      return shape_error(where, "a group is not an object");
    api_group group;
    auto name = required_string(*obj, "name", where);
    if (!name)
      return std::move(name).err();
    group.name = std::move(*name);
    const auto* versions = array_field(*obj, "versions");
    if (!versions)
      return shape_error(where, group.name + ": versions is missing or not an array");
    for (const auto& v : *versions) {
      const auto* vobj = v.if_object();
      if (!vobj)
        return shape_error(where, group.name + ": a version is not an object");
      auto version = required_string(*vobj, "version", where);
      if (!version)
        return std::move(version).err();
      group.versions.push_back(std::move(*version));
    }
    if (const auto* preferred = obj->if_contains("preferredVersion")) {
      const auto* pobj = preferred->if_object();
      if (!pobj)
        return shape_error(where, group.name + ": preferredVersion is not an object");
      auto version = string_field(*pobj, "version", where);
      if (!version)
        return std::move(version).err();
      group.preferred_version = std::move(*version);
    }
    if (group.preferred_version.empty() && !group.versions.empty())
      group.preferred_version = group.versions.front();
    out.push_back(std::move(group));
  }
  return out;
}

result<api_resource_list> decode_api_resource_list(std::string_view body) {
  constexpr std::string_view where = "APIResourceList";
  auto doc = parse_document(body, where);
  if (!doc)
    return std::move(doc).err();
  const auto& obj = doc->get_object();
  api_resource_list list;
  auto group_version = required_string(obj, "groupVersion", where);
  if (!group_version)
    return std::move(group_version).err();
  list.group_version = std::move(*group_version);
  const auto* resources = array_field(obj, "resources");
  if (!resources)
    return shape_error(where, "resources is missing or not an array");
  for (const auto& entry : *resources) {
    auto resource = decode_resource(entry);
    if (!resource)
      return std::move(resource).err();
    // Subresources ("pods/status", "deployments/scale") are not collections to watch.
    if (resource->name.find('/') != std::string::npos)
      continue;
    list.resources.push_back(std::move(*resource));
  }
  return list;
}

} // namespace kinformer
