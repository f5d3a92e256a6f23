#pragma once
// How an API server describes one resource it serves: what discovery, OpenAPI, Status wording,
// field-selector checks and the item/collection routes all need to know of it.

#include "protocol/gvk.hpp"

#include <string>
#include <vector>

namespace kinformer::apiserver {

// How the server refuses a field label the kind does not support (field_labels.hpp).
enum class field_label_wording {
  metadata_only,   // "\"X\" is not a known field selector: only \"metadata.name\", ..."
  own,             // "field label not supported: X" (kinds with conversions of their own)
  own_naming_kind, // "field label \"X\" not supported for Job"
};

struct resource_info {
  group_version_resource gvr;
  std::string kind;     // "Pod"
  std::string singular; // "pod"
  resource_scope scope = resource_scope::namespaced;
  std::vector<std::string> short_names; // "po"
  std::vector<std::string> verbs;       // "get", "list", "watch", "create", ...
  // Field selector paths the server accepts besides metadata.name and metadata.namespace
  // (pods: spec.nodeName, status.phase, ...); anything else is a 400 worded as field_wording says.
  std::vector<std::string> selectable_fields;
  // Has a status subresource: writes to the object keep its .status, writes to /status change
  // only .status (pods, deployments, services, nodes, namespaces).
  bool status_subresource = false;
  field_label_wording field_wording = field_label_wording::metadata_only;

  std::string list_kind() const { return kind + "List"; }
};

} // namespace kinformer::apiserver
