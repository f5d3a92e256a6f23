#pragma once
// Ready-made object transforms (object.hpp's object_transform): what an informer applies to
// each object before storing it.

#include "protocol/object.hpp"

#include <memory>

namespace kinformer {

// Drops metadata.managedFields, as controller-runtime users commonly do with
// cache.TransformStripManagedFields(): about half of a typical object's metadata.
std::shared_ptr<const object_transform> drop_managed_fields();

} // namespace kinformer
