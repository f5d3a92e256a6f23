#pragma once
// The one-line JSON form of a delta that kinformer-watch and kinformer-subscribe print:
//   {"type":"ADDED|UPDATED|DELETED","key":"ns/name","resourceVersion":"…",
//    "initialList":true|false,"finalStateUnknown":true|false}
// A sync delta (resync, or unchanged on relist) prints as UPDATED: folding the lines by key
// still yields the latest version of every object.

#include "actors/delta.hpp"

#include <string>

namespace kinformer {

std::string delta_line(const delta& d);

// The line printed once the subscription has synced.
inline constexpr const char* synced_line = R"({"type":"SYNCED"})";

} // namespace kinformer
