#pragma once
// What an informer requires of every object it receives beyond valid JSON, checked as each list
// item and watch event is decoded: an object that fails never reaches a store or a handler.
// The API server never sends such an object; a proxy, a broken server or an attacker might, and
// one without a namespace or resourceVersion would otherwise sit in the store until a relist.

#include "protocol/result.hpp"

#include <optional>
#include <string>

namespace kinformer {

class object;

struct object_expectations {
  std::string kind;               // "Pod", "PartialObjectMetadata"; empty: any
  std::string api_version;        // "v1", "apps/v1", "meta.k8s.io/v1"; empty: any
  std::optional<bool> namespaced; // whether metadata.namespace must be set; nullopt: either
};

// The limits the API server validates names against (a DNS subdomain, a DNS label).
inline constexpr std::size_t max_name_bytes = 253;
inline constexpr std::size_t max_namespace_bytes = 63;

// ok, or errc::invalid_object saying what is missing or wrong: no metadata.name or one over
// max_name_bytes, no metadata.resourceVersion, a namespace where the kind has none or none
// where it needs one, another kind or apiVersion than the one watched.
status_result check_object(const object& obj, const object_expectations& expected);

} // namespace kinformer
