#pragma once
// The one-line JSON form of a delta that kinformer-watch and kinformer-subscribe print:
//   {"type":"ADDED|UPDATED|DELETED|SYNC","key":"ns/name","resourceVersion":"…",
//    "initialList":true|false,"finalStateUnknown":true|false}
// SYNC is a resync, or an object a relist found unchanged: never shown as an update.

#include "actors/delta.hpp"

#include <string>

namespace kinformer {

std::string delta_line(const delta& d);

// The line printed once the subscription has synced.
inline constexpr const char* synced_line = R"({"type":"SYNCED"})";

} // namespace kinformer
