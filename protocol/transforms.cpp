#include "protocol/transforms.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace kinformer {

namespace {

boost::json::object* metadata_of(boost::json::value& value) {
  auto* root = value.if_object();
  auto* meta = root ? root->if_contains("metadata") : nullptr;
  return meta ? meta->if_object() : nullptr;
}

} // namespace

std::shared_ptr<const object_transform> drop_managed_fields() {
  static const auto the_one =
      std::make_shared<const object_transform>([](boost::json::value& value) {
        if (auto* meta = metadata_of(value))
          meta->erase("managedFields");
      });
  return the_one;
}

bool cuts_managed_fields(const object_transform* transform) noexcept {
  static const object_transform* const the_one = drop_managed_fields().get();
  return transform != nullptr && transform == the_one;
}

std::shared_ptr<const object_transform> drop_annotations(std::vector<std::string> keys) {
  return std::make_shared<const object_transform>(
      [keys = std::move(keys)](boost::json::value& value) {
        auto* meta = metadata_of(value);
        auto* annotations = meta ? meta->if_contains("annotations") : nullptr;
        if (!annotations || !annotations->is_object())
          return;
        for (const auto& key : keys)
          annotations->get_object().erase(key);
        if (annotations->get_object().empty())
          meta->erase("annotations");
      });
}

std::shared_ptr<const object_transform>
chain_transforms(std::vector<std::shared_ptr<const object_transform>> transforms) {
  std::erase(transforms, nullptr);
  if (transforms.empty())
    return nullptr;
  if (transforms.size() == 1)
    return transforms.front();
  return std::make_shared<const object_transform>(
      [transforms = std::move(transforms)](boost::json::value& value) {
        for (const auto& transform : transforms)
          (*transform)(value);
      });
}

} // namespace kinformer
