#pragma once
// How a non-2xx answer reads in an error message: "HTTP 409: <the Status>", or the first bytes
// of a body that is no Status.

#include "protocol/decode.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace kinformer {

std::string describe_refusal(int http_status, const std::optional<status>& server_status,
                             std::string_view body);

} // namespace kinformer
