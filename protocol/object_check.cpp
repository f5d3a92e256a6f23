#include "protocol/object_check.hpp"

#include "protocol/object.hpp"

namespace kinformer {

namespace {

status_result invalid(const object& obj, const std::string& what) {
  std::string who(obj.kind().empty() ? std::string_view("object") : obj.kind());
  if (!obj.meta().name.empty() && obj.meta().name.size() <= max_name_bytes)
    who.append(" \"").append(obj.key()).append("\"");
  return make_error(errc::invalid_object, who + ": " + what);
}

} // namespace

status_result check_object(const object& obj, const object_expectations& expected) {
  const auto& meta = obj.meta();
  if (meta.name.empty())
    return invalid(obj, "metadata.name is missing");
  if (meta.name.size() > max_name_bytes)
    return invalid(obj, "metadata.name is " + std::to_string(meta.name.size()) +
                            " bytes, over the limit of " + std::to_string(max_name_bytes));
  if (meta.resource_version.empty())
    return invalid(obj, "metadata.resourceVersion is missing");
  if (meta.namespace_.size() > max_namespace_bytes)
    return invalid(obj,
                   "metadata.namespace is over " + std::to_string(max_namespace_bytes) + " bytes");
  if (expected.namespaced && *expected.namespaced && meta.namespace_.empty())
    return invalid(obj, "metadata.namespace is missing, and the kind is namespaced");
  if (expected.namespaced && !*expected.namespaced && !meta.namespace_.empty())
    return invalid(obj, "metadata.namespace is set, and the kind is cluster-scoped");
  if (!expected.kind.empty() && obj.kind() != expected.kind)
    return invalid(obj, "kind is \"" + std::string(obj.kind()) + "\", expected \"" + expected.kind +
                            "\"");
  if (!expected.api_version.empty() && obj.api_version() != expected.api_version)
    return invalid(obj, "apiVersion is \"" + std::string(obj.api_version()) + "\", expected \"" +
                            expected.api_version + "\"");
  return ok_v;
}

} // namespace kinformer
