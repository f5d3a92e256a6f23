#pragma once
// Percent-encoding for URL query values (RFC 3986: unreserved characters stay as they are).

#include <string>
#include <string_view>

namespace kinformer {

std::string percent_encode(std::string_view text);

} // namespace kinformer
