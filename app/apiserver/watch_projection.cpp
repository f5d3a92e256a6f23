#include "app/apiserver/watch_projection.hpp"

#include "protocol/object.hpp"

#include <functional>

namespace kinformer::apiserver {

watch_projection project_change(event_type type, bool matches_now, bool matched_before) noexcept {
  if (type != event_type::modified)
    return matches_now ? watch_projection::as_is : watch_projection::none;
  if (matches_now)
    return matched_before ? watch_projection::as_is : watch_projection::started_matching;
  return matched_before ? watch_projection::stopped_matching : watch_projection::none;
}

event_type projected_type(watch_projection projection, event_type type) noexcept {
  switch (projection) {
  case watch_projection::started_matching:
    return event_type::added;
  case watch_projection::stopped_matching:
    return event_type::deleted;
  default:
    return type;
  }
}

std::string with_resource_version(const object& previous, std::string_view resource_version) {
  const auto whole = previous.json_text();
  const std::string_view text = whole.view();
  const std::string_view old_version = previous.meta().resource_version;
  // Spliced around where the version lies in the text (none there: escaped, or absent).
  const std::size_t offset = previous.resource_version_at();
  if (offset == std::string_view::npos)
    return std::string(text);
  std::string out;
  out.reserve(text.size() - old_version.size() + resource_version.size());
  out.append(text.substr(0, offset));
  out.append(resource_version);
  out.append(text.substr(offset + old_version.size()));
  return out;
}

} // namespace kinformer::apiserver
