#include "actors/cache_messages.hpp"

namespace kinformer {

std::string kind_request::describe() const {
  std::string text = kind.kind.empty() ? resource : kind.to_string();
  if (metadata_only)
    text += " (metadata)";
  return text;
}

} // namespace kinformer
