#pragma once
// metav1.MicroTime as JSON: "2026-11-25T21:15:58.123456Z" (RFC 3339, UTC, microseconds), as
// Events and Leases carry their times.

#include <chrono>
#include <string>

namespace kinformer {

std::string micro_time(std::chrono::system_clock::time_point t);

} // namespace kinformer
