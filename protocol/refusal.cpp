#include "protocol/refusal.hpp"

namespace kinformer {

std::string describe_refusal(int http_status, const std::optional<status>& server_status,
                             std::string_view body) {
  std::string message = "HTTP " + std::to_string(http_status);
  if (server_status)
    message += ": " + server_status->describe();
  else if (!body.empty())
    message.append(": ").append(body.substr(0, 256));
  return message;
}

} // namespace kinformer
