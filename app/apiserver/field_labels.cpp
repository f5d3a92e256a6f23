#include "app/apiserver/field_labels.hpp"

#include <algorithm>
#include <string_view>

namespace kinformer::apiserver {

namespace {

struct kind_labels {
  std::string_view group, resource;
  field_label_wording wording;
  std::vector<std::string> fields; // besides metadata.name and metadata.namespace
};

using enum field_label_wording;

const std::vector<kind_labels>& builtin_table() {
  static const std::vector<kind_labels> table{
      {"",
       "pods",
       own,
       {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
        "status.nominatedNodeName"}},
      {"", "nodes", own, {"spec.unschedulable"}},
      {"", "namespaces", own, {"status.phase"}},
      {"", "secrets", own, {"type"}},
      {"", "services", own, {"spec.clusterIP", "spec.type"}},
      {"", "replicationcontrollers", own, {"status.replicas"}},
      {"",
       "events",
       own,
       {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}},
      {"events.k8s.io",
       "events",
       own,
       {"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
        "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath", "reason",
        "reportingController", "type"}},
      {"certificates.k8s.io", "certificatesigningrequests", own, {"spec.signerName"}},
      {"batch", "jobs", own_naming_kind, {"status.successful"}},
  };
  return table;
}

bool is_metadata_field(std::string_view field) {
  return field == "metadata.name" || field == "metadata.namespace";
}

status refusal(const resource_info& info, const std::string& field) {
  switch (info.field_wording) {
  case own:
    return bad_request("field label not supported: " + field);
  case own_naming_kind:
    return bad_request("field label \"" + field + "\" not supported for " + info.kind);
  case metadata_only:
    break;
  }
  return bad_request("\"" + field +
                     "\" is not a known field selector: only \"metadata.name\", "
                     "\"metadata.namespace\"");
}

} // namespace

void add_builtin_field_labels(resource_info& info) {
  for (const auto& k : builtin_table())
    if (k.group == info.gvr.group && k.resource == info.gvr.resource) {
      info.selectable_fields = k.fields;
      info.field_wording = k.wording;
      return;
    }
}

std::optional<status> check_field_labels(const resource_info& info, const field_selector& fields) {
  for (const auto& requirement : fields.requirements()) {
    const auto& f = requirement.field;
    if (!is_metadata_field(f) &&
        std::find(info.selectable_fields.begin(), info.selectable_fields.end(), f) ==
            info.selectable_fields.end())
      return refusal(info, f);
  }
  return std::nullopt;
}

} // namespace kinformer::apiserver
