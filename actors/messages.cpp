#include "actors/messages.hpp"

#include <algorithm>

namespace kinformer {

bool old_object_policy::keeps(const object& old) const {
  switch (which) {
  case keep::all:
    return true;
  case keep::none:
    return false;
  case keep::selected:
    return labels.matches(old) && fields.matches(old);
  }
  return true;
}

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

std::vector<double> list_duration_bounds() {
  return {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

std::vector<double> delivery_lag_bounds() {
  return {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5};
}

} // namespace kinformer
