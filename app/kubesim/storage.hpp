#pragma once
// The simulator's data side: an in-memory, thread-safe stand-in for etcd plus the API server's
// watch cache. No networking here; the FRONT (simulator.cpp) turns these calls into HTTP.
//
// One global resourceVersion counts every write (as etcd's revision). Each write serialises its
// object once and appends an `event` (with its complete watch line, also built once) to a bounded
// history window, which serves watch resumption, continue tokens and exact-RV lists.
//
// Errors come back as a `kinformer::status` worded as the real API server words them.

#include "app/apiserver/list_query.hpp"
#include "app/apiserver/resource_info.hpp"
#include "protocol/decode.hpp"
#include "protocol/gvk.hpp"
#include "protocol/object.hpp"
#include "protocol/selector.hpp"

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kinformer::sim {

// A value, or the Status the API server would answer instead.
template <class T>
class [[nodiscard]] api_result {
public:
  api_result(T value) : state_(std::move(value)) {}
  api_result(status failure) : state_(std::move(failure)) {}

  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const status& failure() const& { return std::get<1>(state_); }

private:
  std::variant<T, status> state_;
};

// The simulator serves resources as the API layer describes them.
using apiserver::resource_info;

// An object as written, with its JSON text serialised once at write time.
struct stored_object {
  object_ptr object;
  std::shared_ptr<const std::string> json;
};

// One write, as recorded in the history window. Shared (immutable) by every watcher.
struct event {
  std::uint64_t resource_version = 0;
  event_type type = event_type::added; // added, modified or deleted
  group_version_resource gvr;
  stored_object object;   // the object after the write (for DELETED: the last state, at this RV)
  stored_object previous; // the object before the write; empty for ADDED
  // The complete watch line {"type":"...","object":{...}}\n, built once and shared by every
  // watcher. Left empty when nobody watched the resource at write time, so an unwatched history
  // window holds no second copy of each object (a replay builds the line when it needs it).
  std::shared_ptr<const std::string> line;
};
using event_ptr = std::shared_ptr<const event>;

// What one watcher receives. `type` may differ from the stored event's type: with selectors, an
// object that starts matching arrives as ADDED and one that stops matching as DELETED.
struct watch_message {
  event_type type = event_type::added; // added, modified, deleted or bookmark
  std::uint64_t resource_version = 0;
  object_ptr object;                       // the object delivered (for bookmarks: empty)
  std::shared_ptr<const std::string> line; // the complete JSON line to write, ending in '\n'
  bool initial_events_end = false;         // the BOOKMARK that ends a streaming list's events
};

// Called synchronously from the writing thread while the storage lock is held, one call at a
// time per watcher and in resourceVersion order. It must be cheap (queue the line and return)
// and must never call back into the storage (nor destroy its own watch_handle).
using watch_sink = std::function<void(const watch_message&)>;

using apiserver::resource_version_match;

struct list_request {
  group_version_resource gvr;
  std::string namespace_; // "" = all namespaces
  label_selector labels;
  field_selector fields;
  std::int64_t limit = 0;       // 0 = no limit
  std::string continue_token;   // from a previous page's list_result
  std::string resource_version; // "" = most recent (consistent), "0" = any, else a number
  resource_version_match match = resource_version_match::unset;
  bool metadata_only = false; // items as PartialObjectMetadata (as=PartialObjectMetadataList)
};

struct list_result {
  std::vector<stored_object> items; // sorted by key
  std::uint64_t resource_version = 0;
  std::string continue_token; // empty on the last page
  std::optional<std::int64_t> remaining_item_count;
};

struct watch_request {
  group_version_resource gvr;
  std::string namespace_;
  label_selector labels;
  field_selector fields;
  // "" or "0": start now, with synthetic ADDED events for every current object (unless
  // send_initial_events is false). A number: replay every event after it, then go live.
  std::string resource_version;
  resource_version_match match = resource_version_match::unset;
  // KEP-3157 streaming list: true = ADDED for every current object then a BOOKMARK annotated
  // k8s.io/initial-events-end: "true"; false = no synthetic events; unset = legacy behaviour.
  std::optional<bool> send_initial_events;
  bool allow_bookmarks = false; // receives periodic bookmarks from send_bookmarks()
  bool metadata_only = false;   // lines carry PartialObjectMetadata objects
};

class storage;

// What a watch_handle unregisters from (the storage's shared state).
class watch_registry {
public:
  virtual ~watch_registry() = default;
  virtual void unregister_watch(std::uint64_t id) = 0;
};

// Keeps a watch registered; stopping (or destroying) it guarantees the sink is not called again
// once stop() returns. May outlive the storage.
class watch_handle {
public:
  watch_handle() = default;
  watch_handle(watch_handle&& other) noexcept;
  watch_handle& operator=(watch_handle&& other) noexcept;
  watch_handle(const watch_handle&) = delete;
  watch_handle& operator=(const watch_handle&) = delete;
  ~watch_handle();

  void stop();
  bool active() const noexcept { return id_ != 0; }

private:
  friend class storage;
  watch_handle(std::weak_ptr<watch_registry> owner, std::uint64_t id)
      : owner_(std::move(owner)), id_(id) {}
  std::weak_ptr<watch_registry> owner_;
  std::uint64_t id_ = 0;
};

enum class patch_type {
  merge,           // application/merge-patch+json (RFC 7386)
  strategic_merge, // application/strategic-merge-patch+json: applied as a merge patch (lists
                   // are replaced, $patch directives are not understood)
  json_patch,      // application/json-patch+json (RFC 6902)
  apply,           // application/apply-patch+yaml (server-side apply; JSON bodies only):
                   // creates the object if absent; needs write_options::field_manager
};

struct storage_options {
  // Events kept for watch resumption, continue tokens and exact lists.
  std::size_t history_limit = 100000;
  // Create "default", "kube-system", "kube-public" and "kube-node-lease" at construction.
  bool create_default_namespaces = true;
};

// How a write is carried out.
// Which part of an object an update or patch writes, for a resource with a status subresource.
enum class write_part {
  whole,  // everything (the storage's own callers: tests, churn)
  main,   // the object's URL: .status is kept as stored
  status, // the /status subresource: only .status changes
};

struct write_options {
  // Validate and answer as if written, store nothing (the API server's dryRun=All). A dry-run
  // create answers without a resourceVersion; other writes keep the stored one.
  bool dry_run = false;
  write_part part = write_part::whole;
  // fieldManager: who writes. Apply needs one; any other write with one makes the fields it
  // changed that manager's in metadata.managedFields (field_ownership.hpp). Without one, a write
  // that is no apply leaves managedFields as they were.
  std::string field_manager;
  bool force = false; // apply: take over fields other managers own instead of a conflict
};

// One list or watch the storage answered, as a request observer sees it.
struct request_record {
  enum class verb { list, watch };
  verb kind = verb::list;
  group_version_resource gvr;
  std::string resource_version; // as requested ("" for continue pages)
  bool continued = false;       // a list page requested with a continue token
  std::string continue_token;   // that token
  std::int64_t limit = 0;
  bool send_initial_events = false;               // a watch asking for a streaming list
  int code = 200;                                 // 200, or the failure's HTTP code
  std::chrono::steady_clock::time_point received; // when the storage got the request
};

// Called once per list() and watch(), after the answer is decided and without the storage lock
// held, on the thread serving the request (it may block that request, not others' writes).
using request_observer = std::function<void(const request_record&)>;

// Every object at one instant, shared with the storage that took it (objects are immutable).
class storage_backup {
public:
  // The resourceVersion the backup was taken at.
  std::uint64_t resource_version() const noexcept { return revision_; }
  // Objects in the backup, over every resource.
  std::size_t size() const noexcept;

private:
  friend class storage;
  std::map<group_version_resource, std::map<std::string, stored_object, std::less<>>> objects_;
  std::uint64_t revision_ = 0;
};

// One entry of the truth dump.
struct object_version {
  std::string key; // "namespace/name" or "name"
  std::uint64_t resource_version = 0;
  bool operator==(const object_version&) const = default;
};

class storage {
public:
  explicit storage(storage_options options = {});
  ~storage();
  storage(const storage&) = delete;
  storage& operator=(const storage&) = delete;

  // --- Resources -----------------------------------------------------------------------------
  // Adds (or replaces) a resource, for custom resources. Built-ins are registered at
  // construction: v1 pods, configmaps, secrets, services, namespaces, nodes; apps/v1 deployments.
  void register_resource(resource_info info);
  std::optional<resource_info> find_resource(const group_version_resource& gvr) const;
  // By kind, for clients that know a GVK.
  std::optional<resource_info> find_kind(const group_version_kind& gvk) const;
  std::vector<resource_info> resources() const;

  // --- Reads ---------------------------------------------------------------------------------
  std::uint64_t current_resource_version() const;
  // The oldest resourceVersion a watch may still start from (events after it are all kept).
  std::uint64_t oldest_resource_version() const;
  api_result<stored_object> get(const group_version_resource& gvr, std::string_view ns,
                                std::string_view name) const;
  api_result<list_result> list(const list_request& request);
  // Every object's key and resourceVersion, sorted by key: those `labels` selects. Never
  // observed, never failed by an armed fault.
  std::vector<object_version> truth(const group_version_resource& gvr,
                                    const label_selector& labels = {}) const;

  // --- Writes --------------------------------------------------------------------------------
  // `ns` is the namespace from the URL ("" for cluster-scoped resources, or to take the body's).
  // With options.dry_run every check runs and the answer is what the write would have stored,
  // but nothing is stored, no resourceVersion is used and no event is sent (?dryRun=All).
  api_result<stored_object> create(const group_version_resource& gvr, std::string_view ns,
                                   std::string_view body_json, write_options options = {});
  api_result<stored_object> create_value(const group_version_resource& gvr, std::string_view ns,
                                         const boost::json::value& body,
                                         write_options options = {});
  // The cheapest write: the tree (in any allocator) is edited in place, never copied first.
  api_result<stored_object> create_value(const group_version_resource& gvr, std::string_view ns,
                                         boost::json::value&& body, write_options options = {});
  // Replaces the object. A non-empty metadata.resourceVersion must equal the stored one (409).
  api_result<stored_object> update(const group_version_resource& gvr, std::string_view ns,
                                   std::string_view name, std::string_view body_json,
                                   write_options options = {});
  api_result<stored_object> update_value(const group_version_resource& gvr, std::string_view ns,
                                         std::string_view name, const boost::json::value& body,
                                         write_options options = {});
  api_result<stored_object> update_value(const group_version_resource& gvr, std::string_view ns,
                                         std::string_view name, boost::json::value&& body,
                                         write_options options = {});
  api_result<stored_object> patch(const group_version_resource& gvr, std::string_view ns,
                                  std::string_view name, patch_type type,
                                  std::string_view patch_json, write_options options = {});
  // Server-side apply of `config` (patch_type::apply): creates the object when it is absent.
  api_result<stored_object> apply(const group_version_resource& gvr, std::string_view ns,
                                  std::string_view name, boost::json::value&& config,
                                  write_options options);
  // Deletes and returns the object as deleted (its resourceVersion is the deletion's).
  // `expected_resource_version` (preconditions.resourceVersion) gives 409 when it differs.
  api_result<stored_object> remove(const group_version_resource& gvr, std::string_view ns,
                                   std::string_view name,
                                   std::string_view expected_resource_version = {},
                                   write_options options = {});

  // --- Watch ---------------------------------------------------------------------------------
  // Replays and registers synchronously (the sink sees the replay before watch() returns).
  // Fails with 410 Expired when resource_version is older than the history window (the FRONT
  // sends that as an ERROR event in a 200 response, as the real server does).
  api_result<watch_handle> watch(const watch_request& request, watch_sink sink);
  // Sends a BOOKMARK at the current resourceVersion to every watch with allow_bookmarks, in
  // order with its events.
  void send_bookmarks();
  std::size_t watch_count() const;

  // --- Data faults ---------------------------------------------------------------------------
  // Drops the whole history: every older resourceVersion (watch, continue, exact list) is 410.
  void compact();
  // As after an etcd restore: objects stay, the resourceVersion jumps ahead by `jump`, history
  // is reset, so every resourceVersion a client holds is too old. Every open watch is
  // unregistered at once (it hears nothing of the new history); the HTTP front drops them.
  void restore(std::uint64_t jump = 1000000);
  // A snapshot of every object now, as etcdctl snapshot save takes one.
  storage_backup backup() const;
  // As after an etcd restore from an older snapshot with --bump-revision: every resource's
  // objects become the backup's (objects written since are gone, changed ones revert to their
  // older version and resourceVersion), the current resourceVersion jumps ahead by `jump`, and
  // history is reset. Open watches are unregistered as by restore(jump).
  void restore(const storage_backup& from, std::uint64_t jump = 1000000);
  // How many restores from a backup there have been: a writer that tracks objects by name (the
  // churn) reads them again when this changes, since the restore revived and removed some.
  std::uint64_t backups_restored() const;
  // Advances the resourceVersion by `count` without a write, as writes to keys no watch sees
  // do in etcd: the next event's resourceVersion is `count` past the last, and history stays.
  void skip_revisions(std::uint64_t count);
  // The next `count` watch() calls fail with 410 Expired.
  void fail_next_watches(std::size_t count);
  // The next `count` watch() calls fail with `code` (429 TooManyRequests, 503, ...) and
  // retry_after_seconds, which the HTTP front sends as a plain error response.
  void fail_next_watches(std::size_t count, int code, std::optional<int> retry_after_seconds);
  // The next `count` list() calls fail with `code` (500 InternalError, 429 TooManyRequests with
  // retry_after_seconds, 504 Timeout, ...).
  void fail_next_lists(std::size_t count, int code, std::optional<int> retry_after_seconds = {});
  // The next `count` writes through the HTTP front (POST, PUT, PATCH, DELETE) fail with `code`
  // and are not applied; writes made on the storage directly are not affected.
  void fail_next_writes(std::size_t count, int code, std::optional<int> retry_after_seconds = {});
  // Consumes one armed write failure (the HTTP front asks before each write).
  std::optional<status> take_write_failure();
  // The next `count` list() calls with a continue token fail with 410 Expired, as if the token's
  // snapshot was compacted between two pages.
  void expire_next_continues(std::size_t count);
  // While on, watch() with send_initial_events fails with 422 Invalid, as an API server without
  // the WatchList feature gate answers a streaming list.
  void refuse_streaming_lists(bool refuse);
  // Disarms every armed failure and accepts streaming lists again.
  void clear_faults();

  // --- Test tooling --------------------------------------------------------------------------
  // Reports every list and watch from now on; an empty observer stops reporting. On return the
  // previous observer is neither running nor called again, so what it writes to may go. It must
  // not call observe_requests() itself.
  void observe_requests(request_observer observer);

private:
  api_result<list_result> list_unobserved(const list_request& request);
  api_result<watch_handle> watch_unobserved(const watch_request& request, watch_sink sink);

  struct impl;
  std::shared_ptr<impl> impl_;
};

} // namespace kinformer::sim
