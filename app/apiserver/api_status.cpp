#include "app/apiserver/api_status.hpp"

#include "protocol/quoted.hpp"

#include <boost/json.hpp>

namespace json = boost::json;

namespace kinformer::apiserver {

std::string qualified_resource(const group_version_resource& gvr) {
  return gvr.group.empty() ? gvr.resource : gvr.resource + "." + gvr.group;
}

status make_failure(int code, std::string reason, std::string message) {
  status s;
  s.code = code;
  s.status_ = "Failure";
  s.reason = std::move(reason);
  s.message = std::move(message);
  return s;
}

status not_found(const group_version_resource& gvr, std::string_view name) {
  return make_failure(404, "NotFound", qualified_resource(gvr) + " " + quoted(name) + " not found");
}

status resource_not_found() {
  return make_failure(404, "NotFound", "the server could not find the requested resource");
}

status method_not_allowed() {
  return make_failure(405, "MethodNotAllowed",
                      "the server does not allow this method on the requested resource");
}

status already_exists(const group_version_resource& gvr, std::string_view name) {
  return make_failure(409, "AlreadyExists",
                      qualified_resource(gvr) + " " + quoted(name) + " already exists");
}

status conflict(const group_version_resource& gvr, std::string_view name) {
  return make_failure(409, "Conflict",
                      "Operation cannot be fulfilled on " + qualified_resource(gvr) + " " +
                          quoted(name) +
                          ": the object has been modified; please apply your changes to the "
                          "latest version and try again");
}

status precondition_conflict(const group_version_resource& gvr, std::string_view name,
                             std::string_view expected, std::uint64_t actual) {
  return make_failure(409, "Conflict",
                      "Operation cannot be fulfilled on " + qualified_resource(gvr) + " " +
                          quoted(name) + ": the ResourceVersion in the precondition (" +
                          std::string(expected) +
                          ") does not match the ResourceVersion in record (" +
                          std::to_string(actual) + "). The object might have been modified");
}

status bad_request(std::string message) {
  return make_failure(400, "BadRequest", std::move(message));
}

status invalid(std::string_view kind, std::string_view name, std::string_view field_error) {
  return make_failure(422, "Invalid",
                      std::string(kind) + " " + quoted(name) +
                          " is invalid: " + std::string(field_error));
}

status expired(std::string message) {
  return make_failure(410, "Expired", std::move(message));
}

status too_old_resource_version(std::uint64_t requested, std::uint64_t oldest) {
  return expired("too old resource version: " + std::to_string(requested) + " (" +
                 std::to_string(oldest) + ")");
}

status continue_too_old() {
  return expired("The provided continue parameter is too old to display a consistent list result. "
                 "You can start a new list without the continue parameter, or use the continue "
                 "token in this response to retrieve the remainder of the results. Continuing "
                 "with the provided token results in an inconsistent list - objects that were "
                 "created, modified, or deleted between the time the first chunk was returned "
                 "and now may show up in the list.");
}

status too_large_resource_version(std::uint64_t requested, std::uint64_t current) {
  status s = make_failure(504, "Timeout",
                          "Too large resource version: " + std::to_string(requested) +
                              ", current: " + std::to_string(current));
  s.cause_types.emplace_back("ResourceVersionTooLarge");
  s.retry_after_seconds = 1;
  return s;
}

status unsupported_media_type(std::string_view content_type) {
  return make_failure(415, "UnsupportedMediaType",
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json-patch+json, application/merge-patch+json, "
                      "application/strategic-merge-patch+json (got " +
                          std::string(content_type) + ")");
}

status injected_failure(int code, std::optional<int> retry_after_seconds) {
  status s;
  switch (code) {
  case 429:
    s = make_failure(429, "TooManyRequests", "Too many requests, please try again later.");
    break;
  case 503:
    s = make_failure(503, "ServiceUnavailable",
                     "The server is currently unable to handle the request");
    break;
  case 504:
    s = make_failure(504, "Timeout",
                     "The server was unable to return a response in the time "
                     "allotted, but may still be processing the request");
    break;
  case 410:
    s = expired("The resourceVersion for the provided list is too old.");
    break;
  case 403:
    s = make_failure(403, "Forbidden", "forbidden: injected failure (kubesim fault plan)");
    break;
  default:
    s = make_failure(code, "InternalError",
                     "Internal error occurred: injected failure (kubesim fault plan)");
  }
  s.retry_after_seconds = retry_after_seconds;
  return s;
}

std::string status_json(const status& s) {
  json::object out;
  out["kind"] = "Status";
  out["apiVersion"] = "v1";
  out["metadata"] = json::object();
  out["status"] = s.status_.empty() ? "Failure" : s.status_;
  out["message"] = s.message;
  if (!s.reason.empty()) // the real server leaves it out of a 500 it has no reason for
    out["reason"] = s.reason;
  if (!s.cause_types.empty() || s.retry_after_seconds) {
    json::object details;
    if (!s.cause_types.empty()) {
      json::array causes;
      for (const auto& type : s.cause_types)
        causes.push_back(json::object{{"reason", type}, {"message", s.message}});
      details["causes"] = std::move(causes);
    }
    if (s.retry_after_seconds)
      details["retryAfterSeconds"] = *s.retry_after_seconds;
    out["details"] = std::move(details);
  }
  out["code"] = s.code;
  return json::serialize(out);
}

} // namespace kinformer::apiserver
