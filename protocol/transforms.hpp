#pragma once
// Ready-made object transforms (object.hpp's object_transform): what an informer applies to
// each object before storing it.

#include "protocol/object.hpp"

#include <memory>
#include <string>
#include <vector>

namespace kinformer {

// Drops metadata.managedFields, as controller-runtime users commonly do with
// cache.TransformStripManagedFields(): about half of a typical object's metadata. Always the same
// transform, which object's constructors recognise (cuts_managed_fields) and apply to the text
// itself: the member and one comma are left out as the text is copied, with no tree and no
// serialising, so the object keeps the bytes received less that member. Chained with others,
// it is applied to a tree like any transform.
std::shared_ptr<const object_transform> drop_managed_fields();

// True for drop_managed_fields()'s transform.
bool cuts_managed_fields(const object_transform* transform) noexcept;

// Drops the annotations `keys` (e.g. kubectl.kubernetes.io/last-applied-configuration), and the
// annotations map when it is left empty, as the API server omits an empty one.
std::shared_ptr<const object_transform> drop_annotations(std::vector<std::string> keys);

// Applies `transforms` in order (null ones are skipped); null when none is left.
std::shared_ptr<const object_transform>
chain_transforms(std::vector<std::shared_ptr<const object_transform>> transforms);

} // namespace kinformer
