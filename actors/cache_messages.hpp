#pragma once
// The plain data of the cache (controller-runtime's cache, issue 5): what a caller asks for and
// how the cache is configured. No CAF here; actors/type_ids.hpp registers these with CAF.
//
// Objects are immutable and shared, so no read ever deep-copies: there is no equivalent of
// controller-runtime's UnsafeDisableDeepCopy because there is nothing to disable.

#include "actors/messages.hpp"
#include "actors/restart_backoff.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kinformer {

// Which informer a request means: a kind, or a kubectl-style resource name, and whether the full
// objects or their metadata-only projection (separate informers that may coexist).
struct kind_request {
  group_version_kind kind; // an empty version means the group's preferred version
  std::string resource;    // used when kind.kind is empty: "pods", "deployments.apps", ...
  bool metadata_only = false;

  // "apps/v1, Kind=Deployment" or the resource name, with " (metadata)" when metadata_only.
  std::string describe() const;
};

// One object by namespace and name ("" namespace for a cluster-scoped kind).
struct cache_get_request {
  kind_request kind;
  std::string namespace_;
  std::string name;
};

// Objects of one kind: list_options.namespace_ "" means every namespace the cache covers.
struct cache_list_request {
  kind_request kind;
  list_options options;
};

// controller-runtime's ByObject: settings for one kind. Unset fields fall back to the defaults.
struct by_object_options {
  kind_request kind;
  // Namespaces for this kind; an entry "" means all namespaces. Absent: default_namespaces.
  std::optional<std::vector<std::string>> namespaces;
  std::optional<label_selector> labels;
  std::optional<field_selector> fields;
  std::shared_ptr<const object_transform> transform; // null: default_transform
  std::optional<std::chrono::milliseconds> sync_period;
  std::optional<bool> compress_objects; // absent: cache_options::compress_objects
};

struct cache_options {
  // One informer per listed namespace for namespaced kinds; an entry "" is the all-namespaces
  // entry (controller-runtime's NamespaceAll), which then excludes the listed namespaces with
  // metadata.namespace!= field selectors. Empty: all namespaces.
  std::vector<std::string> default_namespaces;
  label_selector default_label_selector;
  field_selector default_field_selector;
  std::shared_ptr<const object_transform> default_transform;
  // Informers keep their objects' text compressed (informer_config::compress_objects). Unset:
  // metadata-only informers do, the others keep it as received.
  std::optional<bool> compress_objects;
  packer_options packing;
  // The default resync period of subscriptions made through the cache; zero: none.
  std::chrono::milliseconds sync_period{0};
  std::vector<by_object_options> by_object;
  // Reads of a kind that has no informer fail instead of starting one.
  bool reader_fail_on_missing_informer = false;
  // Tuning passed to every informer the cache starts.
  watcher_config watch;
  backoff_config retry;
  store_options store;
  // Recent changes each informer keeps for subscriptions resuming from a resourceVersion
  // (informer_config::change_window); 0: none.
  std::size_t change_window = 0;
  // How long the cache waits before restarting a failed informer (actors/restart_backoff.hpp).
  // An initial delay of zero restarts at once.
  restart_backoff_config restart;
  // Logs and metrics hooks given to every informer (see informer_observer).
  std::shared_ptr<const informer_observer> observer;
};

// What the cache reports for metrics and health.
struct cache_informer_stats {
  std::string kind;       // kind_request::describe()
  std::string namespace_; // "" = all or cluster-scoped
  std::uint64_t restarts = 0;
  // The wait before the latest (or the pending) restart; zero before any failure.
  std::chrono::milliseconds restart_delay{0};
  // The informer failed and its replacement waits for restart_delay: `stats` is empty.
  bool restart_pending = false;
  informer_stats stats;
};
struct cache_stats {
  std::vector<cache_informer_stats> informers;
  std::uint64_t restarts = 0; // informers restarted after a failure, all kinds
};

} // namespace kinformer
