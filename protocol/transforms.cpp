#include "protocol/transforms.hpp"

#include <boost/json.hpp>

namespace kinformer {

std::shared_ptr<const object_transform> drop_managed_fields() {
  return std::make_shared<const object_transform>([](boost::json::value& value) {
    if (auto* root = value.if_object())
      if (auto* meta = root->if_contains("metadata"); meta && meta->is_object())
        meta->get_object().erase("managedFields");
  });
}

} // namespace kinformer
