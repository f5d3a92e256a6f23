#pragma once
// What the one API-server front end (api_frontend.hpp) serves from: the simulator's storage, or
// kinformerd's cache. The front end reads and checks every request (path, ListOptions, Accept,
// admission), answers discovery and OpenAPI, and renders every get and list answer (objects,
// PartialObjectMetadata, Tables); a backend only finds objects. A get answers one object, a list
// one snapshot of the selection with its resourceVersion. A watch streams from the backend's own
// source of events, shaped with watch_shaper.hpp.
//
// No Beast, no JSON library, no actors here: cheap to include.

#include "app/apiserver/access_request.hpp"
#include "app/apiserver/list_query.hpp"
#include "app/apiserver/resource_info.hpp"
#include "app/apiserver/response_form.hpp"
#include "app/apiserver/table.hpp"
#include "protocol/object.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace kinformer::apiserver {

class http_exchange;
struct http_request;
struct request_target;
struct resource_path;

// A GET on a served resource, read and checked by the front end.
struct resource_request {
  resource_info info;
  request_verb verb = request_verb::get;
  std::string namespace_; // "" = all namespaces (always "" for a cluster-scoped kind)
  std::string name;       // empty: the collection
  // Every ListOptions of a list or watch. A watch of one object (a name on the path) selects it
  // with metadata.name=<name> among its fields.
  list_query query;
  response_shape shape = response_shape::object;
  include_object include = include_object::metadata;

  // Whether `obj` is in the selection: namespace, labels and fields.
  bool matches(const object& obj) const;
  // Whether the selection names labels or fields: an object can leave it by changing.
  bool selects_by_content() const { return !query.labels.empty() || !query.fields.empty(); }
  // What a continue token is bound to: the collection and its selectors.
  std::string selection() const;
};

// One object, and whether it is PartialObjectMetadata already (from a metadata-only store).
struct object_answer {
  object_ptr object;
  bool metadata_only = false;
};

// One page of a list: its items in key order, the snapshot's resourceVersion, and where the next
// page starts. `items` point into what `owner` keeps alive until the answer is written.
struct list_answer {
  std::span<const object_ptr> items;
  std::shared_ptr<const void> owner;
  std::string resource_version;
  std::string continue_token; // empty: the last page
  std::optional<std::int64_t> remaining_item_count;
  bool metadata_only = false; // the items are PartialObjectMetadata already
};

using get_outcome = std::variant<object_answer, status>;
using list_outcome = std::variant<list_answer, status>;
using get_done = std::function<void(get_outcome)>;
using list_done = std::function<void(list_outcome)>;
// Admission's answer: the exchange to serve on (it may count what goes through it).
using admitted = std::function<void(const http_request&, std::shared_ptr<http_exchange>)>;

class api_backend {
public:
  virtual ~api_backend() = default;

  // The kinds served, as discovery shows them.
  virtual std::vector<resource_info> resources() const = 0;
  // What /version reports.
  virtual std::string git_version() const = 0;

  // Authenticates and authorises `wanted` before anything is served: calls `next` (at once or
  // later, from any thread) to serve it, or answers `exchange` with the refusal. Default: all.
  virtual void admit(const http_request& request, const access_request& wanted,
                     std::shared_ptr<http_exchange> exchange, admitted next);

  // Each calls `done` once, from any thread.
  virtual void get(resource_request request, get_done done) = 0;
  virtual void list(resource_request request, list_done done) = 0;
  // Answers on `exchange`: a Status, or a stream of watch events.
  virtual void watch(resource_request request, std::shared_ptr<http_exchange> exchange) = 0;

  // Whether methods other than GET reach write(); when false they are 405 MethodNotAllowed
  // before admission.
  virtual bool writable() const { return false; }
  // Any other method on a path under /api or /apis (admitted). Default: 405.
  virtual void write(const http_request& request, const request_target& target,
                     const resource_path& path, std::shared_ptr<http_exchange> exchange);
};

} // namespace kinformer::apiserver
