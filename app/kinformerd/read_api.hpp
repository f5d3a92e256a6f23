#pragma once
// The Kubernetes-compatible read API, served from the cache: what `kubectl --server=...` and any
// Kubernetes client needs to get, list and watch the cached kinds without touching the API
// server. It is a backend of the one API-server front end the simulator also serves through
// (app/apiserver/api_frontend.hpp), which reads the requests and renders the answers.
//
// Served (GET only; any other method is 405 MethodNotAllowed):
// - Discovery for the served kinds: /api, /api/v1, /apis, /apis/{g}, /apis/{g}/{v}, /version,
//   /openapi/v2 and /openapi/v3[/...] (app/apiserver's documents, as the simulator's).
// - List: /api/v1/pods, /api/v1/namespaces/{ns}/pods, /apis/apps/v1/deployments, with
//   labelSelector, fieldSelector (any field path, matched here; the API server accepts only a few
//   per kind), limit and continue. The answer is a `<Kind>List`, items in key order.
// - Get: /api/v1/namespaces/{ns}/pods/{name}.
// - Watch: ?watch=1|true (or the /watch/ path prefix) as WatchEvent JSON lines, driven by
//   subscriptions to the kind's informers; timeoutSeconds ends it cleanly. On an item path it
//   watches that one object.
// - The Accept header is honoured (app/apiserver/response_form.hpp): plain objects; metadata-only
//   clients' as=PartialObjectMetadata(List), from the kind's metadata-only informer or cut from
//   full objects; kubectl's as=Table (app/apiserver/table.hpp, with includeObject). Anything else
//   is 406 NotAcceptable, and so are whole objects of a kind configured metadata-only: the read
//   API answers only from the informers the configuration asked for, in their form.
// - Errors as Status JSON: 404 unknown kind or object, 400 bad selector or parameter, 410 expired
//   continue token or unservable resourceVersion, 504 for a resourceVersion newer than the cache.
//
// resourceVersion, as far as a cache can honour it:
// - Every read waits until the kind's informers have synced, so a list is never partial.
// - A list's items and its metadata.resourceVersion come from one snapshot of each informer, in
//   one request to the cache (with several informers, the oldest of their snapshots' versions:
//   a watch from it misses nothing, at worst it repeats an object the list already had).
// - List at "" or "0" or with NotOlderThan: the cache's current state. A numeric resourceVersion
//   newer than the cache's: 504 Timeout with cause ResourceVersionTooLarge (clients relist).
//   resourceVersionMatch=Exact: only the cache's current resourceVersion; older ones are 410.
// - Watch at "" or "0", or with sendInitialEvents=true: ADDED for every current object first,
//   in resourceVersion order. Watch at an integer N (etcd revision): the client holds the state
//   at N, so each informer of the kind replays every change after N from the window of recent
//   changes it keeps (cache_options::change_window; kinformerd keeps read_api_change_window =
//   4096 per informer), as the API server's watch cache replays its event window: in
//   resourceVersion order, with objects that entered the selection as ADDED and ones that left
//   it as DELETED carrying their last matching state at the change's resourceVersion
//   (watch_projection.hpp, shared with the simulator). When N is older than an informer's
//   window (evicted past its bound, or before its last relist), the watch is refused with 410
//   Expired "too old resource version" and the client relists. Every watch subscribes to the
//   kind's informers directly and ends cleanly when one is restarted (the client watches again
//   from its last resourceVersion). A watch at a non-integer N gets the current state.
// - Several informers for a kind (a cache over explicit namespaces): the initial or replayed
//   events are merged in resourceVersion order, and N is checked against each informer's window;
//   a list and the bookmarks report the oldest informer's resourceVersion, so until a quiet
//   informer's version passes a busier one's last list (its next bookmark), a watch from such a
//   list is refused and the client relists. Live events are merged too (live_event_merge.hpp):
//   one informer's event waits until every other informer is past it, by an event of its own or
//   by its progress, which a quiet informer makes through its watch's bookmarks (the API server
//   sends one about every minute). So a watch across namespaces cached apart is exact but can
//   lag by up to that much; a watch within one namespace reads that namespace's informer alone
//   (or the all-namespaces one) and never waits. Held events are bounded (merge_hold_limit).
// - limit/continue: the first page keeps the whole sorted result as a snapshot; later pages come
//   from it, consistent with the first. A snapshot is kept until its last page is served, for at
//   most `continue_max_age` and `continue_snapshots` at a time (continue_snapshots.hpp). A
//   continue token whose snapshot is gone is 410 Expired, as the API server answers once a
//   snapshot is compacted.
// - Bookmarks (allowWatchBookmarks): with sendInitialEvents=true, one BOOKMARK annotated
//   k8s.io/initial-events-end after the initial events, at the snapshot's resourceVersion (also
//   for an empty selection); then one every `bookmark_interval`, at the resourceVersion up to
//   which every informer has delivered everything, so a quiet selection's watch stays resumable.
// - timeoutSeconds absent or 0: the server's default watch duration.
// - A watch whose client reads too slowly is dropped at the server's stream bound with an ERROR
//   event (410 Expired: the client relists), never buffered without limit.
//
// Nothing blocks an HTTP I/O thread: every cache request runs on a short-lived helper actor, and
// every watch is a handler actor; answers are posted back through the exchange.

#include "actors/interfaces.hpp"
#include "app/apiserver/http_server.hpp"
#include "app/apiserver/resource_info.hpp"
#include "app/kinformerd/api_access.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kinformer::apiserver {
class api_frontend;
}

namespace kinformer::service {

struct read_api_options {
  // The kinds served, as discovery shows them (kind, plural, singular, scope, short names).
  // Their verbs are served as get, list and watch whatever they say.
  std::vector<apiserver::resource_info> resources;
  // Reported by /version.
  std::string git_version = "v1.29.0-kinformerd";
  // Bound on every cache request (waiting for sync included); past it: 504 Timeout.
  std::chrono::milliseconds cache_timeout{10000};
  // Watch duration when the client sends no timeoutSeconds, or 0 (the API server: 30-60 min).
  std::chrono::seconds default_watch_timeout{1800};
  // Periodic bookmarks of watches that allow them (the API server sends about one a minute).
  std::chrono::milliseconds bookmark_interval{60000};
  // A watch fed by several informers holds a live event until every informer is past it; while
  // it holds one, it asks the quiet informers how far they are this often. Past
  // merge_hold_limit held events, the watch ends cleanly (the client watches again from its last
  // event): an informer that makes no progress cannot make the others' events pile up.
  std::chrono::milliseconds merge_poll_interval{100};
  std::size_t merge_hold_limit = 100000;
  // Which informers the configuration keeps for each served kind, by
  // group_version_resource::to_string(): full objects, metadata only (PartialObjectMetadata), or
  // both. A kind not listed has a full informer. A request is answered only from these: objects
  // from a full one; metadata and tables from the metadata-only one when there is one, else cut
  // from full objects. Objects of a kind cached as metadata only are refused (406), never fetched.
  struct stored_forms {
    bool full = true;
    bool metadata = false;
  };
  std::map<std::string, stored_forms> forms;
  // Paged lists kept for continue tokens (see continue_snapshots.hpp): at most this many, each
  // until its last page is served and for at most continue_max_age.
  std::size_t continue_snapshots = 32;
  std::chrono::seconds continue_max_age{300};
  // Watches open at once, and lists without a limit being answered at once: past either, 429
  // TooManyRequests with Retry-After (seconds). 0: no bound.
  std::size_t max_watches = 0;
  std::size_t max_unpaged_lists = 0;
  unsigned retry_after_seconds = 1;
  // Authentication (TokenReview) and authorisation (SubjectAccessReview) of every request
  // (api_access.hpp); null: none (a static bearer token, if any, is the HTTP server's check).
  std::shared_ptr<api_access> access;
};

// What the read API counted since it started (kinformerd exports it as metrics).
struct read_api_stats {
  // Answered requests by verb (get, list, watch; discovery for the rest) and HTTP code.
  std::map<std::pair<std::string, int>, std::uint64_t> requests;
  std::size_t open_watches = 0;
  std::size_t unpaged_lists = 0; // lists without a limit being answered now
};

// The read API's routes. It must outlive the server it is attached to (stop the server first),
// and the actor system must outlive both.
class read_api {
public:
  read_api(caf::actor_system& system, cache_actor cache, read_api_options options);
  ~read_api();
  read_api(const read_api&) = delete;
  read_api& operator=(const read_api&) = delete;

  // Registers /api, /apis, /version and /openapi on `server` (before it starts).
  void attach(apiserver::http_server& server);

  // Answers one request (what the routes call).
  void handle(const apiserver::http_request& request,
              std::shared_ptr<apiserver::http_exchange> exchange);

  read_api_stats stats() const;

  struct state; // shared with the helper actors of read_api.cpp
  class backend;

private:
  std::shared_ptr<state> state_;
  std::unique_ptr<backend> backend_;
  std::unique_ptr<apiserver::api_frontend> front_;
};

// The resource_info of a kind known only by its REST mapping (singular: the lower-case kind).
apiserver::resource_info served_resource(const group_version_resource& resource, std::string kind,
                                         resource_scope scope);

} // namespace kinformer::service
