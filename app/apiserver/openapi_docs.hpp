#pragma once
// Minimal, permissive OpenAPI documents built from the served resources, enough for
// kubectl to validate and apply without --validate=false:
//
// - /openapi/v3 (the index) and /openapi/v3/api/v1, /openapi/v3/apis/{group}/{version}: one
//   PATCH operation per kind, tagged x-kubernetes-group-version-kind and declaring the
//   `fieldValidation` query parameter. kubectl reads exactly that to decide the server validates
//   fields itself (it then sends fieldValidation=Strict and validates nothing client-side). The
//   operations declare no request body, so kubectl apply builds its patches from its compiled-in
//   types (built-ins) or as JSON merge patches (custom resources), which the simulator accepts.
//   Schemas are objects that preserve unknown fields: nothing a client sends is rejected.
// - /openapi/v2: the same as one Swagger 2.0 JSON document (definitions with
//   x-kubernetes-group-version-kind and additionalProperties), for clients that accept JSON.

#include "app/apiserver/resource_info.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer::apiserver {

// {"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=..."},...}}
std::string openapi_v3_index(const std::vector<resource_info>& resources);

// The document of one group version ("" for the core group); nullopt when nothing is served there.
std::optional<std::string> openapi_v3_document(const std::vector<resource_info>& resources,
                                               std::string_view group, std::string_view version);

// The Swagger 2.0 document of every resource.
std::string openapi_v2_document(const std::vector<resource_info>& resources,
                                std::string_view git_version);

} // namespace kinformer::apiserver
