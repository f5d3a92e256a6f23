#include "protocol/resource_writer.hpp"

#include "protocol/decode.hpp"
#include "protocol/percent_encode.hpp"
#include "protocol/refusal.hpp"

#include <boost/json.hpp>

namespace kinformer {

namespace {

std::string with_query(std::string path, bool dry_run, std::string_view field_manager,
                       bool force = false) {
  char sep = '?';
  auto add = [&](std::string_view param) {
    path.append(1, sep).append(param);
    sep = '&';
  };
  if (dry_run)
    add("dryRun=All");
  if (!field_manager.empty())
    add("fieldManager=" + percent_encode(field_manager));
  if (force)
    add("force=true");
  return path;
}

// A non-2xx answer as the error a caller branches on.
error refusal(const http_response& response, std::string_view what) {
  auto st = decode_status(response.body);
  std::string message =
      std::string(what) + ": " + describe_refusal(response.status_code, st, response.body);
  std::string_view reason = st ? std::string_view(st->reason) : std::string_view{};
  if (response.status_code == 404 || reason == "NotFound")
    return make_error(errc::not_found, std::move(message));
  if (reason == "AlreadyExists")
    return make_error(errc::already_exists, std::move(message));
  if (response.status_code == 409 || reason == "Conflict")
    return make_error(errc::conflict, std::move(message));
  return make_error(errc::status, std::move(message));
}

const char* method_name(api_verb verb) {
  switch (verb) {
  case api_verb::create:
    return "POST";
  case api_verb::update:
    return "PUT";
  case api_verb::patch:
    return "PATCH";
  case api_verb::delete_:
    return "DELETE";
  default:
    return "GET";
  }
}

} // namespace

const char* content_type_of(patch_type type) noexcept {
  switch (type) {
  case patch_type::merge:
    return "application/merge-patch+json";
  case patch_type::json:
    return "application/json-patch+json";
  case patch_type::strategic_merge:
    return "application/strategic-merge-patch+json";
  }
  return "application/merge-patch+json";
}

resource_writer::resource_writer(std::shared_ptr<api_client> client) : client_(std::move(client)) {}

std::string resource_writer::object_path(const resource_location& where, std::string_view name,
                                         std::string_view subresource) {
  std::string path = where.resource.api_prefix();
  if (!where.namespace_.empty())
    path.append("/namespaces/").append(where.namespace_);
  path.append("/").append(where.resource.resource);
  if (!name.empty())
    path.append("/").append(name);
  if (!subresource.empty())
    path.append("/").append(subresource);
  return path;
}

result<object_ptr> resource_writer::send_object(api_verb verb, std::string target,
                                                std::string content_type, std::string body) const {
  write_request request;
  request.verb = verb;
  request.target = std::move(target);
  request.content_type = std::move(content_type);
  request.body = std::move(body);
  const std::string what = std::string(method_name(request.verb)) + " " + request.target;
  auto response = client_->write_sync(request);
  if (!response)
    return std::move(response).err();
  if (response->status_code / 100 != 2)
    return refusal(*response, what);
  auto obj = object::parse(response->body);
  if (!obj)
    return make_error(obj.err().code, what + ": the answer is no object: " + obj.err().message);
  return obj;
}

result<object_ptr> resource_writer::create(const resource_location& where, std::string_view json,
                                           const write_options& options) const {
  return send_object(api_verb::create,
                     with_query(object_path(where, {}), options.dry_run, options.field_manager),
                     "application/json", std::string(json));
}

result<object_ptr> resource_writer::apply(const resource_location& where, std::string_view name,
                                          std::string_view json,
                                          const apply_options& options) const {
  if (options.field_manager.empty())
    return make_error(errc::invalid_argument, "server-side apply needs a field manager");
  return send_object(
      api_verb::patch,
      with_query(object_path(where, name), options.dry_run, options.field_manager, options.force),
      "application/apply-patch+yaml", std::string(json));
}

result<object_ptr> resource_writer::update(const resource_location& where, std::string_view name,
                                           std::string_view json,
                                           const write_options& options) const {
  return send_object(api_verb::update,
                     with_query(object_path(where, name), options.dry_run, options.field_manager),
                     "application/json", std::string(json));
}

result<object_ptr> resource_writer::update_status(const resource_location& where,
                                                  std::string_view name, std::string_view json,
                                                  const write_options& options) const {
  return send_object(
      api_verb::update,
      with_query(object_path(where, name, "status"), options.dry_run, options.field_manager),
      "application/json", std::string(json));
}

result<object_ptr> resource_writer::patch(const resource_location& where, std::string_view name,
                                          patch_type type, std::string_view patch,
                                          const write_options& options) const {
  return send_object(api_verb::patch,
                     with_query(object_path(where, name), options.dry_run, options.field_manager),
                     content_type_of(type), std::string(patch));
}

result<object_ptr> resource_writer::patch_status(const resource_location& where,
                                                 std::string_view name, patch_type type,
                                                 std::string_view patch,
                                                 const write_options& options) const {
  return send_object(
      api_verb::patch,
      with_query(object_path(where, name, "status"), options.dry_run, options.field_manager),
      content_type_of(type), std::string(patch));
}

status_result resource_writer::remove(const resource_location& where, std::string_view name,
                                      const delete_options& options) const {
  // DeleteOptions in the body, as client-go sends them.
  boost::json::object body{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  boost::json::object preconditions;
  if (!options.uid.empty())
    preconditions["uid"] = options.uid;
  if (!options.resource_version.empty())
    preconditions["resourceVersion"] = options.resource_version;
  if (!preconditions.empty())
    body["preconditions"] = std::move(preconditions);
  if (!options.propagation_policy.empty())
    body["propagationPolicy"] = options.propagation_policy;
  if (options.grace_period_seconds)
    body["gracePeriodSeconds"] = *options.grace_period_seconds;
  if (options.dry_run)
    body["dryRun"] = boost::json::array{"All"};
  write_request request;
  request.verb = api_verb::delete_;
  request.target = object_path(where, name);
  request.content_type = "application/json";
  request.body = boost::json::serialize(body);
  auto response = client_->write_sync(request);
  if (!response)
    return std::move(response).err();
  if (response->status_code / 100 != 2)
    return refusal(*response, "DELETE " + request.target);
  return ok_v;
}

} // namespace kinformer
