#pragma once
// The field labels the real API server accepts in a field selector, kind by kind, and how it
// refuses any other (read off kube-apiserver v1.37: each kind with field label conversions of its
// own names the field; the others list the two metadata fields every kind supports).

#include "app/apiserver/api_status.hpp"
#include "app/apiserver/resource_info.hpp"
#include "protocol/selector.hpp"

#include <optional>

namespace kinformer::apiserver {

// Fills in info.selectable_fields and info.field_wording for the built-in kinds the table knows
// (by group and resource, any version); leaves every other kind (custom resources) as it is.
void add_builtin_field_labels(resource_info& info);

// The 400 for a field selector naming a field the kind does not support, as the server words it.
std::optional<status> check_field_labels(const resource_info& info, const field_selector& fields);

} // namespace kinformer::apiserver
