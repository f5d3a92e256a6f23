#pragma once
// A JSON string literal: what the API layer's hand-built documents (list heads, bookmark
// objects) put around a name or a token.

#include <string>
#include <string_view>

namespace kinformer::apiserver {

// "text", escaped as JSON requires.
std::string json_string(std::string_view text);

} // namespace kinformer::apiserver
