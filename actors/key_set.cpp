#include "actors/key_set.hpp"

#include <functional>
#include <stdexcept>

namespace kinformer {

namespace {

constexpr std::size_t min_capacity = 8;

// Load limit: 7/8 of the slots, erased ones included.
bool over_load(std::size_t used, std::size_t capacity) noexcept {
  return used * 8 > capacity * 7;
}

} // namespace

std::uint32_t key_set::hash_of(std::string_view key) noexcept {
  const std::size_t h = std::hash<std::string_view>{}(key);
  if constexpr (sizeof(std::size_t) > 4)
    return static_cast<std::uint32_t>(h ^ (h >> 32));
  else
    return static_cast<std::uint32_t>(h);
}

const key_set::slot* key_set::find(std::string_view key, std::uint32_t hash) const noexcept {
  if (slots_.empty())
    return nullptr;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const slot& s = slots_[i];
    if (s.at == free_slot)
      return nullptr;
    if (s.at != erased && s.hash == hash && s.size == key.size() &&
        std::string_view(text_.data() + s.at, s.size) == key)
      return &s;
  }
}

bool key_set::contains(std::string_view key) const noexcept {
  return find(key, hash_of(key)) != nullptr;
}

bool key_set::place(std::vector<slot>& slots, std::uint32_t at, std::uint32_t size,
                    std::uint32_t hash) noexcept {
  const std::size_t mask = slots.size() - 1;
  std::size_t i = hash & mask;
  while (slots[i].at < erased)
    i = (i + 1) & mask;
  const bool was_free = slots[i].at == free_slot;
  slots[i] = slot{at, size, hash};
  return was_free;
}

bool key_set::insert(std::string_view key) {
  const std::uint32_t hash = hash_of(key);
  if (find(key, hash))
    return false;
  if (text_.size() + key.size() >= erased)
    throw std::length_error("key_set: keys past 4 GiB");
  if (slots_.empty() || over_load(used_ + 1, slots_.size())) {
    // Grow only when live keys fill the table; erased slots alone are cleared by a rebuild at
    // the same size.
    std::size_t capacity = slots_.empty() ? min_capacity : slots_.size();
    while (over_load(live_ + 1, capacity) || (live_ + 1) * 2 > capacity)
      capacity *= 2;
    rebuild(capacity);
  }
  const auto at = static_cast<std::uint32_t>(text_.size());
  text_.append(key);
  if (place(slots_, at, static_cast<std::uint32_t>(key.size()), hash))
    ++used_;
  ++live_;
  return true;
}

bool key_set::erase(std::string_view key) {
  const slot* found = find(key, hash_of(key));
  if (!found)
    return false;
  auto& s = slots_[static_cast<std::size_t>(found - slots_.data())];
  garbage_ += s.size;
  s.at = erased;
  --live_;
  if (live_ == 0) {
    *this = key_set();
    return true;
  }
  // Give the bytes of erased keys back once they outweigh the live ones, and shrink a table
  // that emptied out.
  if (garbage_ > 64 && garbage_ * 2 > text_.size()) {
    std::size_t capacity = slots_.size();
    while (capacity > min_capacity && live_ * 8 < capacity)
      capacity /= 2;
    rebuild(capacity);
  }
  return true;
}

void key_set::rebuild(std::size_t capacity) {
  // Built aside and swapped in, so a failed allocation leaves the set as it was.
  std::string text;
  text.reserve(text_.size() - garbage_);
  std::vector<slot> slots(capacity);
  for (const slot& s : slots_) {
    if (s.at >= erased)
      continue;
    const auto at = static_cast<std::uint32_t>(text.size());
    text.append(text_, s.at, s.size);
    place(slots, at, s.size, s.hash);
  }
  slots_.swap(slots);
  text_.swap(text);
  used_ = live_;
  garbage_ = 0;
}

} // namespace kinformer
