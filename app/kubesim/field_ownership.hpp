#pragma once
// Server-side apply's field ownership (structured-merge-diff) for the simulator, with one
// simplification: lists are atomic (a list is one field, owned and replaced whole, as
// `x-kubernetes-list-type: atomic` lists are); maps merge field by field.
//
// Each object carries metadata.managedFields: per manager and operation (Apply or Update), the
// fields it owns as FieldsV1 ({"f:spec":{"f:replicas":{}}}). An apply by manager M:
// - conflicts where another manager owns a field M sets to a different value (409, unless
//   forced: then M takes the field over);
// - removes the fields M applied before and no longer applies, unless another manager owns them;
// - merges its configuration into the object and records what it applied as M's Apply entry.
// A write that is no apply (create, update, patch) with a fieldManager makes the fields it
// changed that manager's (operation Update), taking them from whoever owned them.

#include <boost/json/object.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kinformer::sim {

using field_path = std::vector<std::string>; // {"spec", "replicas"}
using field_set = std::set<field_path>;

// ".spec.replicas", as conflict messages name fields.
std::string dotted(const field_path& path);

// Every leaf of an object (scalar, list, empty map), without the fields the server owns
// (apiVersion, kind, metadata's name, namespace, uid, resourceVersion, generation,
// creationTimestamp, deletionTimestamp, managedFields) and .status.
field_set leaf_fields(const boost::json::object& o);

boost::json::object to_fields_v1(const field_set& fields);
field_set from_fields_v1(const boost::json::object& fields_v1);

struct managed_entry {
  std::string manager;
  std::string operation; // "Apply" or "Update"
  std::string api_version;
  std::string time;
  field_set fields;
};

std::vector<managed_entry> read_managed_fields(const boost::json::object& object);
void write_managed_fields(boost::json::object& object, const std::vector<managed_entry>& entries);

// Another manager's field that an apply would change.
struct field_conflict {
  std::string manager;
  field_path field;
};

struct apply_result {
  boost::json::object object; // valid when `conflicts` is empty
  std::vector<field_conflict> conflicts;
};

// Applies `config` as `manager` to `live` (nullptr: the object does not exist yet).
apply_result server_side_apply(const boost::json::object* live, const boost::json::object& config,
                               const std::string& manager, bool force,
                               const std::string& api_version, const std::string& now);

// After a write that is no apply: what `manager` changed from `before` (nullptr: a create) to
// `after` becomes its own, under operation Update, in after's managedFields.
void record_update(const boost::json::object* before, boost::json::object& after,
                   const std::string& manager, const std::string& api_version,
                   const std::string& now);

} // namespace kinformer::sim
