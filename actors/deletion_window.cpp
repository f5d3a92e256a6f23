#include "actors/deletion_window.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <unordered_set>

namespace kinformer {

std::optional<std::uint64_t> parse_revision(std::string_view resource_version) {
  std::uint64_t value = 0;
  const char* first = resource_version.data();
  const char* last = first + resource_version.size();
  auto [end, ec] = std::from_chars(first, last, value);
  if (resource_version.empty() || ec != std::errc() || end != last)
    return std::nullopt;
  return value;
}

deletion_window::deletion_window(std::size_t capacity)
    : capacity_(std::max<std::size_t>(1, capacity)) {}

void deletion_window::reset(std::string_view resource_version) {
  entries_.clear();
  covers_from_ = parse_revision(resource_version);
}

void deletion_window::record(object_ptr final_object) {
  if (!final_object || !covers_from_)
    return;
  auto rv = parse_revision(final_object->meta().resource_version);
  if (!rv || *rv <= *covers_from_ ||
      (!entries_.empty() && *rv < entries_.back().resource_version)) {
    // Not a revision we can place in order: the window can no longer promise completeness.
    entries_.clear();
    covers_from_.reset();
    return;
  }
  if (entries_.size() == capacity_) {
    // Every deletion after the evicted one is still held.
    covers_from_ = entries_.front().resource_version;
    entries_.pop_front();
  }
  entries_.push_back(entry{*rv, std::move(final_object)});
}

result<std::vector<object_ptr>>
deletion_window::deleted_since(std::string_view resource_version) const {
  auto since = parse_revision(resource_version);
  if (!since)
    return make_error(errc::invalid_argument, "resourceVersion \"" + std::string(resource_version) +
                                                  "\" is not an integer");
  if (!covers_from_)
    return make_error(errc::expired, "too old resource version: " + std::to_string(*since) +
                                         " (no deletion history since the last list)");
  if (*since < *covers_from_)
    return make_error(errc::expired, "too old resource version: " + std::to_string(*since) +
                                         " (deletions are kept from " +
                                         std::to_string(*covers_from_) + ")");
  std::vector<object_ptr> out;
  std::unordered_set<std::string_view> seen;
  auto first =
      std::upper_bound(entries_.begin(), entries_.end(), *since,
                       [](std::uint64_t rv, const entry& e) { return rv < e.resource_version; });
  for (auto it = first; it != entries_.end(); ++it)
    if (seen.insert(it->object->key()).second)
      out.push_back(it->object);
  return out;
}

} // namespace kinformer
