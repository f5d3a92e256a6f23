// The simulator's backend of the front end: reads from the storage, writes, access reviews.
// See storage_backend.hpp.

#include "app/kubesim/storage_backend.hpp"

#include "app/apiserver/api_status.hpp"
#include "app/apiserver/http_server.hpp"
#include "app/apiserver/list_query.hpp"
#include "app/apiserver/request_path.hpp"
#include "app/apiserver/resource_answer.hpp"
#include "app/apiserver/watch_event.hpp"
#include "app/apiserver/watch_shaper.hpp"
#include "app/kubesim/access_reviews.hpp"

#include <boost/json.hpp>

#include <condition_variable>
#include <mutex>

namespace kinformer::sim {

namespace json = boost::json;

namespace {

apiserver::http_response failure(const status& s) {
  return apiserver::failure_response(s);
}

// A write's answer: the object, in the shape Accept asks for (PartialObjectMetadata for
// metadata clients; the simulator renders no Table for a write, kubectl reads the object).
apiserver::http_response written(const api_result<stored_object>& result,
                                 const apiserver::http_request& request, int code = 200) {
  if (!result)
    return failure(result.failure());
  auto shape = apiserver::negotiate_shape(request.header("accept").value_or(""),
                                          apiserver::request_verb::get, false);
  if (!shape)
    return failure(apiserver::make_failure(406, "NotAcceptable",
                                           std::string(apiserver::not_acceptable_message)));
  apiserver::resource_request shown;
  shown.shape = *shape;
  return apiserver::object_response(shown, {result->object, false}, code);
}

// A Table watch's lines, made from each event's object (the storage shares lines of objects and
// of PartialObjectMetadata between its watchers; a Table's first event alone has its columns).
class table_watch {
public:
  explicit table_watch(apiserver::resource_request r) : request_(std::move(r)) {}
  table_watch(const table_watch&) = delete; // the shaper refers to request_
  table_watch& operator=(const table_watch&) = delete;

  apiserver::byte_pieces line(const watch_message& message) {
    if (message.type == event_type::bookmark)
      return apiserver::byte_pieces(shaper_.bookmark_line(std::to_string(message.resource_version),
                                                          message.initial_events_end));
    return shaper_.event_line(message.type, message.object);
  }

private:
  apiserver::resource_request request_;
  apiserver::watch_shaper shaper_{request_, false};
};

// What a watch's stream and the storage's writer share while storage::watch() replays: the events
// wait here until the stream is opened (only a watch that starts gets its 200), then go straight
// to the stream, in order. A Table watch renders its rows; the replay's, when the stream opens,
// outside the storage's lock (a sink runs under it and must be cheap).
struct watch_pipe {
  std::mutex mutex;
  std::shared_ptr<apiserver::http_stream> stream;
  std::vector<watch_message> waiting;
  std::shared_ptr<table_watch> table; // null: the storage's own lines

  apiserver::byte_pieces line(const watch_message& message) {
    return table ? table->line(message) : apiserver::byte_pieces(message.line);
  }
  void deliver(const watch_message& message) {
    std::lock_guard lock(mutex);
    if (stream)
      stream->write(line(message));
    else
      waiting.push_back(message);
  }
  // Writes what waited, batch by batch without the lock (events delivered meanwhile wait for the
  // next batch), then lets deliveries write straight to the stream.
  void open(const std::shared_ptr<apiserver::http_stream>& opened) {
    for (;;) {
      std::vector<watch_message> batch;
      {
        std::lock_guard lock(mutex);
        if (waiting.empty()) {
          stream = opened;
          return;
        }
        batch.swap(waiting);
      }
      for (const auto& message : batch)
        opened->write(line(message));
    }
  }
};

bool is_json_media_type(std::string_view content_type) {
  return content_type.empty() || content_type.find("json") != std::string_view::npos;
}

// The dryRun query parameter of a write: absent, or "All" (the only value the server knows).
api_result<write_options> parse_write_options(const apiserver::request_target& target,
                                              std::string_view options_kind) {
  write_options out;
  if (auto manager = target.param("fieldManager"))
    out.field_manager = std::string(*manager);
  if (auto force = target.param("force"); force && *force == "true")
    out.force = true;
  auto dry_run = target.param("dryRun");
  if (!dry_run)
    return out;
  if (*dry_run != "All")
    return apiserver::make_failure(
        422, "Invalid",
        std::string(options_kind) + ".meta.k8s.io \"\" is invalid: dryRun[0]: " +
            "Unsupported value: \"" + std::string(*dry_run) + "\": supported values: \"All\"");
  out.dry_run = true;
  return out;
}

// What a DELETE's DeleteOptions body asks: preconditions.resourceVersion and dryRun.
struct delete_options {
  std::string expected_resource_version;
  bool dry_run = false;
};

api_result<delete_options> parse_delete_options(const std::string& body) {
  delete_options out;
  if (body.empty())
    return out;
  boost::system::error_code ec;
  auto value = json::parse(body, ec);
  if (ec || !value.is_object())
    return apiserver::bad_request(
        "the body of the request was in an unknown format - accepted media types "
        "include: application/json, application/yaml");
  const auto& o = value.get_object();
  if (auto* pre = o.if_contains("preconditions"); pre && pre->is_object())
    if (auto* rv = pre->get_object().if_contains("resourceVersion"); rv && rv->is_string())
      out.expected_resource_version = std::string(rv->get_string());
  if (auto* dry = o.if_contains("dryRun"); dry && dry->is_array())
    for (const auto& v : dry->get_array())
      if (v.is_string() && v.get_string() == "All")
        out.dry_run = true;
  return out;
}

// DELETE on a collection: deletes what the selectors match and answers the deleted objects.
apiserver::http_response delete_collection(storage& store, const resource_info& info,
                                           const apiserver::resource_path& path,
                                           const apiserver::request_target& target,
                                           write_options write) {
  auto query = apiserver::parse_list_query(target, false);
  if (auto* failure = std::get_if<status>(&query))
    return apiserver::failure_response(*failure);
  auto& options = std::get<apiserver::list_query>(query);
  list_request request;
  request.gvr = info.gvr;
  request.namespace_ = path.namespace_;
  request.labels = std::move(options.labels);
  request.fields = std::move(options.fields);
  auto listed = store.list(request);
  if (!listed)
    return apiserver::failure_response(listed.failure());
  auto removed_items = std::make_shared<std::vector<object_ptr>>();
  for (const auto& item : listed->items) {
    auto removed =
        store.remove(info.gvr, item.object->meta().namespace_, item.object->meta().name, {}, write);
    if (removed) // a concurrent delete is not an error here
      removed_items->push_back(removed->object);
  }
  apiserver::resource_request shown;
  shown.info = info;
  shown.verb = apiserver::request_verb::list;
  apiserver::list_answer answer;
  answer.items = *removed_items;
  answer.owner = removed_items;
  answer.resource_version = std::to_string(store.current_resource_version());
  return apiserver::list_response(shown, std::move(answer));
}

} // namespace

struct storage_backend::watch_count {
  mutable std::mutex mutex;
  mutable std::condition_variable changed;
  std::size_t count = 0;

  void add(int delta) {
    {
      std::lock_guard lock(mutex);
      count = delta < 0 ? count - 1 : count + 1;
    }
    changed.notify_all();
  }
};

storage_backend::storage_backend(storage& store, const simulator_options& options)
    : store_(store), options_(options), live_watches_(std::make_shared<watch_count>()) {}

std::size_t storage_backend::live_watches() const {
  std::lock_guard lock(live_watches_->mutex);
  return live_watches_->count;
}

bool storage_backend::wait_for_live_watches(std::size_t count,
                                            std::chrono::milliseconds timeout) const {
  std::unique_lock lock(live_watches_->mutex);
  return live_watches_->changed.wait_for(lock, timeout,
                                         [&] { return live_watches_->count == count; });
}

std::vector<apiserver::resource_info> storage_backend::resources() const {
  return store_.resources();
}

std::string storage_backend::git_version() const {
  return options_.git_version;
}

void storage_backend::admit(const apiserver::http_request& request,
                            const apiserver::access_request&,
                            std::shared_ptr<apiserver::http_exchange> exchange,
                            apiserver::admitted next) {
  if (!options_.token.empty() && !request.client_certificate &&
      request.header("authorization").value_or("") != "Bearer " + options_.token)
    return exchange->respond(failure(apiserver::make_failure(401, "Unauthorized", "Unauthorized")));
  next(request, std::move(exchange));
}

void storage_backend::get(apiserver::resource_request request, apiserver::get_done done) {
  auto found = store_.get(request.info.gvr, request.namespace_, request.name);
  if (!found)
    return done(found.failure());
  done(apiserver::object_answer{found->object, false});
}

void storage_backend::list(apiserver::resource_request request, apiserver::list_done done) {
  list_request wanted;
  wanted.gvr = request.info.gvr;
  wanted.namespace_ = request.namespace_;
  wanted.labels = std::move(request.query.labels);
  wanted.fields = std::move(request.query.fields);
  wanted.limit = static_cast<std::int64_t>(request.query.limit);
  wanted.continue_token = std::move(request.query.continue_token);
  wanted.resource_version = std::move(request.query.resource_version);
  wanted.match = request.query.match;
  auto listed = store_.list(wanted);
  if (!listed)
    return done(listed.failure());
  auto items = std::make_shared<std::vector<object_ptr>>();
  items->reserve(listed->items.size());
  for (auto& item : listed->items)
    items->push_back(std::move(item.object));
  apiserver::list_answer answer;
  answer.items = *items;
  answer.owner = items;
  answer.resource_version = std::to_string(listed->resource_version);
  answer.continue_token = std::move(listed->continue_token);
  answer.remaining_item_count = listed->remaining_item_count;
  done(std::move(answer));
}

void storage_backend::watch(apiserver::resource_request request,
                            std::shared_ptr<apiserver::http_exchange> exchange) {
  watch_request wanted;
  wanted.gvr = request.info.gvr;
  wanted.namespace_ = request.namespace_;
  wanted.labels = request.query.labels;
  wanted.fields = request.query.fields;
  wanted.resource_version = request.query.resource_version;
  wanted.match = request.query.match;
  wanted.send_initial_events = request.query.send_initial_events;
  wanted.allow_bookmarks = request.query.allow_bookmarks;
  wanted.metadata_only = request.shape == apiserver::response_shape::partial_metadata;
  // timeoutSeconds=0 (or none) means the server's default, as the API server reads it.
  const auto timeout = request.query.timeout_seconds && *request.query.timeout_seconds > 0
                           ? std::chrono::seconds(*request.query.timeout_seconds)
                           : options_.default_watch_timeout;

  auto pipe = std::make_shared<watch_pipe>();
  if (request.shape == apiserver::response_shape::table)
    pipe->table = std::make_shared<table_watch>(std::move(request));
  auto handle =
      store_.watch(wanted, [pipe](const watch_message& message) { pipe->deliver(message); });
  if (!handle) {
    const status& refused = handle.failure();
    if (refused.code != 410)
      return exchange->respond(failure(refused));
    // Too old: 200, then the ERROR event, then the end of the stream (as the real server).
    auto stream = exchange->stream(200, "application/json");
    stream->write(apiserver::watch_event_line(event_type::error, apiserver::status_json(refused)));
    stream->close();
    return;
  }
  auto stream = exchange->stream(200, "application/json");
  pipe->open(stream);
  // The replay is written whatever its length; from now on a watcher that falls behind ends.
  stream->limit_queue(options_.watch_queue_limit);
  stream->close_after(timeout);
  auto watch = std::make_shared<watch_handle>(std::move(handle).value());
  live_watches_->add(1);
  stream->on_end([watch, live = live_watches_](apiserver::stream_end) {
    watch->stop();
    live->add(-1);
  });
}

void storage_backend::write(const apiserver::http_request& request,
                            const apiserver::request_target& target,
                            const apiserver::resource_path& path,
                            std::shared_ptr<apiserver::http_exchange> exchange) {
  auto answer = [&exchange](apiserver::http_response response) {
    exchange->respond(std::move(response));
  };
  const std::string_view method = request.method;
  const std::string_view content_type = request.header("content-type").value_or("");
  // The reviews kinformerd's read API asks for (access_reviews.hpp).
  if (method == "POST" && path.name.empty() && path.namespace_.empty()) {
    if (path.group == "authentication.k8s.io" && path.version == "v1" &&
        path.resource == "tokenreviews") {
      auto review = token_review(request.body, options_.review_users);
      return answer(review ? apiserver::json_response(std::move(*review), 201)
                           : failure(review.failure()));
    }
    if (path.group == "authorization.k8s.io" && path.version == "v1" &&
        path.resource == "subjectaccessreviews") {
      auto review = subject_access_review(request.body, options_.review_grants);
      return answer(review ? apiserver::json_response(std::move(*review), 201)
                           : failure(review.failure()));
    }
  }
  group_version_resource gvr{path.group, path.version, path.resource};
  auto info = store_.find_resource(gvr);
  if (!info)
    return answer(failure(apiserver::resource_not_found()));
  const bool namespaced = info->scope == resource_scope::namespaced;
  if ((!namespaced && !path.namespace_.empty()) ||
      (namespaced && path.namespace_.empty() && !path.name.empty()))
    return answer(failure(apiserver::resource_not_found()));
  if (!path.subresource.empty() && (path.subresource != "status" || !info->status_subresource))
    return answer(failure(apiserver::resource_not_found()));
  if (path.watch_prefix ||
      (method != "POST" && method != "PUT" && method != "PATCH" && method != "DELETE"))
    return answer(failure(apiserver::method_not_allowed()));

  if (auto armed = store_.take_write_failure())
    return answer(failure(*armed));
  auto parsed = parse_write_options(target, method == "POST"     ? "CreateOptions"
                                            : method == "DELETE" ? "DeleteOptions"
                                            : method == "PUT"    ? "UpdateOptions"
                                                                 : "PatchOptions");
  if (!parsed)
    return answer(failure(parsed.failure()));
  write_options write = parsed.value();
  write.part = path.subresource == "status" ? write_part::status : write_part::main;

  if (path.name.empty()) {
    if (!path.subresource.empty())
      return answer(failure(apiserver::resource_not_found()));
    if (method == "POST") {
      if (namespaced && path.namespace_.empty())
        return answer(failure(apiserver::method_not_allowed()));
      if (!is_json_media_type(content_type))
        return answer(failure(apiserver::unsupported_media_type(content_type)));
      return answer(
          written(store_.create(gvr, path.namespace_, request.body, write), request, 201));
    }
    if (method == "DELETE")
      return answer(delete_collection(store_, *info, path, target, write));
    return answer(failure(apiserver::method_not_allowed()));
  }

  if (method == "PUT") {
    if (!is_json_media_type(content_type))
      return answer(failure(apiserver::unsupported_media_type(content_type)));
    return answer(
        written(store_.update(gvr, path.namespace_, path.name, request.body, write), request));
  }
  if (method == "PATCH") {
    auto type = content_type.substr(0, content_type.find(';'));
    patch_type patch;
    if (type == "application/merge-patch+json")
      patch = patch_type::merge;
    else if (type == "application/strategic-merge-patch+json")
      patch = patch_type::strategic_merge;
    else if (type == "application/json-patch+json")
      patch = patch_type::json_patch;
    else if (type == "application/apply-patch+yaml")
      patch = patch_type::apply; // JSON bodies (as kubectl and client-go send them)
    else
      return answer(failure(apiserver::unsupported_media_type(content_type)));
    return answer(written(store_.patch(gvr, path.namespace_, path.name, patch, request.body, write),
                          request));
  }
  if (method == "DELETE" && path.subresource.empty()) {
    auto options = parse_delete_options(request.body);
    if (!options)
      return answer(failure(options.failure()));
    write.dry_run = write.dry_run || options->dry_run;
    return answer(written(
        store_.remove(gvr, path.namespace_, path.name, options->expected_resource_version, write),
        request));
  }
  answer(failure(apiserver::method_not_allowed()));
}

} // namespace kinformer::sim
