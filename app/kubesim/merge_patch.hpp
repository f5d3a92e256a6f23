#pragma once
// Patches applied to an object's JSON: RFC 7386 merge patch and RFC 6902 JSON patch.

#include "protocol/result.hpp"

#include <boost/json/fwd.hpp>

#include <optional>

namespace kinformer::sim {

// RFC 7386: objects merge key by key, null removes a key, anything else replaces.
void apply_merge_patch(boost::json::value& target, const boost::json::value& patch);

// RFC 6902: a list of add/remove/replace/move/copy/test operations, applied in order. On failure
// `target` may be partly patched (callers patch a copy); the error says which operation failed.
status_result apply_json_patch(boost::json::value& target, const boost::json::value& patch);

} // namespace kinformer::sim
