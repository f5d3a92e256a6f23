#pragma once
// How deltas become reconcile requests: controller-runtime's handler.EnqueueRequestForObject
// (the object itself) and handler.EnqueueRequestForOwner (the owner named by its
// ownerReferences), plus any mapping function of the user's (handler.EnqueueRequestsFromMapFunc).
// Plain functions of a delta, testable without actors.

#include "actors/delta.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

// What a reconciler is asked to bring in line: one object by namespace and name (controller-
// runtime's reconcile.Request). The namespace is empty for a cluster-scoped object.
struct reconcile_request {
  std::string namespace_;
  std::string name;

  // "namespace/name", or "name" when cluster-scoped: the store's key, and the work queue's.
  std::string key() const;
  static reconcile_request from_key(std::string_view key);

  friend bool operator==(const reconcile_request&, const reconcile_request&) = default;
};

using request_mapper = std::function<std::vector<reconcile_request>(const delta&)>;

// The object the delta is about.
request_mapper enqueue_for_object();

// The owner of the object the delta is about, found among its ownerReferences by the owner's
// API group ("" for the core group; the version is ignored, as controller-runtime does) and
// kind; with `only_controller`, only the reference marked controller: true. An update maps the
// owners of the old and the new object both, so a changed owner reconciles both owners. A
// cluster-scoped owner (`owner_namespaced` false) is requested without a namespace.
request_mapper enqueue_for_owner(std::string owner_group, std::string owner_kind,
                                 bool only_controller = true, bool owner_namespaced = true);

// "apps" for "apps/v1", "" for "v1".
std::string_view api_group_of(std::string_view api_version);

} // namespace kinformer
