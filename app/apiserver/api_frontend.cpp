// The one API-server front end. See api_frontend.hpp.

#include "app/apiserver/api_frontend.hpp"

#include "app/apiserver/api_backend.hpp"
#include "app/apiserver/api_status.hpp"
#include "app/apiserver/discovery_docs.hpp"
#include "app/apiserver/field_labels.hpp"
#include "app/apiserver/openapi_docs.hpp"
#include "app/apiserver/request_path.hpp"
#include "app/apiserver/resource_answer.hpp"

#include <algorithm>

namespace kinformer::apiserver {

namespace {

// /openapi/v2, /openapi/v3 and /openapi/v3/{api/v1 | apis/{group}/{version}}.
http_response openapi_response(const std::vector<resource_info>& resources,
                               const std::vector<std::string>& segments, std::string_view accept,
                               const std::string& git_version) {
  if (segments.size() == 2 && segments[1] == "v2") {
    // client-go asks for protobuf only; this server speaks JSON (its v3 documents are what
    // kubectl uses).
    if (!accept.empty() && accept.find("json") == std::string_view::npos &&
        accept.find("*/*") == std::string_view::npos)
      return failure_response(make_failure(406, "NotAcceptable",
                                           "only the following media types are accepted: "
                                           "application/json"));
    return json_response(openapi_v2_document(resources, git_version));
  }
  std::optional<std::string> doc;
  if (segments.size() == 2 && segments[1] == "v3")
    doc = openapi_v3_index(resources);
  else if (segments.size() == 4 && segments[1] == "v3" && segments[2] == "api")
    doc = openapi_v3_document(resources, "", segments[3]);
  else if (segments.size() == 5 && segments[1] == "v3" && segments[2] == "apis")
    doc = openapi_v3_document(resources, segments[3], segments[4]);
  return doc ? json_response(std::move(*doc)) : failure_response(resource_not_found());
}

// What a request asks to do, for admission.
access_request wanted_access(const http_request& request, const request_target& target,
                             const route& route) {
  access_request wanted{"get", {}, {}, {}, {}, {}};
  if (route.kind != route_kind::resource)
    return wanted;
  const auto& path = route.resource;
  if (request.method == "GET") {
    // Read as ListOptions reads it (any case), so what is admitted is what is served.
    const auto watch_param = target.flag("watch");
    const bool watch = path.watch_prefix || (watch_param && *watch_param);
    wanted.verb = watch ? "watch" : path.name.empty() ? "list" : "get";
  } else { // the verbs a SubjectAccessReview names
    const std::string_view m = request.method;
    wanted.verb = m == "POST"     ? "create"
                  : m == "PUT"    ? "update"
                  : m == "PATCH"  ? "patch"
                  : m == "DELETE" ? (path.name.empty() ? "deletecollection" : "delete")
                                  : std::string(m);
  }
  wanted.group = path.group;
  wanted.version = path.version;
  wanted.resource = path.resource;
  wanted.namespace_ = path.namespace_;
  wanted.name = path.name;
  return wanted;
}

// What rendering an answer reads of its request: the kind and the shape, not the selectors the
// backend takes.
resource_request rendering_of(const resource_request& req) {
  resource_request shown;
  shown.info = req.info;
  shown.verb = req.verb;
  shown.shape = req.shape;
  shown.include = req.include;
  return shown;
}

// A backend's outcome answered on `exchange`: rendered by `render`, or the Status it failed with.
template <class Answer, class Render>
auto respond_with(std::shared_ptr<http_exchange> exchange, Render render) {
  return [exchange = std::move(exchange),
          render = std::move(render)](std::variant<Answer, status> outcome) {
    if (auto* failure = std::get_if<status>(&outcome))
      return exchange->respond(failure_response(*failure));
    exchange->respond(render(std::move(std::get<Answer>(outcome))));
  };
}

// The request's ListOptions (none for a get of one object: the API server's GetOptions ignore
// them) and its verb; a watch of one object is narrowed to it by name.
std::optional<status> read_options(const request_target& target, const resource_path& path,
                                   resource_request& req) {
  const auto watch_param = target.flag("watch");
  const bool one_object = !req.name.empty() && !path.watch_prefix && watch_param && !*watch_param;
  if (!one_object) {
    auto query = parse_list_query(target, path.watch_prefix);
    if (auto* failure = std::get_if<status>(&query))
      return *failure;
    req.query = std::move(std::get<list_query>(query));
    if (auto refused = check_field_labels(req.info, req.query.fields))
      return refused;
  }
  req.verb = req.query.watch     ? request_verb::watch
             : !req.name.empty() ? request_verb::get
                                 : request_verb::list;
  if (req.verb == request_verb::watch && !req.name.empty()) {
    if (!path.subresource.empty())
      return method_not_allowed();
    auto by_name = field_selector::parse("metadata.name=" + req.name);
    if (!by_name)
      return bad_request(by_name.err().message);
    req.query.fields = req.query.fields & *by_name;
  }
  return std::nullopt;
}

} // namespace

api_frontend::api_frontend(api_backend& backend) : backend_(backend) {}

void api_frontend::handle(const http_request& request, std::shared_ptr<http_exchange> exchange) {
  auto target = parse_target(request.target);
  if (!target)
    return exchange->respond(failure_response(bad_request(target.err().message)));
  if (request.method != "GET" && !backend_.writable())
    return exchange->respond(failure_response(method_not_allowed()));
  auto route = classify(target->segments);
  auto wanted = wanted_access(request, *target, route);
  backend_.admit(request, wanted, std::move(exchange),
                 [this, target = std::move(*target),
                  route = std::move(route)](const http_request& admitted_request,
                                            std::shared_ptr<http_exchange> admitted_exchange) {
                   serve(admitted_request, target, route, std::move(admitted_exchange));
                 });
}

void api_frontend::serve(const http_request& request, const request_target& target,
                         const route& route, std::shared_ptr<http_exchange> exchange) {
  if (route.kind == route_kind::resource)
    return serve_resource(request, target, route, std::move(exchange));
  if (request.method != "GET") {
    const bool documents = route.kind != route_kind::unknown && route.kind != route_kind::control &&
                           route.kind != route_kind::health;
    return exchange->respond(
        failure_response(documents ? method_not_allowed() : resource_not_found()));
  }
  const auto resources = backend_.resources();
  std::optional<std::string> doc;
  switch (route.kind) {
  case route_kind::version:
    doc = version_document(backend_.git_version());
    break;
  case route_kind::core_versions:
    doc = core_versions_document(request.header("host").value_or("127.0.0.1"));
    break;
  case route_kind::group_list:
    doc = group_list_document(resources);
    break;
  case route_kind::group:
    doc = group_document(resources, route.group);
    break;
  case route_kind::resource_list:
    doc = resource_list_document(resources, route.group, route.version);
    break;
  case route_kind::openapi:
    return exchange->respond(openapi_response(
        resources, target.segments, request.header("accept").value_or(""), backend_.git_version()));
  default:
    break;
  }
  exchange->respond(doc ? json_response(std::move(*doc)) : failure_response(resource_not_found()));
}

void api_frontend::serve_resource(const http_request& request, const request_target& target,
                                  const route& route, std::shared_ptr<http_exchange> exchange) {
  const auto& path = route.resource;
  if (request.method != "GET")
    return backend_.write(request, target, path, std::move(exchange));
  auto fail = [&exchange](const status& s) { exchange->respond(failure_response(s)); };

  resource_request req;
  const auto resources = backend_.resources();
  auto info = std::find_if(resources.begin(), resources.end(), [&](const resource_info& r) {
    return r.gvr.group == path.group && r.gvr.version == path.version &&
           r.gvr.resource == path.resource;
  });
  if (info == resources.end())
    return fail(resource_not_found());
  req.info = *info;
  const bool namespaced = info->scope == resource_scope::namespaced;
  // A cluster-scoped kind has no namespaces; a namespaced object is addressed inside its own.
  if ((!namespaced && !path.namespace_.empty()) ||
      (namespaced && path.namespace_.empty() && !path.name.empty()))
    return fail(resource_not_found());
  // GET of the status subresource answers the whole object, as the API server's does.
  if (!path.subresource.empty() &&
      (path.subresource != "status" || !info->status_subresource || path.name.empty()))
    return fail(resource_not_found());
  req.namespace_ = path.namespace_;
  req.name = path.name;

  if (auto refused = read_options(target, path, req))
    return fail(*refused);

  auto shape = negotiate_shape(request.header("accept").value_or(""), req.verb);
  if (!shape)
    return fail(make_failure(406, "NotAcceptable", std::string(not_acceptable_message)));
  req.shape = *shape;
  const auto include_param = target.param("includeObject").value_or("");
  auto include = parse_include_object(include_param);
  if (!include)
    return fail(bad_request("includeObject: Unsupported value: \"" + std::string(include_param) +
                            "\": supported values: \"None\", \"Metadata\", \"Object\""));
  req.include = *include;

  switch (req.verb) {
  case request_verb::watch:
    return backend_.watch(std::move(req), std::move(exchange));
  case request_verb::get: {
    auto shown = rendering_of(req);
    return backend_.get(std::move(req), respond_with<object_answer>(
                                            std::move(exchange), [shown](object_answer answer) {
                                              return object_response(shown, answer);
                                            }));
  }
  case request_verb::list: {
    auto shown = rendering_of(req);
    return backend_.list(
        std::move(req), respond_with<list_answer>(std::move(exchange), [shown](list_answer answer) {
          return list_response(shown, std::move(answer));
        }));
  }
  }
}

} // namespace kinformer::apiserver
