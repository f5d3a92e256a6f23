#pragma once
// The HTTP/1.1 client to the API server: list, watch and get, plain or TLS.
//
// One api_client owns one I/O thread running an Asio io_context (blocking network work never
// runs on actor threads). Every public member is thread-safe; every callback runs on that I/O
// thread, so callbacks must be short (hand the result on, e.g. with caf::anon_send) and must
// not call get_sync(). Responses are parsed once, on the I/O thread, with the decoders of
// protocol/decode.hpp; only object_ptr values leave.
//
// Lists and gets may reuse keep-alive connections; every watch gets its own connection, is
// read one line at a time (never buffered whole), and is flow-controlled by explicit credit:
// each delivered event spends one credit and at zero credit the client stops reading the socket,
// so TCP pushes back on the server.
//
// Bearer tokens come from `token`, or from `token_file`, re-read when its modification time
// changes (checked at most once per `token_recheck_interval`, and on every 401: bound service
// account tokens rotate). A 401 on a list or get is retried once when the token changed. With
// an exec credential plugin (connection_config::exec) its credential is used instead, and the
// plugin runs again after a 401. A CA given as a file is reloaded when the file changes
// (checked as a new connection opens, at most once per `token_recheck_interval`, and at once
// after a failed TLS handshake): new connections trust the new bundle.
//
// Destroying the client cancels every request (lists and gets complete with errc::cancelled,
// watches close with watch_close_reason::cancelled), waits for those callbacks, and joins the
// I/O thread. Handles may outlive the client; their calls then do nothing.

#include "protocol/decode.hpp"
#include "protocol/kube_config.hpp"
#include "protocol/object.hpp"
#include "protocol/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kinformer {

// The Kubernetes verb of a request (not its HTTP method: list, watch and get are GETs; create
// is a POST, update a PUT, patch a PATCH, delete a DELETE).
enum class api_verb { list, watch, get, create, update, patch, delete_ };
const char* to_string(api_verb verb) noexcept;

// One HTTP request the client finished, for metrics ("API requests by verb and code").
struct request_record {
  api_verb verb = api_verb::get;
  int http_status = 0; // 0 when no response arrived (I/O, TLS, timeout, cancelled)
  // A list or get: until its body is read. A watch: until its response header arrived (the
  // stream that follows is not request latency), or until it failed.
  std::chrono::steady_clock::duration duration{};
};

// Sees every request once: each list and get attempt (a retry after a 401 with a rotated token
// is a second request) and each watch, when its response header arrives or it fails before
// one. Runs on the client's I/O thread, one call at a time per client, so it must be cheap
// (bump a counter) and must not throw; it may run while the client is being destroyed, so what
// it refers to must outlive the client.
using request_observer = std::function<void(const request_record&)>;

struct client_options {
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)}; // TCP connect + TLS
  // Bound on a whole list/get exchange, and on a watch's response header.
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
  std::chrono::milliseconds token_recheck_interval{std::chrono::seconds(60)};
  // A get body, or one list item, larger fails as too_large (a list body is never held whole,
  // so it has no limit of its own).
  std::size_t max_body_bytes = std::size_t{1} << 30;
  std::size_t max_idle_connections = 4; // kept-alive connections for lists and gets
  std::string user_agent = "kinformer/0.1";
  request_observer on_request; // empty: nothing observed
};

// What the server said about a request beyond its body.
// How a request failed below HTTP, from the socket's error code (never from message text).
enum class transport_failure {
  none,
  refused, // the connection was never established: nothing listens there
  reset,   // reset, or closed by the peer before the response ended (EOF, broken pipe)
};

struct response_info {
  int http_status = 0; // 0 when no response arrived (I/O, TLS, timeout)
  transport_failure transport = transport_failure::none;
  std::optional<status> server_status; // the decoded Status, when a failure carried one
  // The Retry-After header (seconds or an HTTP-date, see protocol/retry_after.hpp), else
  // details.retryAfterSeconds; both held to [0, max_retry_after].
  std::optional<int> retry_after_seconds;
};

struct http_response {
  int status_code = 0;
  std::string content_type;
  std::optional<int> retry_after_seconds;
  std::string body;
};

// A request that writes: create, update, patch or delete (protocol/resource_writer.hpp builds
// them for objects). Non-2xx answers are responses, not errors, as for get.
struct write_request {
  api_verb verb = api_verb::create; // create, update, patch or delete_
  std::string target;               // path and query, below the server's base path
  std::string content_type;         // of `body`; "application/json" when empty
  std::string body;                 // may be empty for a delete
};

struct list_request {
  std::string path; // "/api/v1/pods", "/apis/apps/v1/namespaces/ns/deployments"
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;       // "" (consistent read), "0" (watch cache) or a version
  std::string resource_version_match; // "", "NotOlderThan", "Exact"
  std::string continue_token;
  std::int64_t limit = 0;     // 0: no paging
  bool metadata_only = false; // ask for PartialObjectMetadataList
  // Must outlive the request, and may be called on the decode thread while a watch calls it on
  // the I/O thread: it must not keep state of its own.
  const object_transform* transform = nullptr;
  // Checked on every item (protocol/object_check.hpp); must outlive the request. A failing item
  // fails the list with errc::invalid_object.
  const object_expectations* expect = nullptr;
  // Optional: items are handed here in batches, on the decode thread, as they are decoded (once
  // at least on_items_batch have come; a socket read holds about 70 pods); the page given to
  // the list callback then carries only the last few. A list that fails after some batches
  // still ends in one callback with the error.
  std::function<void(std::vector<object_ptr>&&)> on_items;
  // Fewer, larger batches wake the receiver less often. With 1000, a page of client-go's 500
  // goes on whole at its end, as it did before items streamed: handing on half pages as well
  // raised kinformer-watch's context switches in a 100,000-pod sync from 1,852 to 13,696 and
  // its CPU from 0.64 to 0.76 s, for the same wall time. An unpaged list streams in 1000s.
  std::size_t on_items_batch = 1000;
  // Optional: called once, on the decode thread, with the continue token the List gives before
  // its items (the API server writes metadata first), as soon as the items begin; not called
  // when there is none. A pager can then ask for the next page while this one still arrives.
  std::function<void(const std::string&)> on_continue;
  // The items go into memory the process has not used yet (an informer's first list): the
  // decode thread maps the heap in ahead of them, a window at a time (protocol/prefault.hpp).
  // (Measured: prefault.hpp.) Not for a relist, whose objects mostly fill chunks freed between
  // live ones.
  bool into_fresh_memory = false;
  // Optional: what the caller holds of these objects, filled in while the list runs (an
  // informer's store, during a relist; protocol/held_objects.hpp). An item at the same
  // resourceVersion as the held object so named comes back as that object, not a new one.
  std::shared_ptr<const held_objects_slot> held;
  // Optional: items keep their text compressed once it has a dictionary (object_packer.hpp);
  // shared with the watch requests of the same informer.
  std::shared_ptr<object_packer> packer;
};

// Exactly one call per list, on the client's decode thread once a body came (after its last
// on_items batch), else on its I/O thread. On failure `page` holds the error (errc::status for an
// HTTP or Status failure, io, tls, timeout, too_large, invalid_json, cancelled) and `info` the HTTP
// code and decoded Status, so 410 Expired, 429, 504 ResourceVersionTooLarge and 5xx can be told
// apart from I/O failures.
using list_callback = std::function<void(result<list_page> page, const response_info& info)>;
using get_callback = std::function<void(result<http_response>)>;

inline constexpr std::size_t unlimited_credit = std::numeric_limits<std::size_t>::max();

struct watch_request {
  std::string path;
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  std::string resource_version_match;
  bool allow_watch_bookmarks = true;
  bool send_initial_events = false;
  int timeout_seconds = 0;                     // 0: the server's default
  bool metadata_only = false;                  // ask for PartialObjectMetadata events
  const object_transform* transform = nullptr; // must outlive the watch
  // Checked on every event's object; must outlive the watch. A failing event closes the watch
  // with watch_close_reason::decode_error before it is delivered.
  const object_expectations* expect = nullptr;
  std::size_t max_line_bytes = std::size_t{16} << 20;
  std::size_t initial_credit = unlimited_credit; // events deliverable before add_credit
  // Close with watch_close_reason::idle_timeout when no byte arrives for this long while the
  // client is reading (a paused watch never times out). Zero: no idle timeout.
  std::chrono::milliseconds idle_timeout{0};
  // Optional: objects keep their text compressed once it has a dictionary (object_packer.hpp).
  std::shared_ptr<object_packer> packer;
};

enum class watch_close_reason {
  end_of_stream,  // the server ended the response cleanly (timeoutSeconds elapsed, ...)
  http_error,     // a non-200 answer; see `response`
  io_error,       // connect failure, reset, connection closed mid-stream
  tls_error,      // handshake or certificate verification failed
  timeout,        // connect or response header timed out
  idle_timeout,   // no bytes for watch_request::idle_timeout
  line_too_large, // a line longer than max_line_bytes
  decode_error,   // a line that is not a watch event
  cancelled,      // watch_handle::cancel() or client shutdown
};
const char* to_string(watch_close_reason reason) noexcept;

struct watch_closed_info {
  watch_close_reason reason = watch_close_reason::end_of_stream;
  std::string message;    // human-readable detail
  response_info response; // for http_error: code, Status, Retry-After
  std::uint64_t events_delivered = 0;
};

struct watch_callbacks {
  std::function<void(watch_event&&)> on_event;             // one call per line, in order
  std::function<void(const watch_closed_info&)> on_closed; // exactly one call, after the last event
  // Instead of on_event when set: the events of one socket read at a time, in order (a consumer
  // that hands events to another thread then wakes it once per read, not once per event).
  std::function<void(std::vector<watch_event>&&)> on_events;
};

struct watch_control; // shared by a handle and its stream; defined in api_client.cpp

// Refers to one running watch. Copyable; every member is thread-safe and a no-op once the
// watch is closed or the client is gone.
class watch_handle {
public:
  watch_handle() = default;

  std::uint64_t id() const noexcept;
  // Stops the watch: no on_event call starts after cancel() returns; on_closed(cancelled)
  // follows unless the watch had already closed.
  void cancel() const;
  // Allows `n` more events. A paused watch resumes reading.
  void add_credit(std::size_t n) const;
  // For stall detection by the caller.
  std::uint64_t bytes_received() const noexcept;
  std::chrono::steady_clock::time_point last_activity() const noexcept;
  bool closed() const noexcept;

  explicit operator bool() const noexcept { return control_ != nullptr; }

private:
  friend class api_client;
  explicit watch_handle(std::shared_ptr<watch_control> control) : control_(std::move(control)) {}
  std::shared_ptr<watch_control> control_;
};

class api_client {
public:
  // Validates `config` (server URL, TLS material) and starts the I/O thread.
  static result<std::unique_ptr<api_client>> create(const connection_config& config,
                                                    const client_options& options = {});
  ~api_client();
  api_client(const api_client&) = delete;
  api_client& operator=(const api_client&) = delete;

  void list(const list_request& request, list_callback callback);
  watch_handle watch(const watch_request& request, watch_callbacks callbacks);
  // Any GET (discovery, single objects). Non-2xx answers are responses, not errors.
  void get(const std::string& path, const std::string& accept, get_callback callback);
  // Blocking get, for discovery at start-up and tests. Never call it from a callback.
  result<http_response> get_sync(const std::string& path,
                                 const std::string& accept = "application/json");
  // A write. A create or patch that fails after it was sent on a kept-alive connection is not
  // sent again (the server may have applied it); an update or delete is, as a get is.
  void write(const write_request& request, get_callback callback);
  // Blocking write. Never call it from a callback.
  result<http_response> write_sync(const write_request& request);
  // get_sync for a document that must be there (discovery): the body of a 200, else an error
  // naming the path and the status.
  result<std::string> get_document_sync(const std::string& path);

  // The request target a list or watch request is sent to (path plus query string).
  std::string list_target(const list_request& request) const;
  std::string watch_target(const watch_request& request) const;

private:
  struct impl;
  explicit api_client(std::unique_ptr<impl> state);
  std::unique_ptr<impl> impl_;
};

} // namespace kinformer
