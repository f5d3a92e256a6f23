#pragma once
// Names of Kubernetes types and resources, and object keys.

#include <compare>
#include <string>
#include <string_view>

namespace kinformer {

struct group_version {
  std::string group; // "" for the core group
  std::string version;

  // "v1" for the core group, else "apps/v1".
  std::string api_version() const;
  // Parses an apiVersion string ("v1", "apps/v1").
  static group_version from_api_version(std::string_view api_version);
  auto operator<=>(const group_version&) const = default;
};

struct group_version_kind {
  std::string group;
  std::string version;
  std::string kind;

  group_version gv() const { return {group, version}; }
  std::string api_version() const { return gv().api_version(); }
  // "apps/v1, Kind=Deployment", as client-go prints it.
  std::string to_string() const;
  auto operator<=>(const group_version_kind&) const = default;
};

struct group_version_resource {
  std::string group;
  std::string version;
  std::string resource; // plural, lower case: "pods", "deployments"

  group_version gv() const { return {group, version}; }
  // "deployments.v1.apps"; core: "pods.v1."
  std::string to_string() const;
  // The URL prefix without namespace: "/api/v1" or "/apis/apps/v1".
  std::string api_prefix() const;
  auto operator<=>(const group_version_resource&) const = default;
};

enum class resource_scope { namespaced, cluster };

// The store key: "namespace/name", or "name" for cluster-scoped objects (client-go's
// MetaNamespaceKeyFunc).
std::string make_object_key(std::string_view ns, std::string_view name);

struct split_key {
  std::string_view ns; // empty for cluster-scoped keys
  std::string_view name;
};
split_key split_object_key(std::string_view key);

} // namespace kinformer
