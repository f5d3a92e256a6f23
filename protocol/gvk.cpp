#include "protocol/gvk.hpp"

namespace kinformer {

std::string group_version::api_version() const {
  return group.empty() ? version : group + "/" + version;
}

group_version group_version::from_api_version(std::string_view api_version) {
  auto slash = api_version.find('/');
  if (slash == std::string_view::npos)
    return {"", std::string(api_version)};
  return {std::string(api_version.substr(0, slash)), std::string(api_version.substr(slash + 1))};
}

std::string group_version_kind::to_string() const {
  return api_version() + ", Kind=" + kind;
}

std::string group_version_resource::to_string() const {
  return resource + "." + version + "." + group;
}

std::string group_version_resource::api_prefix() const {
  return group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
}

std::string make_object_key(std::string_view ns, std::string_view name) {
  std::string key;
  if (!ns.empty()) {
    key.reserve(ns.size() + 1 + name.size());
    key.append(ns).push_back('/');
  }
  key.append(name);
  return key;
}

split_key split_object_key(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos)
    return {{}, key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

} // namespace kinformer
