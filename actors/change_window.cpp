#include "actors/change_window.hpp"

#include <algorithm>
#include <charconv>
#include <string>

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

change_window::change_window(std::size_t capacity)
    : capacity_(std::max<std::size_t>(1, capacity)) {}

void change_window::reset(std::string_view resource_version) {
  entries_.clear();
  covers_from_ = parse_revision(resource_version);
}

void change_window::record(const delta& change) {
  if (!change.object || change.type == delta_type::sync || !covers_from_)
    return;
  auto rv = parse_revision(change.object->meta().resource_version);
  if (!rv || *rv <= *covers_from_ ||
      (!entries_.empty() && *rv < entries_.back().resource_version)) {
    // Not a revision we can place in order: the window can no longer promise completeness.
    entries_.clear();
    covers_from_.reset();
    return;
  }
  if (entries_.size() == capacity_) {
    // Every change after the evicted one is still held.
    covers_from_ = entries_.front().resource_version;
    entries_.pop_front();
  }
  delta kept = change;
  kept.initial_list = false;
  entries_.push_back(entry{*rv, std::move(kept)});
}

result<std::vector<delta>> change_window::changes_since(std::string_view resource_version) const {
  auto since = parse_revision(resource_version);
  if (!since)
    return make_error(errc::invalid_argument, "resourceVersion \"" + std::string(resource_version) +
                                                  "\" is not an integer");
  if (!covers_from_)
    return make_error(errc::expired, "too old resource version: " + std::to_string(*since) +
                                         " (no change history since the last list)");
  if (*since < *covers_from_)
    return make_error(errc::expired, "too old resource version: " + std::to_string(*since) +
                                         " (changes are kept from " +
                                         std::to_string(*covers_from_) + ")");
  auto first =
      std::upper_bound(entries_.begin(), entries_.end(), *since,
                       [](std::uint64_t rv, const entry& e) { return rv < e.resource_version; });
  std::vector<delta> out;
  out.reserve(static_cast<std::size_t>(entries_.end() - first));
  for (auto it = first; it != entries_.end(); ++it) {
    out.push_back(it->change);
    out.back().initial_list = true;
  }
  return out;
}

} // namespace kinformer
