#pragma once
// kinformer's `error` across actor replies: a failed request (a cache read of an uncovered
// namespace, an unknown kind) comes back as a caf::error in the "kinformer" category that keeps
// the errc and the message, and turns back into the same `error` on the caller's side, so
// callers can branch on the code (errc::not_cached, errc::namespace_not_covered, errc::no_index
// for reads the cache cannot serve). The code travels as its number: errc only ever grows at
// the end, and a number this build does not know arrives as errc::cancelled.

#include "protocol/result.hpp"

#include <caf/fwd.hpp>

namespace kinformer {

caf::error to_caf_error(const error& err);

// The kinformer error carried by `err`; CAF's own errors map to the nearest errc (a request
// timeout to errc::timeout, anything else to errc::cancelled) with CAF's rendering as message.
error from_caf_error(const caf::error& err);

} // namespace kinformer
