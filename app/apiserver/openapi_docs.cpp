#include "app/apiserver/openapi_docs.hpp"

#include <boost/json.hpp>

#include <cstdio>

namespace kinformer::apiserver {
namespace {

namespace json = boost::json;

// "api/v1" or "apis/apps/v1": how the OpenAPI v3 index names a group version.
std::string group_version_path(std::string_view group, std::string_view version) {
  if (group.empty())
    return "api/" + std::string(version);
  return "apis/" + std::string(group) + "/" + std::string(version);
}

// The definition name the API server uses: io.k8s.api.core.v1.Pod, io.k8s.api.apps.v1.Deployment,
// com.example.v1.Widget (custom resources: the group reversed).
std::string definition_name(const resource_info& info) {
  const std::string& group = info.gvr.group;
  std::string prefix;
  if (group.empty()) {
    prefix = "io.k8s.api.core";
  } else if (group.find('.') == std::string::npos) {
    prefix = "io.k8s.api." + group;
  } else {
    for (std::size_t end = group.size(); end != std::string::npos;) {
      auto dot = group.rfind('.', end - 1);
      std::size_t begin = dot == std::string::npos ? 0 : dot + 1;
      if (!prefix.empty())
        prefix += '.';
      prefix += group.substr(begin, end - begin);
      end = dot;
    }
  }
  return prefix + "." + info.gvr.version + "." + info.kind;
}

json::object group_version_kind(const resource_info& info) {
  return {{"group", info.gvr.group}, {"version", info.gvr.version}, {"kind", info.kind}};
}

// /api/v1/namespaces/{namespace}/pods/{name}, or /apis/g/v/clusterwidgets/{name}.
std::string item_path(const resource_info& info) {
  std::string path = "/";
  path += group_version_path(info.gvr.group, info.gvr.version);
  if (info.scope == resource_scope::namespaced)
    path += "/namespaces/{namespace}";
  return path + "/" + info.gvr.resource + "/{name}";
}

enum class dialect { v2, v3 };

json::object parameter(dialect d, std::string_view name, std::string_view in) {
  json::object p{{"name", name}, {"in", in}};
  if (in == "path")
    p["required"] = true;
  json::object type{{"type", "string"}, {"uniqueItems", true}};
  if (d == dialect::v3)
    p["schema"] = std::move(type);
  else
    for (auto& kv : type)
      p[kv.key()] = kv.value();
  return p;
}

// The PATCH operation of one kind: what kubectl inspects for fieldValidation support.
json::object patch_operation(dialect d, const resource_info& info) {
  json::array parameters{parameter(d, "name", "path"), parameter(d, "dryRun", "query"),
                         parameter(d, "fieldManager", "query"),
                         parameter(d, "fieldValidation", "query")};
  if (info.scope == resource_scope::namespaced)
    parameters.push_back(parameter(d, "namespace", "path"));
  json::object response{{"description", "OK"}};
  return {{"operationId", "patch" + info.kind},
          {"x-kubernetes-action", "patch"},
          {"x-kubernetes-group-version-kind", group_version_kind(info)},
          {"parameters", std::move(parameters)},
          {"responses", json::object{{"200", std::move(response)}}}};
}

// An object schema that accepts anything.
json::object permissive_schema(dialect d, const resource_info& info) {
  json::object s{{"type", "object"},
                 {"description", info.kind + " (" + info.gvr.to_string() +
                                     "): served by kinformer, every field accepted"},
                 {"x-kubernetes-group-version-kind", json::array{group_version_kind(info)}},
                 {"x-kubernetes-preserve-unknown-fields", true}};
  if (d == dialect::v2)
    s["additionalProperties"] = json::object();
  return s;
}

std::string hash_of(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull; // FNV-1a
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llX", static_cast<unsigned long long>(h));
  return out;
}

} // namespace

std::optional<std::string> openapi_v3_document(const std::vector<resource_info>& resources,
                                               std::string_view group, std::string_view version) {
  json::object paths;
  json::object schemas;
  for (const auto& info : resources) {
    if (info.gvr.group != group || info.gvr.version != version)
      continue;
    paths[item_path(info)] = json::object{{"patch", patch_operation(dialect::v3, info)}};
    schemas[definition_name(info)] = permissive_schema(dialect::v3, info);
  }
  if (paths.empty())
    return std::nullopt;
  json::object doc{{"openapi", "3.0.0"},
                   {"info", json::object{{"title", "Kubernetes"}, {"version", "unversioned"}}},
                   {"paths", std::move(paths)},
                   {"components", json::object{{"schemas", std::move(schemas)}}}};
  return json::serialize(doc);
}

std::string openapi_v3_index(const std::vector<resource_info>& resources) {
  json::object paths;
  for (const auto& info : resources) {
    auto key = group_version_path(info.gvr.group, info.gvr.version);
    if (paths.contains(key))
      continue;
    auto doc = openapi_v3_document(resources, info.gvr.group, info.gvr.version);
    paths[key] =
        json::object{{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" + hash_of(*doc)}};
  }
  return json::serialize(json::object{{"paths", std::move(paths)}});
}

std::string openapi_v2_document(const std::vector<resource_info>& resources,
                                std::string_view git_version) {
  json::object paths;
  json::object definitions;
  for (const auto& info : resources) {
    paths[item_path(info)] = json::object{{"patch", patch_operation(dialect::v2, info)}};
    definitions[definition_name(info)] = permissive_schema(dialect::v2, info);
  }
  json::object doc{{"swagger", "2.0"},
                   {"info", json::object{{"title", "Kubernetes"}, {"version", git_version}}},
                   {"paths", std::move(paths)},
                   {"definitions", std::move(definitions)}};
  return json::serialize(doc);
}

} // namespace kinformer::apiserver
