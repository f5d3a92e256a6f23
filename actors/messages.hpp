#pragma once
// The plain data the actors exchange. No CAF here: these types are usable (and testable) without
// an actor system; actors/type_ids.hpp registers them with CAF.

#include "actors/delta.hpp"
#include "actors/histogram.hpp"
#include "actors/indexer.hpp"
#include "actors/store.hpp"
#include "protocol/backoff.hpp"
#include "protocol/decode.hpp"
#include "protocol/gvk.hpp"
#include "protocol/object.hpp"
#include "protocol/object_packer.hpp"
#include "protocol/selector.hpp"
#include "protocol/watcher.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kinformer {

using object_list = std::vector<object_ptr>;
using delta_batch = std::vector<delta>;
using subscription_id = std::uint64_t;

// One watch event as the reflector forwards it to its informer.
struct informer_event {
  event_type type = event_type::added;
  object_ptr object;
};

// Which states before a change (a delta's old_object) the deltas waiting for one handler keep.
// A kept state stays in memory until its delta is sent, so a slow handler that keeps every one
// holds, after a relist that changed every object, a second copy of the store.
struct old_object_policy {
  enum class keep : std::uint8_t {
    all,      // the handler reads the state before (OnUpdate(old, new))
    none,     // it never does: a replaced version is freed as soon as the store drops it
    selected, // only a state matching both selectors
  };
  keep which = keep::all;
  // keep::selected: a read-API watch with a selection reads the state before only to tell an
  // object that stopped matching it, and to send that object's last matching state.
  label_selector labels;
  field_selector fields;

  bool keeps(const object& old) const;
};

// What a handler asks of its subscription.
struct subscription_options {
  std::string name;                 // for logs and metrics
  std::size_t queue_bound = 10'000; // past this, deltas of the same key coalesce
  std::size_t window = 512;         // deltas in flight to the handler before it acks
  std::size_t max_batch = 256;      // deltas per delivery message
  // Synthetic `sync` deltas of every stored object this often; zero: never (client-go's
  // resyncPeriod).
  std::chrono::milliseconds resync_period{0};
  // A resourceVersion N whose state the handler already holds (a watch resumed from a list or
  // an event at N): instead of every stored object, the initial deltas are every change after N
  // that the informer's change window holds, in resourceVersion order, each with its type and
  // the state before it (change_window.hpp). The subscribe fails when the window does not reach
  // back to N (the handler must relist: the API server's 410 Expired). Informer subscriptions
  // only: the cache refuses it (its subscriptions outlive informers, whose windows start afresh).
  std::optional<std::string> resume_from;
  // No initial deltas at all: only what changes after the subscribe is delivered (a watch that
  // starts now, as sendInitialEvents=false asks). Informer subscriptions only, as resume_from.
  bool from_now = false;
  old_object_policy old_objects;
};

// A list and the resourceVersion of the one store snapshot it was read from, so that a watch
// from that version misses nothing and repeats nothing the list had. From several informers (a
// cache over explicit namespaces): the oldest of their snapshots' versions.
struct versioned_list {
  object_list items;
  std::string resource_version;
};

// Bucket bounds in seconds: list durations, and delivery lags.
std::vector<double> list_duration_bounds();
std::vector<double> delivery_lag_bounds();

// A read of the store.
struct list_options {
  std::string namespace_; // "" = all namespaces
  label_selector labels;
  field_selector fields;
  std::size_t limit = 0; // 0 = no limit
};

struct informer_config;
struct reflector_report;

// Hooks for logs and metrics. Called on the informer's thread, by every informer the hooks are
// given to: keep them quick and thread-safe.
struct informer_observer {
  // Every list/watch life event (list started and completed, watch started and ended, retry).
  std::function<void(const informer_config&, const reflector_report&)> on_report;
  // A subscription's queue reached its bound (deltas start to coalesce); called again only
  // after the queue has drained.
  std::function<void(const informer_config&, const std::string& subscription)> on_overflow;
};

// What an informer is: the resource, the scope and how to watch it.
struct informer_config {
  group_version_resource resource;
  std::string kind;
  resource_scope scope = resource_scope::namespaced;
  std::string namespace_; // "" = all namespaces (or a cluster-scoped resource)
  label_selector labels;  // server-side selectors, sent with every list and watch
  field_selector fields;
  bool metadata_only = false; // PartialObjectMetadata through the Accept header
  // Applied to every object before it is stored (e.g. drop managedFields). Shared so that the
  // I/O thread, which applies it, never outlives it.
  std::shared_ptr<const object_transform> transform;
  // Objects keep their text compressed, with a dictionary trained on the first objects the
  // informer receives (protocol/object_packer.hpp): less memory, and a copy for every reader of
  // the text (meta() reads none). Unset: compressed for metadata-only informers, whose reason to
  // be is a small store (a third of the memory, for about 60% more CPU to sync), kept as
  // received otherwise. keeps_objects_compressed() says which.
  std::optional<bool> compress_objects;
  packer_options packing; // how many objects the dictionary is trained from
  watcher_config watch;
  backoff_config retry; // delays between failed lists and watches
  store_options store;
  // Events the reflector may have in flight to the informer before the informer acknowledges
  // them; at zero the HTTP client stops reading the socket.
  std::size_t event_window = 4096;
  // Recent changes kept for subscriptions that resume from a resourceVersion
  // (subscription_options::resume_from; see change_window.hpp). Each holds its object and the
  // state before it alive, so it is off unless a reader needs it (kinformerd's read API turns it
  // on); with 0, such subscriptions are refused as expired.
  std::size_t change_window = 0;
  std::shared_ptr<const informer_observer> observer; // null: none

  // The collection's URL path: /api/v1/namespaces/ns/pods, /apis/apps/v1/deployments.
  std::string collection_path() const;
  // A name for logs and metrics: "pods" , "deployments.apps", "pods@ns" (namespaced scope).
  std::string display_name() const;
};

// Whether an informer so configured keeps its objects' text compressed.
inline bool keeps_objects_compressed(const informer_config& config) {
  return config.compress_objects.value_or(config.metadata_only);
}

// One subscription's delivery queue, as the informer sees it.
struct subscription_stats {
  subscription_id id = 0;
  std::string name;
  std::size_t depth = 0;        // deltas waiting
  std::size_t high_water = 0;   // the largest depth seen
  std::uint64_t delivered = 0;  // deltas sent to the handler
  std::uint64_t coalesced = 0;  // deltas folded into another one of the same object
  std::uint64_t over_bound = 0; // deltas queued past the bound because they could not fold
  bool synced = false;
  // From sending a batch to the handler to its acknowledgement, per batch: how far behind a
  // handler runs (its mailbox wait plus its processing).
  histogram delivery_lag{delivery_lag_bounds()};
};

// Counters an informer keeps for metrics and health.
struct informer_stats {
  bool synced = false;
  std::size_t objects = 0;
  std::string resource_version;
  std::uint64_t events_added = 0;
  std::uint64_t events_modified = 0;
  std::uint64_t events_deleted = 0;
  std::uint64_t bookmarks = 0;
  std::uint64_t lists = 0;   // completed replaces
  std::uint64_t relists = 0; // replaces after the first
  // Listed items handed on as the objects already stored, not made again (a relist's unchanged
  // ones; protocol/held_objects.hpp).
  std::uint64_t list_items_reused = 0;
  std::uint64_t watch_restarts = 0;
  std::uint64_t retries = 0; // backoffs after a failed list or watch
  // By restart_reason (to_string): why each relist and each new watch started.
  std::map<std::string, std::uint64_t> relists_by_reason;
  std::map<std::string, std::uint64_t> watch_starts_by_reason;
  histogram list_seconds{list_duration_bounds()}; // whole (paged) lists, first and re-lists
  std::size_t subscriptions = 0;
  std::vector<subscription_stats> queues; // one per subscription
  // The last event or bookmark: how fresh the resourceVersion is.
  std::chrono::steady_clock::time_point last_event{};
};

// What the reflector reports to its informer besides data: list/watch life events.
struct reflector_report {
  enum class what { list_started, list_completed, watch_started, watch_ended, retry_scheduled };
  what kind = what::list_started;
  restart_reason reason = restart_reason::initial;
  std::chrono::milliseconds duration{0}; // list_completed: how long the whole list took
  std::string detail;
};

} // namespace kinformer
