#include "actors/messages.hpp"

namespace kinformer {

std::string informer_config::collection_path() const {
  std::string path = resource.api_prefix();
  if (scope == resource_scope::namespaced && !namespace_.empty())
    path += "/namespaces/" + namespace_;
  return path + "/" + resource.resource;
}

std::string informer_config::display_name() const {
  std::string name = resource.resource;
  if (!resource.group.empty())
    name += "." + resource.group;
  if (scope == resource_scope::namespaced && !namespace_.empty())
    name += "@" + namespace_;
  return name;
}

} // namespace kinformer
