// The REST half of the simulator: request routing, list/get/write handling, discovery, Status
// bodies and control routes. See rest_handler.hpp.

#include "app/kubesim/rest_handler.hpp"

#include "app/apiserver/api_status.hpp"
#include "app/apiserver/discovery_docs.hpp"
#include "app/apiserver/json_string.hpp"
#include "app/apiserver/list_query.hpp"
#include "app/apiserver/openapi_docs.hpp"
#include "app/apiserver/request_path.hpp"
#include "app/apiserver/response_form.hpp"

#include <boost/json.hpp>

#include <optional>

namespace kinformer::sim {

namespace json = boost::json;

simple_reply status_reply(const status& s) {
  simple_reply r;
  r.code = s.code > 0 ? static_cast<unsigned>(s.code) : 500;
  r.body = apiserver::status_json(s);
  if (s.retry_after_seconds)
    r.headers.push_back({"Retry-After", std::to_string(*s.retry_after_seconds)});
  return r;
}

namespace {

simple_reply json_reply(std::string body, unsigned code = 200) {
  simple_reply r;
  r.code = code;
  r.body = std::move(body);
  return r;
}

status method_not_allowed() {
  return apiserver::make_failure(405, "MethodNotAllowed",
                                 "the server does not allow this method on the requested resource");
}

// The shape the Accept header asks for (app/apiserver/response_form.hpp; the simulator renders
// no tables, so kubectl gets its plain JSON fallback); nullopt: 406.
std::optional<apiserver::response_shape> shape_for(const api_request& req,
                                                   apiserver::request_verb verb) {
  return apiserver::negotiate_shape(req.accept, verb, false);
}

status not_acceptable() {
  return apiserver::make_failure(406, "NotAcceptable",
                                 std::string(apiserver::not_acceptable_message));
}

reply list_objects(storage& store, const resource_info& info, const apiserver::resource_path& path,
                   apiserver::list_query query, const api_request& req) {
  list_request request;
  request.gvr = info.gvr;
  request.namespace_ = path.namespace_;
  request.labels = std::move(query.labels);
  request.fields = std::move(query.fields);
  request.limit = static_cast<std::int64_t>(query.limit);
  request.continue_token = std::move(query.continue_token);
  request.resource_version = std::move(query.resource_version);
  request.match = query.match;
  auto shape = shape_for(req, apiserver::request_verb::list);
  if (!shape)
    return status_reply(not_acceptable());
  request.metadata_only = shape == apiserver::response_shape::partial_metadata;
  auto listed = store.list(request);
  if (!listed)
    return status_reply(listed.failure());

  list_reply out;
  std::string kind = request.metadata_only ? "PartialObjectMetadataList" : info.list_kind();
  std::string api_version = request.metadata_only ? "meta.k8s.io/v1" : info.gvr.gv().api_version();
  out.head = "{\"kind\":\"" + kind + "\",\"apiVersion\":\"" + api_version +
             "\",\"metadata\":{\"resourceVersion\":\"" + std::to_string(listed->resource_version) +
             "\"";
  if (!listed->continue_token.empty())
    out.head += ",\"continue\":" + apiserver::json_string(listed->continue_token);
  if (listed->remaining_item_count)
    out.head += ",\"remainingItemCount\":" + std::to_string(*listed->remaining_item_count);
  out.head += "},\"items\":[";
  out.items.reserve(listed->items.size());
  for (auto& item : listed->items)
    out.items.push_back(std::move(item.json));
  out.tail = "]}\n";
  return out;
}

reply watch_objects(const resource_info& info, const apiserver::resource_path& path,
                    apiserver::list_query query, const api_request& req,
                    const simulator_options& sim_options) {
  watch_request request;
  request.send_initial_events = query.send_initial_events;
  request.gvr = info.gvr;
  request.namespace_ = path.namespace_;
  request.labels = std::move(query.labels);
  request.fields = std::move(query.fields);
  request.resource_version = std::move(query.resource_version);
  request.match = query.match;
  request.allow_bookmarks = query.allow_bookmarks;
  auto shape = shape_for(req, apiserver::request_verb::watch);
  if (!shape)
    return status_reply(not_acceptable());
  request.metadata_only = shape == apiserver::response_shape::partial_metadata;
  auto seconds = query.timeout_seconds && *query.timeout_seconds > 0
                     ? std::chrono::seconds(*query.timeout_seconds)
                     : sim_options.default_watch_timeout;
  return watch_reply{std::move(request), seconds};
}

simple_reply object_reply(const stored_object& stored, const api_request& req,
                          unsigned code = 200) {
  auto shape = shape_for(req, apiserver::request_verb::get);
  if (!shape)
    return status_reply(not_acceptable());
  if (shape == apiserver::response_shape::partial_metadata)
    return json_reply(stored.object->partial_metadata_json(), code);
  return json_reply(*stored.json, code);
}

reply api_reply(const api_result<stored_object>& result, const api_request& req,
                unsigned code = 200) {
  if (!result)
    return status_reply(result.failure());
  return object_reply(result.value(), req, code);
}

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
reply delete_collection(storage& store, const resource_info& info,
                        const apiserver::resource_path& path,
                        const apiserver::request_target& target, write_options write) {
  auto query = apiserver::parse_list_query(target, false);
  if (auto* failure = std::get_if<status>(&query))
    return status_reply(*failure);
  auto& options = std::get<apiserver::list_query>(query);
  list_request request;
  request.gvr = info.gvr;
  request.namespace_ = path.namespace_;
  request.labels = std::move(options.labels);
  request.fields = std::move(options.fields);
  auto listed = store.list(request);
  if (!listed)
    return status_reply(listed.failure());
  list_reply out;
  for (const auto& item : listed->items) {
    auto removed =
        store.remove(info.gvr, item.object->meta().namespace_, item.object->meta().name, {}, write);
    if (removed) // a concurrent delete is not an error here
      out.items.push_back(removed->json);
  }
  out.head = "{\"kind\":\"" + info.list_kind() + "\",\"apiVersion\":\"" +
             info.gvr.gv().api_version() + "\",\"metadata\":{\"resourceVersion\":\"" +
             std::to_string(store.current_resource_version()) + "\"},\"items\":[";
  out.tail = "]}\n";
  return out;
}

reply serve_resource(storage& store, const simulator_options& options,
                     const apiserver::request_target& target, const apiserver::resource_path& path,
                     const api_request& req) {
  group_version_resource gvr{path.group, path.version, path.resource};
  auto info = store.find_resource(gvr);
  if (!info)
    return status_reply(apiserver::resource_not_found());
  bool namespaced = info->scope == resource_scope::namespaced;
  if (!namespaced && !path.namespace_.empty())
    return status_reply(apiserver::resource_not_found());
  // A namespaced object is only addressable inside its namespace.
  if (namespaced && path.namespace_.empty() && !path.name.empty())
    return status_reply(apiserver::resource_not_found());
  if (!path.subresource.empty() && (path.subresource != "status" || !info->status_subresource))
    return status_reply(apiserver::resource_not_found());

  const std::string_view method = req.method;
  const bool writes =
      method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
  write_options write;
  if (writes) {
    if (auto failure = store.take_write_failure())
      return status_reply(*failure);
    auto parsed = parse_write_options(target, method == "POST"     ? "CreateOptions"
                                              : method == "DELETE" ? "DeleteOptions"
                                              : method == "PUT"    ? "UpdateOptions"
                                                                   : "PatchOptions");
    if (!parsed)
      return status_reply(parsed.failure());
    write = parsed.value();
    write.part = path.subresource == "status" ? write_part::status : write_part::main;
  }
  if (path.name.empty()) {
    if (!path.subresource.empty())
      return status_reply(apiserver::resource_not_found());
    if (method == "GET") {
      auto query = apiserver::parse_list_query(target, path.watch_prefix);
      if (auto* failure = std::get_if<status>(&query))
        return status_reply(*failure);
      auto& parsed = std::get<apiserver::list_query>(query);
      if (parsed.watch)
        return watch_objects(*info, path, std::move(parsed), req, options);
      return list_objects(store, *info, path, std::move(parsed), req);
    }
    if (path.watch_prefix)
      return status_reply(method_not_allowed());
    if (method == "POST") {
      if (namespaced && path.namespace_.empty())
        return status_reply(method_not_allowed());
      if (!is_json_media_type(req.content_type))
        return status_reply(apiserver::unsupported_media_type(req.content_type));
      return api_reply(store.create(gvr, path.namespace_, req.body, write), req, 201);
    }
    if (method == "DELETE")
      return delete_collection(store, *info, path, target, write);
    return status_reply(method_not_allowed());
  }

  if (path.watch_prefix)
    return status_reply(method_not_allowed()); // watching one object by name is not supported
  if (method == "GET")
    return api_reply(store.get(gvr, path.namespace_, path.name), req);
  if (method == "PUT") {
    if (!is_json_media_type(req.content_type))
      return status_reply(apiserver::unsupported_media_type(req.content_type));
    return api_reply(store.update(gvr, path.namespace_, path.name, req.body, write), req);
  }
  if (method == "PATCH") {
    auto type = req.content_type.substr(0, req.content_type.find(';'));
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
      return status_reply(apiserver::unsupported_media_type(req.content_type));
    return api_reply(store.patch(gvr, path.namespace_, path.name, patch, req.body, write), req);
  }
  if (method == "DELETE" && path.subresource.empty()) {
    auto options = parse_delete_options(req.body);
    if (!options)
      return status_reply(options.failure());
    write.dry_run = write.dry_run || options->dry_run;
    return api_reply(
        store.remove(gvr, path.namespace_, path.name, options->expected_resource_version, write),
        req);
  }
  return status_reply(method_not_allowed());
}

} // namespace

rest_handler::rest_handler(storage& store, const simulator_options& options)
    : store_(store), options_(options) {}

void rest_handler::set_server_address(std::string address) {
  server_address_ = std::move(address);
}

void rest_handler::add_control_route(std::string prefix, control_handler handler) {
  std::lock_guard lock(routes_mutex_);
  routes_[std::move(prefix)] = std::move(handler);
}

reply rest_handler::serve_control(const std::string& path,
                                  const std::map<std::string, std::string>& query,
                                  const api_request& req) {
  control_handler handler;
  {
    std::lock_guard lock(routes_mutex_);
    std::size_t best = 0;
    for (const auto& [prefix, h] : routes_) {
      if (path.compare(0, prefix.size(), prefix) == 0 && prefix.size() > best) {
        best = prefix.size();
        handler = h;
      }
    }
  }
  if (!handler)
    return status_reply(apiserver::resource_not_found());
  control_request request{std::string(req.method), path, query, req.body};
  control_response response = handler(request);
  simple_reply out;
  out.code = static_cast<unsigned>(response.status);
  out.content_type = std::move(response.content_type);
  out.body = std::move(response.body);
  return out;
}

// /openapi/v2, /openapi/v3 and /openapi/v3/{api/v1 | apis/{group}/{version}}.
reply rest_handler::serve_openapi(const std::vector<std::string>& segments,
                                  std::string_view accept) const {
  auto resources = store_.resources();
  if (segments.size() == 2 && segments[1] == "v2") {
    // client-go asks for protobuf only; this server speaks JSON (its v3 documents are what
    // kubectl uses).
    if (!accept.empty() && accept.find("json") == std::string_view::npos &&
        accept.find("*/*") == std::string_view::npos)
      return status_reply(apiserver::make_failure(406, "NotAcceptable",
                                                  "only the following media types are accepted: "
                                                  "application/json"));
    return json_reply(apiserver::openapi_v2_document(resources, options_.git_version));
  }
  if (segments.size() >= 2 && segments[1] == "v3") {
    if (segments.size() == 2)
      return json_reply(apiserver::openapi_v3_index(resources));
    std::optional<std::string> doc;
    if (segments.size() == 4 && segments[2] == "api")
      doc = apiserver::openapi_v3_document(resources, "", segments[3]);
    else if (segments.size() == 5 && segments[2] == "apis")
      doc = apiserver::openapi_v3_document(resources, segments[3], segments[4]);
    if (doc)
      return json_reply(std::move(*doc));
  }
  return status_reply(apiserver::resource_not_found());
}

reply rest_handler::handle(const api_request& req) {
  auto target = apiserver::parse_target(req.target);
  if (!target)
    return status_reply(apiserver::bad_request(target.err().message));
  apiserver::route r = apiserver::classify(target->segments);

  bool needs_token =
      r.kind != apiserver::route_kind::control && r.kind != apiserver::route_kind::health;
  if (needs_token && !options_.token.empty() && !req.client_certificate &&
      req.authorization != "Bearer " + options_.token)
    return status_reply(apiserver::make_failure(401, "Unauthorized", "Unauthorized"));

  bool is_get = req.method == "GET";
  if (r.kind == apiserver::route_kind::resource && req.method == "POST" &&
      r.resource.name.empty() && r.resource.namespace_.empty()) {
    const auto& path = r.resource;
    if (path.group == "authentication.k8s.io" && path.version == "v1" &&
        path.resource == "tokenreviews") {
      auto answer = token_review(req.body, options_.review_users);
      return answer ? reply(json_reply(std::move(*answer), 201))
                    : reply(status_reply(answer.failure()));
    }
    if (path.group == "authorization.k8s.io" && path.version == "v1" &&
        path.resource == "subjectaccessreviews") {
      auto answer = subject_access_review(req.body, options_.review_grants);
      return answer ? reply(json_reply(std::move(*answer), 201))
                    : reply(status_reply(answer.failure()));
    }
  }
  switch (r.kind) {
  case apiserver::route_kind::resource:
    return serve_resource(store_, options_, *target, r.resource, req);
  case apiserver::route_kind::control:
    return serve_control(target->path, target->query, req);
  case apiserver::route_kind::health: {
    simple_reply ok;
    ok.content_type = "text/plain; charset=utf-8";
    ok.body = "ok";
    return is_get ? reply(ok) : reply(status_reply(method_not_allowed()));
  }
  case apiserver::route_kind::openapi:
    return is_get ? serve_openapi(target->segments, req.accept)
                  : reply(status_reply(method_not_allowed()));
  case apiserver::route_kind::unknown:
    return status_reply(apiserver::resource_not_found());
  default:
    break;
  }
  // Discovery documents.
  if (!is_get)
    return status_reply(method_not_allowed());
  auto resources = store_.resources();
  std::optional<std::string> doc;
  switch (r.kind) {
  case apiserver::route_kind::version:
    doc = apiserver::version_document(options_.git_version);
    break;
  case apiserver::route_kind::core_versions:
    doc = apiserver::core_versions_document(server_address_);
    break;
  case apiserver::route_kind::group_list:
    doc = apiserver::group_list_document(resources);
    break;
  case apiserver::route_kind::group:
    doc = apiserver::group_document(resources, r.group);
    break;
  case apiserver::route_kind::resource_list:
    doc = apiserver::resource_list_document(resources, r.group, r.version);
    break;
  default:
    break;
  }
  if (!doc)
    return status_reply(apiserver::resource_not_found());
  return json_reply(std::move(*doc));
}

} // namespace kinformer::sim
