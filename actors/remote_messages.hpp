#pragma once
// What crosses the wire between kinformerd and a subscriber in another process (caf::io). Local
// deltas hold shared pointers to parsed objects, which never leave the process: remotely, a
// delta travels as its object's JSON text and is parsed again on the subscriber's side.
// Both nodes register these types (actors/remote_setup.hpp), or CAF refuses them at run time.

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kinformer {

struct wire_delta {
  std::string type;            // "added", "updated", "deleted", "sync" (to_string(delta_type))
  std::string object_json;     // the object, as JSON text
  std::string old_object_json; // updated and sync, when the subscription asked for it
  bool initial_list = false;
  bool final_state_unknown = false;
};
using wire_batch = std::vector<wire_delta>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wire_delta& x) {
  return f(caf::meta::type_name("kinformer.wire_delta"), x.type, x.object_json, x.old_object_json,
           x.initial_list, x.final_state_unknown);
}

// A remote subscriber's request: one kind, optionally one namespace, a label selector and a field
// selector (all applied by the gateway), and its delivery settings (as subscription_options).
struct remote_subscription_request {
  std::string secret;     // must equal the gateway's shared secret when it has one
  std::string resource;   // kubectl-style: "pods", "deployments.apps", "widgets.example.com"
  std::string namespace_; // "" = every namespace the cache covers
  std::string label_selector;
  std::string field_selector; // "metadata.name=x,status.phase!=Running"
  bool metadata_only = false;
  bool include_old_objects = false; // send old_object_json with updates (doubles their size)
  std::string name;                 // for logs and metrics
  std::uint64_t queue_bound = 10'000;
  std::uint64_t window = 512;
  std::uint64_t max_batch = 256;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, remote_subscription_request& x) {
  return f(caf::meta::type_name("kinformer.remote_subscription_request"), x.secret, x.resource,
           x.namespace_, x.label_selector, x.field_selector, x.metadata_only, x.include_old_objects,
           x.name, x.queue_bound, x.window, x.max_batch);
}

} // namespace kinformer
