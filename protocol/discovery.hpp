#pragma once
// Decoders for the API server's discovery documents: /api (APIVersions), /apis (APIGroupList)
// and /api/v1, /apis/{group}/{version} (APIResourceList). Malformed or wrongly typed JSON comes
// back as an error, never an exception.

#include "protocol/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

// One entry of an APIResourceList.
struct api_resource {
  std::string name;          // plural: "pods"
  std::string singular_name; // "pod"; older servers leave it empty
  std::string kind;          // "Pod"
  bool namespaced = false;
  std::vector<std::string> verbs;
  std::vector<std::string> short_names; // "po"
};

struct api_resource_list {
  std::string group_version;           // "v1", "apps/v1"
  std::vector<api_resource> resources; // top-level resources only: "pods/status" is skipped
};

struct api_group {
  std::string name;                  // "apps"
  std::vector<std::string> versions; // in the server's order of preference
  std::string preferred_version;     // "v1"
};

// /api: the core group's versions (["v1"]).
result<std::vector<std::string>> decode_api_versions(std::string_view body);
// /apis: every named group with its versions.
result<std::vector<api_group>> decode_api_group_list(std::string_view body);
// /api/v1, /apis/{group}/{version}.
result<api_resource_list> decode_api_resource_list(std::string_view body);

} // namespace kinformer
