#include "actors/controller/request_mapping.hpp"

#include <algorithm>

namespace kinformer {

std::string reconcile_request::key() const {
  if (namespace_.empty())
    return name;
  std::string key;
  key.reserve(namespace_.size() + 1 + name.size());
  key.append(namespace_).append("/").append(name);
  return key;
}

reconcile_request reconcile_request::from_key(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos)
    return {"", std::string(key)};
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

std::string_view api_group_of(std::string_view api_version) {
  auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

request_mapper enqueue_for_object() {
  return [](const delta& d) -> std::vector<reconcile_request> {
    const auto& meta = d.object->meta();
    return {{std::string(meta.namespace_), std::string(meta.name)}};
  };
}

namespace {

void add_owners(const object& obj, std::string_view group, std::string_view kind,
                bool only_controller, bool owner_namespaced, std::vector<reconcile_request>& out) {
  for (const auto& ref : obj.meta().owner_references) {
    if (ref.kind != kind || api_group_of(ref.api_version) != group)
      continue;
    if (only_controller && !ref.controller)
      continue;
    reconcile_request req{owner_namespaced ? std::string(obj.meta().namespace_) : std::string(),
                          std::string(ref.name)};
    if (std::find(out.begin(), out.end(), req) == out.end())
      out.push_back(std::move(req));
  }
}

} // namespace

request_mapper enqueue_for_owner(std::string owner_group, std::string owner_kind,
                                 bool only_controller, bool owner_namespaced) {
  return [group = std::move(owner_group), kind = std::move(owner_kind), only_controller,
          owner_namespaced](const delta& d) {
    std::vector<reconcile_request> out;
    add_owners(*d.object, group, kind, only_controller, owner_namespaced, out);
    if (d.type == delta_type::updated && d.old_object)
      add_owners(*d.old_object, group, kind, only_controller, owner_namespaced, out);
    return out;
  };
}

} // namespace kinformer
