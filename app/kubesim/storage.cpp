#include "app/kubesim/storage.hpp"

#include "app/apiserver/api_status.hpp"
#include "app/apiserver/continue_token.hpp"
#include "app/apiserver/field_labels.hpp"
#include "app/apiserver/watch_event.hpp"
#include "app/apiserver/watch_projection.hpp"
#include "app/kubesim/fault_plan.hpp"
#include "app/kubesim/field_ownership.hpp"
#include "app/kubesim/merge_patch.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <shared_mutex>

namespace json = boost::json;

namespace kinformer::sim {

// ---------------------------------------------------------------------------------------------
// watch_handle

watch_handle::watch_handle(watch_handle&& other) noexcept
    : owner_(std::move(other.owner_)), id_(std::exchange(other.id_, 0)) {}

watch_handle& watch_handle::operator=(watch_handle&& other) noexcept {
  if (this != &other) {
    stop();
    owner_ = std::move(other.owner_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

watch_handle::~watch_handle() {
  stop();
}

void watch_handle::stop() {
  if (id_ == 0)
    return;
  if (auto owner = owner_.lock())
    owner->unregister_watch(id_);
  id_ = 0;
  owner_.reset();
}

namespace {

// ---------------------------------------------------------------------------------------------
// Built-in resources

const std::vector<std::string> all_verbs{"create", "delete", "deletecollection", "get",
                                         "list",   "patch",  "update",           "watch"};

std::vector<resource_info> builtin_resources() {
  auto core = [](std::string resource, std::string kind, std::string singular, resource_scope scope,
                 std::vector<std::string> short_names) {
    return resource_info{{"", "v1", std::move(resource)},
                         std::move(kind),
                         std::move(singular),
                         scope,
                         std::move(short_names),
                         all_verbs,
                         {}};
  };
  using enum resource_scope;
  std::vector<resource_info> out{
      core("pods", "Pod", "pod", namespaced, {"po"}),
      core("configmaps", "ConfigMap", "configmap", namespaced, {"cm"}),
      core("secrets", "Secret", "secret", namespaced, {}),
      core("services", "Service", "service", namespaced, {"svc"}),
      core("namespaces", "Namespace", "namespace", cluster, {"ns"}),
      core("nodes", "Node", "node", cluster, {"no"}),
      resource_info{{"apps", "v1", "deployments"},
                    "Deployment",
                    "deployment",
                    namespaced,
                    {"deploy"},
                    all_verbs,
                    {}},
      // What controllers write: Events (the event recorder) and Leases (leader election).
      resource_info{
          {"events.k8s.io", "v1", "events"}, "Event", "event", namespaced, {"ev"}, all_verbs, {}},
      resource_info{
          {"coordination.k8s.io", "v1", "leases"}, "Lease", "lease", namespaced, {}, all_verbs, {}},
  };
  for (auto& info : out) {
    apiserver::add_builtin_field_labels(info);
    info.status_subresource = info.gvr.resource == "pods" || info.gvr.resource == "services" ||
                              info.gvr.resource == "namespaces" || info.gvr.resource == "nodes" ||
                              info.gvr.resource == "deployments";
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

// A watch line (app/apiserver/watch_event.hpp), shared by every watcher that writes it.
std::shared_ptr<const std::string> make_line(event_type type, std::string_view object_json) {
  return std::make_shared<const std::string>(apiserver::watch_event_line(type, object_json));
}

// A mutable working copy for one write. Its nodes come from a scratch arena that goes away with
// it: building one is a few large allocations instead of hundreds of small ones.
json::value scratch_copy(const json::value& v) {
  return json::value(v, json::make_shared_resource<json::monotonic_resource>());
}

// A stored object's tree to read or to change for one write, in a scratch arena of its own: on
// the default heap, the hundreds of small allocations of each tree cost more than the write
// (churn's updates spent half their time in malloc).
json::value scratch_tree(const object& obj) {
  return obj.tree(json::make_shared_resource<json::monotonic_resource>());
}

// The JSON text of `v`, in a per-thread buffer valid until the next call.
std::string_view serialize_to_buffer(const json::value& v) {
  thread_local std::string buffer;
  if (buffer.size() < 16384)
    buffer.resize(16384);
  json::serializer serializer;
  serializer.reset(&v);
  std::size_t used = 0;
  while (!serializer.done()) {
    if (used == buffer.size())
      buffer.resize(buffer.size() * 2);
    used += serializer.read(buffer.data() + used, buffer.size() - used).size();
  }
  return std::string_view(buffer.data(), used);
}

// True when both texts hold the same bytes, counted, in any order.
bool same_byte_counts(std::string_view a, std::string_view b) {
  std::array<std::uint32_t, 256> counts{};
  for (unsigned char c : a)
    ++counts[c];
  for (unsigned char c : b)
    --counts[c];
  return std::all_of(counts.begin(), counts.end(), [](std::uint32_t n) { return n == 0; });
}

// True when `body` holds what `existing` holds. Comparing texts is much cheaper than comparing
// trees (json::value's == looks every key up). Texts that differ can still be the same object
// with its keys in another order, but then they are a permutation of each other's bytes: only
// then are the trees compared.
bool same_content(const json::value& body, const stored_object& existing) {
  std::string_view text = serialize_to_buffer(body);
  if (text == *existing.json)
    return true;
  if (text.size() != existing.json->size() || !same_byte_counts(text, *existing.json))
    return false;
  return body == scratch_tree(*existing.object);
}

// The stored form of a validated object, built once: the tree copied into the object's own
// compact arena (adopting a working copy's scattered nodes would cost about twice the memory
// for as long as the object and its history live) and its text serialised once.
api_result<stored_object> freeze(const json::value& body) {
  auto frozen = object::from_json(body);
  if (!frozen)
    return apiserver::bad_request(frozen.err().message);
  auto text = std::make_shared<const std::string>(frozen.value()->json_text());
  return stored_object{std::move(frozen.value()), std::move(text)};
}

stored_object metadata_projection(const stored_object& full) {
  object_ptr partial = full.object->to_partial_metadata();
  return {partial, std::make_shared<const std::string>(partial->json_text())};
}

std::optional<std::uint64_t> parse_revision(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

std::string api_version_of(const resource_info& info) {
  return info.gvr.group.empty() ? info.gvr.version : info.gvr.group + "/" + info.gvr.version;
}

// 409 for an apply that would change other managers' fields, worded as the API server words it.
status apply_conflict(const std::vector<field_conflict>& conflicts,
                      const std::string& api_version) {
  std::string message = "Apply failed with " + std::to_string(conflicts.size()) +
                        (conflicts.size() == 1 ? " conflict:" : " conflicts:");
  for (const auto& c : conflicts)
    message +=
        " conflict with \"" + c.manager + "\" using " + api_version + ": " + dotted(c.field) + ";";
  message.pop_back();
  auto s = apiserver::make_failure(409, "Conflict", message);
  s.cause_types.assign(conflicts.size(), "FieldManagerConflict");
  return s;
}

std::string now_rfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string_view string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v && v->is_string())
    return v->get_string();
  return {};
}

// True when everything but metadata and status is equal: a spec change bumps generation.
// A write to one part of an object with a status subresource leaves the other as stored: the
// object's URL keeps .status, /status keeps everything but .status (the metadata's
// resourceVersion stays the request's, for its precondition).
void keep_other_part(json::object& o, const json::object& stored, write_part part) {
  auto put_status = [&o](const json::value* status) {
    if (status)
      o["status"] = *status;
    else
      o.erase("status");
  };
  if (part == write_part::main) {
    put_status(stored.if_contains("status"));
    return;
  }
  std::optional<json::value> status, resource_version;
  if (const auto* s = o.if_contains("status"))
    status = *s;
  if (const auto* m = o.if_contains("metadata"); m && m->is_object())
    if (const auto* rv = m->get_object().if_contains("resourceVersion"))
      resource_version = *rv;
  o = stored;
  auto& meta = o["metadata"].get_object();
  if (resource_version)
    meta["resourceVersion"] = *resource_version;
  else
    meta.erase("resourceVersion");
  put_status(status ? &*status : nullptr);
}

bool same_spec(const json::object& a, const json::object& b) {
  auto counted = [](const json::object& o) {
    std::size_t n = o.size();
    n -= o.contains("metadata") ? 1 : 0;
    n -= o.contains("status") ? 1 : 0;
    return n;
  };
  if (counted(a) != counted(b))
    return false;
  for (const auto& kv : a) {
    if (kv.key() == "metadata" || kv.key() == "status")
      continue;
    const auto* other = b.if_contains(kv.key());
    if (!other || *other != kv.value())
      return false;
  }
  return true;
}

bool matches(const label_selector& labels, const field_selector& fields, std::string_view ns,
             const object& obj) {
  if (!ns.empty() && obj.meta().namespace_ != ns)
    return false;
  return labels.matches(obj) && fields.matches(obj);
}

status list_options_invalid(std::string_view detail) {
  return apiserver::invalid("ListOptions.meta.k8s.io", "", detail);
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The shared state

namespace {

struct watcher {
  watch_request request;
  watch_sink sink;
};

// Where the last full page of a list of every object ended: the number of keys before
// `next_key`, valid while no write happened since (`writes`). Paged lists report
// remainingItemCount; counting it by walking the rest of a big map costs O(n) a page, and a
// client pages in order, so each page starts where the remembered one ended.
struct page_rank_hint {
  std::uint64_t writes = 0;
  std::string next_key;
  std::size_t rank = 0;
};

struct resource_state {
  resource_info info;
  std::map<std::string, stored_object, std::less<>> objects; // by key, sorted
  std::map<std::uint64_t, watcher> watchers;
  std::uint64_t writes = 0; // changes of `objects`
  // Lists run under a shared lock: the hint has its own.
  mutable std::mutex hint_mutex;
  mutable page_rank_hint hint;

  // How many keys sort before `key` (O(1) when it is where the last page ended).
  std::size_t rank_of(std::string_view key) const {
    {
      std::lock_guard guard(hint_mutex);
      if (hint.writes == writes && hint.next_key == key)
        return hint.rank;
    }
    return static_cast<std::size_t>(std::distance(objects.begin(), objects.lower_bound(key)));
  }
  void remember_page_end(std::string next_key, std::size_t rank) const {
    std::lock_guard guard(hint_mutex);
    hint = {writes, std::move(next_key), rank};
  }
};

// The object `name` in namespace `ns` (ignored for cluster-scoped resources), or 404.
api_result<stored_object> find_object(const resource_state& state,
                                      const group_version_resource& gvr, std::string_view ns,
                                      std::string_view name) {
  const bool cluster = state.info.scope == resource_scope::cluster;
  auto it = state.objects.find(make_object_key(cluster ? std::string_view{} : ns, name));
  if (it == state.objects.end())
    return apiserver::not_found(gvr, name);
  return it->second;
}

// The lines one event turns into, built on first need and shared by every watcher of the event:
// each variant is serialised at most once however many watchers receive it.
class event_projection {
public:
  explicit event_projection(const event& ev) : ev_(ev) {}

  std::optional<watch_message> for_watcher(const watch_request& w) {
    const bool now = matches(w.labels, w.fields, w.namespace_, *ev_.object.object);
    const bool before = ev_.type == event_type::modified &&
                        matches(w.labels, w.fields, w.namespace_, *ev_.previous.object);
    const apiserver::watch_projection v = apiserver::project_change(ev_.type, now, before);
    if (v == apiserver::watch_projection::none)
      return std::nullopt;
    return message(v, w.metadata_only);
  }

private:
  watch_message message(apiserver::watch_projection v, bool metadata_only) {
    auto& slot = lines_[static_cast<int>(v) - 1][metadata_only ? 1 : 0];
    const event_type type = apiserver::projected_type(v, ev_.type);
    const stored_object& full =
        v == apiserver::watch_projection::stopped_matching ? previous_at_event() : ev_.object;
    if (!slot.line) {
      if (metadata_only) {
        slot.object = metadata_projection(full);
        slot.line = make_line(type, *slot.object.json);
      } else {
        slot.object = full;
        slot.line = v == apiserver::watch_projection::as_is && ev_.line
                        ? ev_.line
                        : make_line(type, *full.json);
      }
    }
    return {type, ev_.resource_version, slot.object.object, slot.line};
  }

  // An object that stopped matching is sent as DELETED with its previous content at this
  // event's resourceVersion (watch_projection.hpp).
  const stored_object& previous_at_event() {
    if (!previous_at_event_.object) {
      auto text = std::make_shared<const std::string>(apiserver::with_resource_version(
          *ev_.previous.object, std::to_string(ev_.resource_version)));
      // A copy of a valid object with digits for its version: cannot fail.
      previous_at_event_ = stored_object{object::parse(*text).value(), text};
    }
    return previous_at_event_;
  }

  struct built {
    stored_object object;
    std::shared_ptr<const std::string> line;
  };
  const event& ev_;
  stored_object previous_at_event_;
  built lines_[3][2];
};

} // namespace

struct storage::impl final : watch_registry {
  explicit impl(storage_options o) : options(std::move(o)), random(std::random_device{}()) {}

  mutable std::shared_mutex mutex;
  storage_options options;
  std::map<group_version_resource, resource_state> resources;
  std::map<std::uint64_t, group_version_resource> watch_resources; // watch id -> its resource
  std::uint64_t revision = 0;
  // Events with a resourceVersion above `oldest` are all in `history`.
  std::uint64_t oldest = 0;
  std::deque<event_ptr> history;
  std::uint64_t next_watch_id = 1;
  std::uint64_t backups_restored = 0;
  std::mt19937_64 random;
  fault_plan faults;
  // Held shared by every request while it calls the observer, and exclusively to replace it: so
  // observe_requests() waits for the calls in flight (a test may destroy what its observer
  // writes to once that returns).
  std::shared_mutex observer_calls;
  request_observer observer;

  void unregister_watch(std::uint64_t id) override {
    std::unique_lock lock(mutex);
    auto it = watch_resources.find(id);
    if (it == watch_resources.end())
      return;
    if (auto r = resources.find(it->second); r != resources.end())
      r->second.watchers.erase(id);
    watch_resources.erase(it);
  }

  // Unregisters every watch: nothing more reaches its sink. A restore does this under the same
  // lock, so that no open watch hears of the new history (a bookmark at the jumped
  // resourceVersion would let its client resume without relisting); the HTTP front then drops
  // the streams.
  void end_every_watch() {
    for (auto& [gvr, state] : resources)
      state.watchers.clear();
    watch_resources.clear();
  }

  resource_state* find(const group_version_resource& gvr) {
    auto it = resources.find(gvr);
    return it == resources.end() ? nullptr : &it->second;
  }
  const resource_state* find(const group_version_resource& gvr) const {
    auto it = resources.find(gvr);
    return it == resources.end() ? nullptr : &it->second;
  }

  std::string uid() {
    std::uniform_int_distribution<int> hex(0, 15);
    std::string out = "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx";
    for (char& c : out) {
      if (c == 'x' || c == 'y') {
        int n = hex(random);
        if (c == 'y')
          n = 8 | (n & 3);
        c = "0123456789abcdef"[n];
      }
    }
    return out;
  }

  // The suffix the API server appends to generateName: five characters from its alphabet.
  std::string name_suffix() {
    static constexpr std::string_view alphabet = "bcdfghjklmnpqrstvwxz2456789";
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    std::string out;
    for (int i = 0; i < 5; ++i)
      out += alphabet[pick(random)];
    return out;
  }

  // Index of the first history event newer than `rv`.
  std::size_t history_after(std::uint64_t rv) const {
    auto it = std::upper_bound(
        history.begin(), history.end(), rv,
        [](std::uint64_t r, const event_ptr& e) { return r < e->resource_version; });
    return std::size_t(it - history.begin());
  }

  // Freezes `body` at the next resourceVersion, stores it and records the event. The caller has
  // validated everything; only an object the protocol layer rejects can still fail. A dry run
  // freezes the answer and stops there.
  api_result<stored_object> commit(resource_state& state, json::value&& body, event_type type,
                                   const stored_object* previous, bool dry_run) {
    const std::uint64_t rv = revision + 1;
    auto& meta = body.get_object()["metadata"].get_object();
    if (!dry_run)
      meta["resourceVersion"] = std::to_string(rv);
    else if (previous)
      meta["resourceVersion"] = previous->object->meta().resource_version;
    else
      meta.erase("resourceVersion"); // nothing was written, so there is no version yet
    auto frozen = freeze(body);
    if (!frozen || dry_run)
      return frozen;
    stored_object stored = std::move(frozen.value());
    revision = rv;
    const std::string key(stored.object->key());
    if (type == event_type::deleted)
      state.objects.erase(key);
    else
      state.objects.insert_or_assign(key, stored);
    ++state.writes;

    auto ev = std::make_shared<event>();
    ev->resource_version = rv;
    ev->type = type;
    ev->gvr = state.info.gvr;
    ev->object = stored;
    if (previous)
      ev->previous = *previous;
    if (!state.watchers.empty())
      ev->line = make_line(type, *stored.json);
    history.push_back(ev);
    while (history.size() > options.history_limit) {
      oldest = history.front()->resource_version;
      history.pop_front();
    }
    if (!state.watchers.empty()) {
      event_projection projection(*ev);
      for (auto& [id, w] : state.watchers)
        if (auto message = projection.for_watcher(w.request))
          w.sink(*message);
    }
    return stored;
  }

  // Checks apiVersion/kind and fills them in when absent.
  std::optional<status> check_type(const resource_info& info, json::object& body) {
    const std::string api_version = info.gvr.gv().api_version();
    auto av = string_at(body, "apiVersion");
    auto kind = string_at(body, "kind");
    if (!av.empty() && av != api_version)
      return apiserver::bad_request("the API version in the data (" + std::string(av) +
                                    ") does not match the expected API version (" + api_version +
                                    ")");
    if (!kind.empty() && kind != info.kind)
      return apiserver::bad_request("the kind in the data (" + std::string(kind) +
                                    ") does not match the expected kind (" + info.kind + ")");
    if (auto* v = body.if_contains("metadata"); v && !v->is_object() && !v->is_null())
      return apiserver::bad_request("metadata must be an object");
    // kind and apiVersion lead, as in every object the real server writes (Go's TypeMeta).
    json::object typed(body.storage());
    typed.reserve(body.size() + 2);
    typed["kind"] = info.kind;
    typed["apiVersion"] = api_version;
    for (auto& member : body)
      if (member.key() != "kind" && member.key() != "apiVersion")
        typed.emplace(member.key(), std::move(member.value()));
    body = std::move(typed);
    if (!body["metadata"].is_object())
      body["metadata"] = json::object();
    return std::nullopt;
  }

  // Settles metadata.namespace from the URL and the body. Returns the namespace to use.
  api_result<std::string> settle_namespace(const resource_info& info, json::object& meta,
                                           std::string_view path_ns, std::string_view name) {
    if (info.scope == resource_scope::cluster) {
      meta.erase("namespace");
      return std::string();
    }
    auto body_ns = string_at(meta, "namespace");
    if (!path_ns.empty() && !body_ns.empty() && body_ns != path_ns)
      return apiserver::bad_request(
          "the namespace of the provided object does not match the namespace "
          "sent on the request");
    std::string ns(path_ns.empty() ? body_ns : path_ns);
    if (ns.empty())
      return apiserver::invalid(info.kind, name, "metadata.namespace: Required value");
    meta["namespace"] = ns;
    return ns;
  }

  api_result<stored_object> create(const group_version_resource& gvr, std::string_view path_ns,
                                   json::value&& body, const write_options& options,
                                   bool applied = false) {
    const bool dry_run = options.dry_run;
    std::unique_lock lock(mutex);
    resource_state* state = find(gvr);
    if (!state)
      return apiserver::resource_not_found();
    const resource_info& info = state->info;
    if (!body.is_object())
      return apiserver::bad_request("the body of the request must be a JSON object");
    auto& o = body.get_object();
    if (auto failure = check_type(info, o))
      return *failure;
    auto& meta = o["metadata"].get_object();
    std::string name(string_at(meta, "name"));
    if (name.empty()) {
      auto generate = string_at(meta, "generateName");
      if (generate.empty())
        return apiserver::invalid(
            info.kind, "", "metadata.name: Required value: name or generateName is required");
      name = std::string(generate) + name_suffix();
      meta["name"] = name;
    }
    if (name.find('/') != std::string::npos)
      return apiserver::invalid(
          info.kind, name, "metadata.name: Invalid value: \"" + name + "\": may not contain '/'");
    auto ns = settle_namespace(info, meta, path_ns, name);
    if (!ns)
      return ns.failure();
    if (state->objects.count(make_object_key(ns.value(), name)))
      return apiserver::already_exists(gvr, name);
    if (!options.field_manager.empty() && !applied)
      record_update(nullptr, o, options.field_manager, api_version_of(info), now_rfc3339());
    meta["uid"] = uid();
    meta["creationTimestamp"] = now_rfc3339();
    meta["generation"] = 1;
    if (gvr.resource == "namespaces" && gvr.group.empty() && !o.contains("status"))
      o["status"] = json::object{{"phase", "Active"}};
    return commit(*state, std::move(body), event_type::added, nullptr, dry_run);
  }

  // Replaces `existing` with `body` (an update, or a patched copy): keeps the identity fields,
  // bumps generation on spec changes, skips the write when nothing changed (as etcd does).
  api_result<stored_object> replace(resource_state& state, const stored_object& existing,
                                    json::value&& body, std::string_view path_ns,
                                    std::string_view path_name, write_options options,
                                    bool applied = false) {
    const bool dry_run = options.dry_run;
    const resource_info& info = state.info;
    if (!body.is_object())
      return apiserver::bad_request("the body of the request must be a JSON object");
    auto& o = body.get_object();
    if (auto failure = check_type(info, o))
      return *failure;
    const json::value old_tree = scratch_tree(*existing.object);
    const auto& old = old_tree.get_object();
    if (info.status_subresource && options.part != write_part::whole)
      keep_other_part(o, old, options.part);
    if (!options.field_manager.empty() && !applied) {
      // A client that sends no managedFields keeps the stored ones, as the API server does.
      auto& m = o["metadata"];
      if (m.is_object() && !m.get_object().contains("managedFields"))
        if (const auto* kept = old.at("metadata").get_object().if_contains("managedFields"))
          m.get_object()["managedFields"] = *kept;
      record_update(&old, o, options.field_manager, api_version_of(info), now_rfc3339());
    }
    auto& meta = o["metadata"].get_object();
    auto name = string_at(meta, "name");
    if (name.empty())
      meta["name"] = path_name;
    else if (name != path_name)
      return apiserver::bad_request("the name of the object (" + std::string(name) +
                                    ") does not match the name on the URL (" +
                                    std::string(path_name) + ")");
    auto ns = settle_namespace(info, meta, path_ns, path_name);
    if (!ns)
      return ns.failure();
    const auto& old_meta = existing.object->meta();
    auto rv = string_at(meta, "resourceVersion");
    if (!rv.empty() && rv != old_meta.resource_version)
      return apiserver::conflict(info.gvr, path_name);
    const auto& old_metadata = old.at("metadata").get_object();
    for (std::string_view field : {"uid", "creationTimestamp", "deletionTimestamp",
                                   "deletionGracePeriodSeconds", "generation"}) {
      if (const auto* v = old_metadata.if_contains(field))
        meta[field] = *v;
      else
        meta.erase(field);
    }
    if (!same_spec(o, old))
      meta["generation"] = old_meta.generation + 1;
    meta["resourceVersion"] = old_meta.resource_version;
    if (same_content(body, existing))
      return existing; // a no-op update writes nothing and keeps the resourceVersion
    const bool finalized = !old_meta.deletion_timestamp.empty() && [&] {
      const auto* f = meta.if_contains("finalizers");
      return !f || !f->is_array() || f->get_array().empty();
    }();
    if (finalized) // the last finalizer is gone: the pending deletion completes
      return commit(state, std::move(body), event_type::deleted, &existing, dry_run);
    return commit(state, std::move(body), event_type::modified, &existing, dry_run);
  }

  api_result<stored_object> update(const group_version_resource& gvr, std::string_view ns,
                                   std::string_view name, json::value&& body,
                                   write_options options) {
    std::unique_lock lock(mutex);
    resource_state* state = find(gvr);
    if (!state)
      return apiserver::resource_not_found();
    auto existing = find_object(*state, gvr, ns, name);
    if (!existing)
      return existing;
    return replace(*state, *existing, std::move(body), ns, name, options);
  }
};

// ---------------------------------------------------------------------------------------------
// storage

storage::storage(storage_options options) : impl_(std::make_shared<impl>(std::move(options))) {
  for (auto& info : builtin_resources())
    register_resource(std::move(info));
  if (impl_->options.create_default_namespaces) {
    const group_version_resource namespaces{"", "v1", "namespaces"};
    for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
      auto made = create_value(namespaces, "", json::value{{"metadata", {{"name", name}}}});
      (void)made;
    }
  }
}

storage::~storage() = default;

void storage::register_resource(resource_info info) {
  std::unique_lock lock(impl_->mutex);
  auto& state = impl_->resources[info.gvr];
  state.info = std::move(info);
}

std::optional<resource_info> storage::find_resource(const group_version_resource& gvr) const {
  std::shared_lock lock(impl_->mutex);
  if (const auto* state = impl_->find(gvr))
    return state->info;
  return std::nullopt;
}

std::optional<resource_info> storage::find_kind(const group_version_kind& gvk) const {
  std::shared_lock lock(impl_->mutex);
  for (const auto& [gvr, state] : impl_->resources)
    if (gvr.group == gvk.group && gvr.version == gvk.version && state.info.kind == gvk.kind)
      return state.info;
  return std::nullopt;
}

std::vector<resource_info> storage::resources() const {
  std::shared_lock lock(impl_->mutex);
  std::vector<resource_info> out;
  for (const auto& [gvr, state] : impl_->resources)
    out.push_back(state.info);
  return out;
}

std::uint64_t storage::current_resource_version() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->revision;
}

std::uint64_t storage::oldest_resource_version() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->oldest;
}

api_result<stored_object> storage::get(const group_version_resource& gvr, std::string_view ns,
                                       std::string_view name) const {
  std::shared_lock lock(impl_->mutex);
  const resource_state* state = impl_->find(gvr);
  if (!state)
    return apiserver::resource_not_found();
  return find_object(*state, gvr, ns, name);
}

std::vector<object_version> storage::truth(const group_version_resource& gvr,
                                           const label_selector& labels) const {
  std::shared_lock lock(impl_->mutex);
  std::vector<object_version> out;
  if (const resource_state* state = impl_->find(gvr)) {
    out.reserve(state->objects.size());
    for (const auto& [key, stored] : state->objects)
      if (labels.matches(*stored.object))
        out.push_back({key, parse_revision(stored.object->meta().resource_version).value_or(0)});
  }
  return out;
}

api_result<list_result> storage::list(const list_request& request) {
  std::shared_lock calling(impl_->observer_calls);
  if (!impl_->observer)
    return list_unobserved(request);
  request_record record;
  record.kind = request_record::verb::list;
  record.gvr = request.gvr;
  record.resource_version = request.resource_version;
  record.continued = !request.continue_token.empty();
  record.continue_token = request.continue_token;
  record.limit = request.limit;
  record.received = std::chrono::steady_clock::now();
  auto result = list_unobserved(request);
  record.code = result ? 200 : result.failure().code;
  impl_->observer(record);
  return result;
}

api_result<list_result> storage::list_unobserved(const list_request& request) {
  if (auto failure = impl_->faults.take_list_failure())
    return *failure;
  std::shared_lock lock(impl_->mutex);
  const resource_state* state = impl_->find(request.gvr);
  if (!state)
    return apiserver::resource_not_found();
  if (auto failure = apiserver::check_field_labels(state->info, request.fields))
    return *failure;

  // Which snapshot to serve, and where to start.
  std::uint64_t snapshot = impl_->revision;
  std::string start;
  if (!request.continue_token.empty()) {
    if (!request.resource_version.empty())
      return apiserver::bad_request(
          "specifying resource version is not allowed when using continue");
    if (request.match != resource_version_match::unset)
      return list_options_invalid(
          "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is "
          "provided");
    auto token = apiserver::continue_token::decode(request.continue_token);
    if (!token)
      return apiserver::bad_request(token.err().message);
    if (token->resource_version > impl_->revision)
      return apiserver::bad_request("continue key is not valid: resource version from the future");
    if (token->resource_version < impl_->oldest || impl_->faults.take_continue_expiry())
      return apiserver::continue_too_old();
    snapshot = token->resource_version;
    start = std::move(token->start_key);
  } else if (request.resource_version.empty()) {
    if (request.match != resource_version_match::unset)
      return list_options_invalid("resourceVersionMatch: Forbidden: resourceVersionMatch is "
                                  "forbidden unless resourceVersion is provided");
  } else {
    auto rv = parse_revision(request.resource_version);
    if (!rv)
      return apiserver::bad_request("invalid resource version: " + request.resource_version);
    if (*rv == 0 && request.match == resource_version_match::exact)
      return list_options_invalid(
          "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for "
          "resourceVersion \"0\"");
    if (*rv > impl_->revision)
      return apiserver::too_large_resource_version(*rv, impl_->revision);
    // Exact is served from the history window (not only at the current revision); older than
    // the window is 410, as etcd answers for a compacted revision.
    if (request.match == resource_version_match::exact) {
      if (*rv < impl_->oldest)
        return apiserver::too_old_resource_version(*rv, impl_->oldest);
      snapshot = *rv;
    }
  }

  // Objects as they were at `snapshot`: writes after it are undone from the history window
  // (the earliest later event of a key holds its state at the snapshot).
  std::map<std::string_view, const stored_object*> undone; // nullptr = absent at the snapshot
  if (snapshot < impl_->revision) {
    for (std::size_t i = impl_->history_after(snapshot); i < impl_->history.size(); ++i) {
      const event& ev = *impl_->history[i];
      if (ev.gvr != request.gvr)
        continue;
      undone.try_emplace(ev.object.object->key(),
                         ev.type == event_type::added ? nullptr : &ev.previous);
    }
  }

  std::string_view ns =
      state->info.scope == resource_scope::cluster ? std::string_view{} : request.namespace_;
  std::string lower = ns.empty() ? std::string() : std::string(ns) + "/";
  std::string upper = ns.empty() ? std::string() : std::string(ns) + "0"; // '0' follows '/'
  if (start < lower)
    start = lower;
  const bool selective = !request.labels.empty() || !request.fields.empty();
  // A list of every object at the current revision counts what remains by rank, not by a walk.
  const bool counted_by_rank = !selective && undone.empty() && upper.empty();

  list_result out;
  out.resource_version = snapshot;
  std::int64_t remaining = 0;
  bool more = false;
  auto current = state->objects.lower_bound(start);
  auto changed = undone.lower_bound(start);
  while (current != state->objects.end() || changed != undone.end()) {
    std::string_view key;
    const stored_object* item = nullptr;
    if (changed == undone.end() ||
        (current != state->objects.end() && current->first < changed->first)) {
      key = current->first;
      item = &current->second;
      ++current;
    } else {
      key = changed->first;
      item = changed->second;
      if (current != state->objects.end() && current->first == changed->first)
        ++current;
      ++changed;
    }
    if (!upper.empty() && key >= upper)
      break;
    if (!item || !matches(request.labels, request.fields, {}, *item->object))
      continue;
    if (request.limit > 0 && std::int64_t(out.items.size()) == request.limit) {
      more = true;
      ++remaining;
      if (selective || counted_by_rank) // the real server only counts when nothing is filtered
        break;
      continue;
    }
    out.items.push_back(*item);
  }
  if (more) {
    auto token = apiserver::continue_token::after(snapshot, out.items.back().object->key());
    if (counted_by_rank) {
      const std::size_t next_rank = state->rank_of(start) + out.items.size();
      remaining = static_cast<std::int64_t>(state->objects.size() - next_rank);
      state->remember_page_end(token.start_key, next_rank);
    }
    out.continue_token = token.encode();
    if (!selective)
      out.remaining_item_count = remaining;
  }
  lock.unlock();
  if (request.metadata_only)
    for (auto& item : out.items)
      item = metadata_projection(item);
  return out;
}

namespace {

api_result<json::value> parse_body(std::string_view body_json) {
  json::error_code ec;
  json::value body = json::parse(body_json, ec);
  if (ec)
    return apiserver::bad_request("the body of the request could not be decoded as JSON: " +
                                  ec.message());
  return body;
}

} // namespace

api_result<stored_object> storage::create(const group_version_resource& gvr, std::string_view ns,
                                          std::string_view body_json, write_options options) {
  auto body = parse_body(body_json);
  if (!body)
    return body.failure();
  return impl_->create(gvr, ns, std::move(body.value()), options);
}

api_result<stored_object> storage::create_value(const group_version_resource& gvr,
                                                std::string_view ns, const json::value& body,
                                                write_options options) {
  return impl_->create(gvr, ns, scratch_copy(body), options);
}

api_result<stored_object> storage::create_value(const group_version_resource& gvr,
                                                std::string_view ns, json::value&& body,
                                                write_options options) {
  return impl_->create(gvr, ns, std::move(body), options);
}

api_result<stored_object> storage::update(const group_version_resource& gvr, std::string_view ns,
                                          std::string_view name, std::string_view body_json,
                                          write_options options) {
  auto body = parse_body(body_json);
  if (!body)
    return body.failure();
  return impl_->update(gvr, ns, name, std::move(body.value()), options);
}

api_result<stored_object> storage::update_value(const group_version_resource& gvr,
                                                std::string_view ns, std::string_view name,
                                                const json::value& body, write_options options) {
  return impl_->update(gvr, ns, name, scratch_copy(body), options);
}

api_result<stored_object> storage::update_value(const group_version_resource& gvr,
                                                std::string_view ns, std::string_view name,
                                                json::value&& body, write_options options) {
  return impl_->update(gvr, ns, name, std::move(body), options);
}

api_result<stored_object> storage::patch(const group_version_resource& gvr, std::string_view ns,
                                         std::string_view name, patch_type type,
                                         std::string_view patch_json, write_options options) {
  json::error_code ec;
  json::value patch = json::parse(patch_json, ec);
  if (ec)
    return apiserver::bad_request("the body of the request could not be decoded as JSON: " +
                                  ec.message());
  if (type == patch_type::apply)
    return apply(gvr, ns, name, std::move(patch), std::move(options));
  std::unique_lock lock(impl_->mutex);
  resource_state* state = impl_->find(gvr);
  if (!state)
    return apiserver::resource_not_found();
  auto found = find_object(*state, gvr, ns, name);
  if (!found)
    return found;
  const stored_object existing = *found;
  json::value patched = scratch_tree(*existing.object);
  if (type == patch_type::json_patch) {
    if (auto applied = apply_json_patch(patched, patch); !applied)
      return apiserver::make_failure(422, "Invalid", applied.err().message);
  } else {
    if (!patch.is_object())
      return apiserver::bad_request("a merge patch must be a JSON object");
    apply_merge_patch(patched, patch);
  }
  return impl_->replace(*state, existing, std::move(patched), ns, name, options);
}

api_result<stored_object> storage::apply(const group_version_resource& gvr, std::string_view ns,
                                         std::string_view name, json::value&& config,
                                         write_options options) {
  if (options.field_manager.empty())
    return apiserver::bad_request("fieldManager is required for apply requests");
  if (!config.is_object())
    return apiserver::bad_request("an apply configuration must be a JSON object");
  auto& meta = config.get_object()["metadata"];
  if (!meta.is_object())
    meta = json::object();
  meta.get_object()["name"] = name;
  std::unique_lock lock(impl_->mutex);
  resource_state* state = impl_->find(gvr);
  if (!state)
    return apiserver::resource_not_found();
  const std::string api_version = api_version_of(state->info);
  auto found = find_object(*state, gvr, ns, name);
  if (!found && found.failure().code != 404)
    return found;
  std::optional<json::value> live;
  if (found)
    live = scratch_tree(*found.value().object);
  auto applied =
      server_side_apply(live ? &live->get_object() : nullptr, config.get_object(),
                        options.field_manager, options.force, api_version, now_rfc3339());
  if (!applied.conflicts.empty())
    return apply_conflict(applied.conflicts, api_version);
  json::value result(std::move(applied.object));
  if (!found) {
    lock.unlock(); // create takes the lock itself
    return impl_->create(gvr, ns, std::move(result), options, true);
  }
  const stored_object existing = found.value();
  return impl_->replace(*state, existing, std::move(result), ns, name, options, true);
}

api_result<stored_object> storage::remove(const group_version_resource& gvr, std::string_view ns,
                                          std::string_view name,
                                          std::string_view expected_resource_version,
                                          write_options options) {
  std::unique_lock lock(impl_->mutex);
  resource_state* state = impl_->find(gvr);
  if (!state)
    return apiserver::resource_not_found();
  auto found = find_object(*state, gvr, ns, name);
  if (!found)
    return found;
  const stored_object existing = *found;
  const auto& meta = existing.object->meta();
  if (!expected_resource_version.empty() && expected_resource_version != meta.resource_version)
    return apiserver::precondition_conflict(gvr, name, expected_resource_version,
                                            parse_revision(meta.resource_version).value_or(0));
  json::value body = scratch_tree(*existing.object);
  auto& m = body.get_object()["metadata"].get_object();
  const auto* finalizers = m.if_contains("finalizers");
  if (finalizers && finalizers->is_array() && !finalizers->get_array().empty()) {
    // Finalizers hold the object: mark it deleted and wait for them to be removed.
    if (!meta.deletion_timestamp.empty())
      return existing;
    m["deletionTimestamp"] = now_rfc3339();
    m["deletionGracePeriodSeconds"] = 0;
    return impl_->commit(*state, std::move(body), event_type::modified, &existing, options.dry_run);
  }
  return impl_->commit(*state, std::move(body), event_type::deleted, &existing, options.dry_run);
}

// ---------------------------------------------------------------------------------------------
// Watch

namespace {

std::shared_ptr<const std::string> bookmark_line(const resource_info& info, std::uint64_t rv,
                                                 bool metadata_only, bool initial_events_end) {
  return make_line(
      event_type::bookmark,
      apiserver::bookmark_object(metadata_only ? "PartialObjectMetadata" : info.kind,
                                 metadata_only ? "meta.k8s.io/v1" : info.gvr.gv().api_version(),
                                 std::to_string(rv), initial_events_end));
}

} // namespace

api_result<watch_handle> storage::watch(const watch_request& request, watch_sink sink) {
  std::shared_lock calling(impl_->observer_calls);
  if (!impl_->observer)
    return watch_unobserved(request, std::move(sink));
  request_record record;
  record.kind = request_record::verb::watch;
  record.gvr = request.gvr;
  record.resource_version = request.resource_version;
  record.send_initial_events = request.send_initial_events.value_or(false);
  record.received = std::chrono::steady_clock::now();
  auto result = watch_unobserved(request, std::move(sink));
  record.code = result ? 200 : result.failure().code;
  impl_->observer(record);
  return result;
}

api_result<watch_handle> storage::watch_unobserved(const watch_request& request, watch_sink sink) {
  std::unique_lock lock(impl_->mutex);
  resource_state* state = impl_->find(request.gvr);
  if (!state)
    return apiserver::resource_not_found();
  if (auto failure = apiserver::check_field_labels(state->info, request.fields))
    return *failure;
  if (request.send_initial_events) {
    if (impl_->faults.refuses_streaming_lists())
      return list_options_invalid("sendInitialEvents: Forbidden: sendInitialEvents is forbidden "
                                  "for watch unless the WatchList feature gate is enabled");
    if (request.match != resource_version_match::not_older_than)
      return list_options_invalid("resourceVersionMatch: Forbidden: sendInitialEvents requires "
                                  "setting resourceVersionMatch to NotOlderThan");
  } else if (request.match != resource_version_match::unset) {
    return list_options_invalid("resourceVersionMatch: Forbidden: resourceVersionMatch is "
                                "forbidden for watch unless sendInitialEvents is provided");
  }

  const std::uint64_t current = impl_->revision;
  const bool from_now = request.resource_version.empty() || request.resource_version == "0";
  std::uint64_t from = current;
  if (!from_now) {
    auto rv = parse_revision(request.resource_version);
    if (!rv)
      return apiserver::bad_request("invalid resource version: " + request.resource_version);
    if (*rv > current)
      return apiserver::too_large_resource_version(*rv, current);
    from = *rv;
  }
  if (auto failure = impl_->faults.take_watch_failure()) {
    if (failure->code == 410)
      return apiserver::too_old_resource_version(from, impl_->oldest);
    return apiserver::injected_failure(failure->code, failure->retry_after_seconds);
  }

  watch_request filter = request;
  if (state->info.scope == resource_scope::cluster)
    filter.namespace_.clear();
  const bool initial_events = request.send_initial_events.value_or(from_now);
  if (initial_events) {
    // The current state as synthetic ADDED events, in key order.
    for (const auto& [key, stored] : state->objects) {
      if (!matches(filter.labels, filter.fields, filter.namespace_, *stored.object))
        continue;
      stored_object shown = request.metadata_only ? metadata_projection(stored) : stored;
      sink({event_type::added, current, shown.object, make_line(event_type::added, *shown.json)});
    }
    // kube-apiserver v1.37 takes sendInitialEvents without allowWatchBookmarks, and then sends
    // no bookmark at the end of the initial events.
    if (request.send_initial_events.value_or(false) && request.allow_bookmarks)
      sink({event_type::bookmark, current, nullptr,
            bookmark_line(state->info, current, request.metadata_only, true), true});
  } else if (from < current) {
    if (from < impl_->oldest)
      return apiserver::too_old_resource_version(from, impl_->oldest);
    for (std::size_t i = impl_->history_after(from); i < impl_->history.size(); ++i) {
      const event& ev = *impl_->history[i];
      if (ev.gvr != request.gvr)
        continue;
      event_projection projection(ev);
      if (auto message = projection.for_watcher(filter))
        sink(*message);
    }
  }

  const std::uint64_t id = impl_->next_watch_id++;
  state->watchers.emplace(id, watcher{std::move(filter), std::move(sink)});
  impl_->watch_resources.emplace(id, request.gvr);
  return watch_handle(std::weak_ptr<watch_registry>(impl_), id);
}

void storage::send_bookmarks() {
  std::unique_lock lock(impl_->mutex);
  const std::uint64_t rv = impl_->revision;
  for (auto& [gvr, state] : impl_->resources) {
    std::shared_ptr<const std::string> lines[2];
    for (auto& [id, w] : state.watchers) {
      if (!w.request.allow_bookmarks)
        continue;
      auto& line = lines[w.request.metadata_only ? 1 : 0];
      if (!line)
        line = bookmark_line(state.info, rv, w.request.metadata_only, false);
      w.sink({event_type::bookmark, rv, nullptr, line});
    }
  }
}

std::size_t storage::watch_count() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->watch_resources.size();
}

// ---------------------------------------------------------------------------------------------
// Data faults

void storage::compact() {
  std::unique_lock lock(impl_->mutex);
  impl_->history.clear();
  impl_->oldest = impl_->revision;
}

void storage::restore(std::uint64_t jump) {
  std::unique_lock lock(impl_->mutex);
  impl_->end_every_watch();
  impl_->revision += jump;
  impl_->history.clear();
  impl_->oldest = impl_->revision;
}

std::size_t storage_backup::size() const noexcept {
  std::size_t n = 0;
  for (const auto& [gvr, objects] : objects_)
    n += objects.size();
  return n;
}

storage_backup storage::backup() const {
  std::shared_lock lock(impl_->mutex);
  storage_backup out;
  out.revision_ = impl_->revision;
  for (const auto& [gvr, state] : impl_->resources)
    out.objects_[gvr] = state.objects;
  return out;
}

void storage::restore(const storage_backup& from, std::uint64_t jump) {
  std::unique_lock lock(impl_->mutex);
  impl_->end_every_watch();
  for (auto& [gvr, state] : impl_->resources) {
    // A resource registered after the backup (a CRD added since) keeps its objects.
    auto saved = from.objects_.find(gvr);
    if (saved == from.objects_.end())
      continue;
    state.objects = saved->second;
    ++state.writes; // page-rank hints from before are void
  }
  ++impl_->backups_restored;
  impl_->revision += jump;
  impl_->history.clear();
  impl_->oldest = impl_->revision;
}

std::uint64_t storage::backups_restored() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->backups_restored;
}

void storage::skip_revisions(std::uint64_t count) {
  std::unique_lock lock(impl_->mutex);
  impl_->revision += count;
}

void storage::clear_faults() {
  impl_->faults.reset();
}

void storage::fail_next_watches(std::size_t count) {
  impl_->faults.fail_next_watches(count);
}

void storage::fail_next_watches(std::size_t count, int code,
                                std::optional<int> retry_after_seconds) {
  impl_->faults.fail_next_watches(count, code, retry_after_seconds);
}

void storage::fail_next_writes(std::size_t count, int code,
                               std::optional<int> retry_after_seconds) {
  impl_->faults.fail_next_writes(count, code, retry_after_seconds);
}

std::optional<status> storage::take_write_failure() {
  return impl_->faults.take_write_failure();
}

void storage::fail_next_lists(std::size_t count, int code, std::optional<int> retry_after_seconds) {
  impl_->faults.fail_next_lists(count, code, retry_after_seconds);
}

void storage::expire_next_continues(std::size_t count) {
  impl_->faults.expire_next_continues(count);
}

void storage::refuse_streaming_lists(bool refuse) {
  impl_->faults.refuse_streaming_lists(refuse);
}

// ---------------------------------------------------------------------------------------------
// Test tooling

void storage::observe_requests(request_observer observer) {
  // Waits for calls of the previous observer still running on the I/O threads.
  std::unique_lock replacing(impl_->observer_calls);
  impl_->observer = std::move(observer);
}

} // namespace kinformer::sim
