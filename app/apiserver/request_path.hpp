#pragma once
// Parsing of API-server request targets: percent-decoded path segments and query parameters, and
// the route a path names (discovery document, resource collection or item, control endpoint).
// Pure string work, no networking: the simulator and the read API ask this what
// was requested.

#include "protocol/result.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer::apiserver {

struct request_target {
  std::string path;                  // decoded, without the query
  std::vector<std::string> segments; // path split on '/', empty segments dropped
  std::map<std::string, std::string> query;

  // The parameter's value, or nullopt when absent.
  std::optional<std::string_view> param(std::string_view name) const;
  // "1"/"true" (any case) -> true, "0"/"false"/"" -> false; anything else is an error.
  result<bool> flag(std::string_view name) const;
  // A non-negative integer parameter; nullopt when absent.
  result<std::optional<std::int64_t>> integer(std::string_view name) const;
};

// Splits "/api/v1/pods?labelSelector=app%3Dweb&limit=5" into its parts. Fails on a malformed
// percent escape or a target that is not an absolute path.
result<request_target> parse_target(std::string_view target);

// Decodes %XX escapes (and '+' as space, when `plus_is_space`, as in query strings).
result<std::string> percent_decode(std::string_view text, bool plus_is_space);

enum class route_kind {
  version,       // /version
  core_versions, // /api
  group_list,    // /apis
  group,         // /apis/{group}
  resource_list, // /api/v1, /apis/{group}/{version}
  resource,      // a collection or an item under one of those
  control,       // /sim/...
  openapi,       // /openapi/v2, /openapi/v3/...
  health,        // /healthz, /livez, /readyz
  unknown,
};

// What a resource path names. `name` empty means the collection.
struct resource_path {
  std::string group; // "" for the core group
  std::string version;
  std::string namespace_; // from .../namespaces/{ns}/...; empty when not given
  std::string resource;   // plural: "pods"
  std::string name;
  std::string subresource;   // "status", ...
  bool watch_prefix = false; // the deprecated /api/v1/watch/... form
};

struct route {
  route_kind kind = route_kind::unknown;
  std::string group;   // for group, resource_list
  std::string version; // for resource_list
  resource_path resource;
};

// Classifies decoded path segments. `/api/v1/namespaces/{ns}` names the namespace object itself;
// `/api/v1/namespaces/{ns}/{resource}[/{name}[/{subresource}]]` a namespaced resource, except
// that `status` and `finalize` directly after a namespace name are the namespace's subresources.
route classify(const std::vector<std::string>& segments);

} // namespace kinformer::apiserver
