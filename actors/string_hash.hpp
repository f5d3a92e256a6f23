#pragma once
// One string hash for the maps keyed by std::string that are searched by std::string_view.

#include <cstddef>
#include <functional>
#include <string_view>

namespace kinformer {

// Hashes std::string and std::string_view alike, so maps keyed by std::string can be searched
// with a std::string_view without building a string.
//
// Not noexcept, on purpose (here and in the other hashes of these containers): libstdc++ then
// caches each element's hash in its node, so a lookup neither rehashes the nodes it walks past
// nor compares keys (which live in other objects, often cold in cache) whose hash differs.
struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

} // namespace kinformer
