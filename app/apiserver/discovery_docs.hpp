#pragma once
// The API server's discovery documents, built from the served resources:
// /version (version.Info), /api (APIVersions), /apis (APIGroupList), /apis/{group} (APIGroup),
// /api/v1 and /apis/{group}/{version} (APIResourceList). Plain JSON text, the legacy
// (unaggregated) form every client falls back to.

#include "app/apiserver/resource_info.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer::apiserver {

// version.Info; major and minor are read from `git_version` ("v1.29.0-kubesim" -> 1, 29).
std::string version_document(std::string_view git_version);

// APIVersions for the core group; `server_address` is host:port as clients reach it.
std::string core_versions_document(std::string_view server_address);

// APIGroupList over every non-core group, versions ordered by Kubernetes version priority
// (v1 > v1beta2 > v1beta1 > v1alpha1), the first being the preferred one.
std::string group_list_document(const std::vector<resource_info>& resources);

// APIGroup for `group`; nullopt when no resource belongs to it.
std::optional<std::string> group_document(const std::vector<resource_info>& resources,
                                          std::string_view group);

// APIResourceList for group/version; nullopt when no resource is served there.
std::optional<std::string> resource_list_document(const std::vector<resource_info>& resources,
                                                  std::string_view group, std::string_view version);

// True when `a` is a higher-priority Kubernetes API version than `b` (GA over beta over alpha,
// then by number; unconventional names last, alphabetically).
bool higher_version_priority(std::string_view a, std::string_view b);

} // namespace kinformer::apiserver
