#pragma once
// Standard base64 (RFC 4648, with padding): kubeconfig *-data fields, an exec plugin's
// certificate-authority-data, a proxy's Basic credentials.

#include "protocol/result.hpp"

#include <string>
#include <string_view>

namespace kinformer {

std::string encode_base64(std::string_view data);
// Whitespace is ignored; anything else outside the alphabet, or bad padding, is an error.
result<std::string> decode_base64(std::string_view text);

} // namespace kinformer
