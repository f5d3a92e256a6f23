#pragma once
// The Status failures an API server answers with (the simulator and kinformerd's read API alike),
// worded as the real API server words them (k8s.io/apimachinery/pkg/api/errors), so clients that
// match on reason or code behave the same.

#include "protocol/decode.hpp"
#include "protocol/gvk.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace kinformer::apiserver {

// "pods", or "deployments.apps": how the server names a resource in messages.
std::string qualified_resource(const group_version_resource& gvr);

status make_failure(int code, std::string reason, std::string message);

// 404 `pods "x" not found`
status not_found(const group_version_resource& gvr, std::string_view name);
// 404 for a resource the server does not serve.
status resource_not_found();
// 405 for a method the server does not allow on the resource.
status method_not_allowed();
// 409 `pods "x" already exists`
status already_exists(const group_version_resource& gvr, std::string_view name);
// 409 `Operation cannot be fulfilled on pods "x": the object has been modified; ...`
status conflict(const group_version_resource& gvr, std::string_view name);
// 409 for a delete whose preconditions.resourceVersion differs from the stored one.
status precondition_conflict(const group_version_resource& gvr, std::string_view name,
                             std::string_view expected, std::uint64_t actual);
// 400 BadRequest with the given message.
status bad_request(std::string message);
// 422 `Pod "x" is invalid: <field>: <detail>`
status invalid(std::string_view kind, std::string_view name, std::string_view field_error);
// 410 Expired with the given message.
status expired(std::string message);
// 410 `too old resource version: 5 (10)`, as the watch cache answers.
status too_old_resource_version(std::uint64_t requested, std::uint64_t oldest);
// 410 for a continue token whose snapshot has been compacted away.
status continue_too_old();
// 504 Timeout with cause ResourceVersionTooLarge, for a resourceVersion from the future.
status too_large_resource_version(std::uint64_t requested, std::uint64_t current);
// 415 for a patch type the server does not accept.
status unsupported_media_type(std::string_view content_type);
// A fault-injected failure: 500 InternalError, 429 TooManyRequests, 503, 504, ...
status injected_failure(int code, std::optional<int> retry_after_seconds);

// The Status as the JSON body the server sends:
// {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":...}
std::string status_json(const status& s);

} // namespace kinformer::apiserver
