#pragma once
// The reflector's list/watch decision table (client-go tools/cache/reflector.go), written as
// kube-rs's watcher.rs writes it: an explicit state type and a pure step function. The driver
// (the reflector actor) feeds in what happened and executes the actions that come back; this
// file does no I/O, keeps no clock and owns no threads.
//
// Every request, stream and timer the machine starts carries a session id. Inputs whose session
// is not the current one come from a cancelled or superseded I/O and are ignored.
//
// Against client-go (reflector.go, pager.go, rest/request.go and with_retry.go), failure by
// failure:
// - Rounds. A watch that ends in 410 Expired, 504 ResourceVersionTooLarge, another error Status,
//   or closes within short_watch having delivered nothing (VeryShortWatchError) ends the round:
//   back off, then relist. The delays are client-go's backoff manager (backoff.hpp: 0.8 s
//   doubling to 30 s, each drawn from [d, 2d), reset after 2 minutes without a failure), so a
//   server answering every watch with 410 sees one LIST per delay.
// - Requests. A 429, or a 5xx carrying Retry-After, is retried as the same request after that
//   delay: a list page with its continue token (the pages already received stay), a watch from
//   the same resourceVersion (no relist). So is a list page whose connection was reset or closed
//   early (at once). At most max_request_retries (10) times in a row; then the failure goes to
//   the table above. A 503 without Retry-After on a watch relists after a backoff, as client-go.
// - Lists. 410 or TooLarge on a list at a resourceVersion relists at once at "" (a consistent
//   read), as client-go's list() does; at "" already, it backs off. A continue token that
//   expired falls back to one unpaged list at the same resourceVersion (the pager's
//   FullListIfExpired), so paging cannot fall behind compaction forever.
// - Streaming lists (sendInitialEvents) resume from the last synced resourceVersion with
//   NotOlderThan ("" at first and after Expired/TooLarge). Refused (4xx), or ended without the
//   initial-events-end bookmark, they fall back to a paged LIST for that round only; the next
//   round streams again.
// - A watch stream that breaks after delivering events re-watches at once, as client-go's does.
// Deliberately different:
// - A watch that breaks before delivering anything (no bookmark either), or is refused,
//   re-watches after a backoff delay; client-go re-watches a broken stream at once unless it
//   lived under a second. A server that drops connections under load is not hit again at once.
// - A watch that stays silent for stall_timeout is ended and re-watched: client-go relies on
//   the server's timeoutSeconds alone, and a half-open TCP connection can hang it for hours.
// - 429 on a list without Retry-After backs off and relists, as client-go; with Retry-After,
//   the server's delay is honoured exactly rather than compounded with the backoff.

#include "protocol/backoff.hpp"
#include "protocol/decode.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kinformer {

using session_id = std::uint64_t;

struct watcher_config {
  std::int64_t page_size = 500; // LIST limit where paging is allowed; 0 turns paging off
  std::chrono::seconds min_watch_timeout{300}; // timeoutSeconds is drawn uniformly from this range
  std::chrono::seconds max_watch_timeout{600};
  bool streaming_list = false; // KEP-3157: initial state through a watch with sendInitialEvents
  std::chrono::milliseconds stall_timeout{
      180'000}; // the driver ends a watch silent for this long (bookmarks ~1/min)
  std::chrono::milliseconds short_watch{
      1'000}; // a watch ending this fast with no events is a failure
  // Retries of one request before the failure goes to the decision table (client-go's
  // rest.Request maxRetries): a 429 or 5xx carrying Retry-After, or, for a list page, a
  // connection reset or closed early.
  int max_request_retries = 10;
};

// Why a list or watch (re)starts, or why the machine waits: for logs and metrics.
enum class restart_reason {
  initial,                    // the first list after start
  list_complete,              // the watch that follows a complete list
  watch_expired,              // 410 Expired / Gone on the watch
  resource_version_too_large, // 504 with cause ResourceVersionTooLarge (a lagging server)
  list_expired,               // 410 on a list at a specific resourceVersion
  continue_expired,           // the continue token expired between pages
  throttled,                  // 429 Too Many Requests
  connection_refused,
  watch_ended,       // the server closed the watch cleanly (timeoutSeconds reached)
  short_watch,       // a watch closed within `short_watch` having delivered nothing
  stalled,           // no line for `stall_timeout`
  io_error,          // connection reset or closed mid-request
  server_error,      // any other failure
  streaming_refused, // the server does not do streaming lists: paged LIST from now on
  malformed,         // the server sent what does not decode (bad JSON, an invalid object, an
                     // over-long line): the list is retried, the watch resumed from the last
                     // good resourceVersion
};
const char* to_string(restart_reason reason) noexcept;

// What went wrong with a request or a stream.
struct failure {
  int http_code = 0;                   // 0 when no HTTP response arrived
  std::optional<status> server_status; // a Status body, or the payload of an ERROR event
  bool connection_refused = false;     // the connection was never established
  // Reset, or closed by the peer before the response ended (client-go's IsConnectionReset and
  // IsProbableEOF): a list page is fetched again at once.
  bool connection_reset = false;
  // The response or stream did not decode: not JSON, an object that fails its checks, a line
  // over the limit. Retried as an I/O failure would be, and counted as its own reason.
  bool malformed = false;
  std::optional<std::chrono::milliseconds> retry_after; // the Retry-After header
  std::string message;                                  // for logs
};

// ---- inputs ----

struct start_requested {};

// One LIST response page, already decoded by the driver, which holds the items.
struct list_page_received {
  session_id session = 0;
  std::string resource_version; // metadata.resourceVersion
  std::string continue_token;   // metadata.continue; empty on the last page
  std::size_t item_count = 0;
};

struct list_failed {
  session_id session = 0;
  failure cause;
};

// The watch request got its 200 response headers.
struct watch_opened {
  session_id session = 0;
};

// One line of a watch stream. An ERROR event carries its Status in `error`.
struct watch_event_received {
  session_id session = 0;
  event_type type = event_type::added;
  std::string resource_version;    // the object's (or bookmark's) metadata.resourceVersion
  bool initial_events_end = false; // BOOKMARK annotated k8s.io/initial-events-end: "true"
  std::optional<status> error;
};

enum class watch_end {
  clean,       // the stream ended normally
  error_event, // an ERROR event ended it (alternative to watch_event_received of type error)
  http_error,  // the watch request got a non-2xx response
  io_error,    // connection refused, reset, or closed mid-line
  stalled,     // the driver saw nothing for stall_timeout and closed it
};

// The stream is over; the driver has already closed it.
struct watch_closed {
  session_id session = 0;
  watch_end how = watch_end::clean;
  failure cause;
  std::chrono::milliseconds lived{0}; // from the request to the end
  std::size_t events = 0;             // events it delivered, bookmarks included
};

struct timer_fired {
  session_id session = 0;
};

using watcher_input = std::variant<start_requested, list_page_received, list_failed, watch_opened,
                                   watch_event_received, watch_closed, timer_fired>;

// ---- actions, executed by the driver in order ----

// GET the collection: ?resourceVersion=...&limit=... (no limit when `limit` is empty).
struct start_list {
  session_id session = 0;
  std::string resource_version;
  std::optional<std::int64_t> limit;
  restart_reason reason = restart_reason::initial;
  bool retry = false; // the same first page again after a request-level failure, not a new list
  bool operator==(const start_list&) const = default;
};

// GET the next page: ?continue=...&limit=... (continue pages carry no resourceVersion).
struct fetch_next_page {
  session_id session = 0;
  std::string continue_token;
  std::optional<std::int64_t> limit;
  bool operator==(const fetch_next_page&) const = default;
};

// A new snapshot starts: the informer collects what follows until complete or abort.
struct begin_replace {
  session_id session = 0;
  bool operator==(const begin_replace&) const = default;
};

// The page (or initial ADDED event) just received belongs to the pending snapshot.
struct add_to_replace {
  session_id session = 0;
  std::size_t item_count = 0;
  bool operator==(const add_to_replace&) const = default;
};

// The snapshot is whole: the informer may now compute deletes for what it no longer contains.
struct complete_replace {
  session_id session = 0;
  std::string resource_version;
  bool operator==(const complete_replace&) const = default;
};

// The snapshot failed part way: drop what was collected, the store stays as it was.
struct abort_replace {
  session_id session = 0;
  bool operator==(const abort_replace&) const = default;
};

// GET ?watch=1&resourceVersion=...&allowWatchBookmarks=true&timeoutSeconds=...
// (+ sendInitialEvents=true&resourceVersionMatch=NotOlderThan for a streaming list).
struct start_watch {
  session_id session = 0;
  std::string resource_version;
  bool allow_bookmarks = true;
  std::chrono::seconds timeout{0};
  bool send_initial_events = false;
  std::string resource_version_match;         // "NotOlderThan" for streaming lists, else empty
  std::chrono::milliseconds stall_timeout{0}; // end the stream when silent this long
  restart_reason reason = restart_reason::initial;
  bool operator==(const start_watch&) const = default;
};

// The machine abandoned this request or stream: close it.
struct stop_io {
  session_id session = 0;
  bool operator==(const stop_io&) const = default;
};

// The event just received goes to the store.
struct apply_event {
  event_type type = event_type::added;
  std::string resource_version;
  bool operator==(const apply_event&) const = default;
};

// A bookmark: only the resourceVersion moves, the store is untouched.
struct advance_resource_version {
  std::string resource_version;
  bool operator==(const advance_resource_version&) const = default;
};

// Wait, then deliver timer_fired{session}.
struct schedule_retry {
  session_id session = 0;
  std::chrono::milliseconds delay{0};
  restart_reason reason = restart_reason::initial;
  bool operator==(const schedule_retry&) const = default;
};

// The first complete snapshot is in the store (HasSynced). Emitted once.
struct mark_synced {
  bool operator==(const mark_synced&) const = default;
};

using watcher_action =
    std::variant<start_list, fetch_next_page, begin_replace, add_to_replace, complete_replace,
                 abort_replace, start_watch, stop_io, apply_event, advance_resource_version,
                 schedule_retry, mark_synced>;

// One line for logs and test failure messages: "start_list session=1 rv=0 limit=500 initial".
std::string describe(const watcher_action& action);

// ---- states ----

// What every state carries along.
struct watcher_context {
  std::string last_resource_version; // what the store reflects; "" before the first list
  // client-go's isLastSyncResourceVersionUnavailable: relist with "" (a consistent read).
  bool resource_version_unavailable = false;
  bool server_paginates = false; // the first list came back in pages: keep paging relists
  bool streaming = false;        // streaming lists enabled and not (yet) refused
  bool synced = false;
  session_id last_session = 0; // the id most recently handed out
  int request_retries = 0;     // request-level retries of the request in flight
  bool operator==(const watcher_context&) const = default;
};

// Not started.
struct idle : watcher_context {
  bool operator==(const idle&) const = default;
};

// A paged LIST is in flight.
struct listing : watcher_context {
  session_id session = 0;
  std::string resource_version; // what the first page was requested at
  std::optional<std::int64_t> limit;
  bool replace_begun = false; // a page arrived, so a failure must abort the snapshot
  restart_reason reason = restart_reason::initial;
  std::string continue_token{}; // of the page in flight; empty: the first page
  bool retry_pending = false;   // waiting for timer_fired{session} to fetch that page again
  bool operator==(const listing&) const = default;
};

// A streaming list: a watch with sendInitialEvents, collecting the snapshot until the
// initial-events-end bookmark.
struct streaming_list : watcher_context {
  session_id session = 0;
  bool replace_begun = false;
  restart_reason reason = restart_reason::initial;
  bool operator==(const streaming_list&) const = default;
};

// A watch from last_resource_version is open (or being opened).
struct watching : watcher_context {
  session_id session = 0;
  bool operator==(const watching&) const = default;
};

// Waiting for timer_fired{session}, then relisting or re-watching.
struct backing_off : watcher_context {
  enum class then { relist, rewatch };
  session_id session = 0;
  then next = then::relist;
  restart_reason reason = restart_reason::initial;
  bool operator==(const backing_off&) const = default;
};

using watcher_state = std::variant<idle, listing, streaming_list, watching, backing_off>;

const watcher_context& context_of(const watcher_state& state);
const char* state_name(const watcher_state& state);

struct step_result {
  watcher_state next;
  std::vector<watcher_action> actions;
};

// The decision table. `backoff` supplies retry delays (and the random draw for timeoutSeconds);
// `now` is when the input happened.
step_result step(const watcher_state& state, const watcher_input& input,
                 const watcher_config& config, backoff& retry_backoff, watch_clock::time_point now);

} // namespace kinformer
