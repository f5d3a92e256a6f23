#include "actors/store_table.hpp"

#include "actors/string_hash.hpp"

#include <bit>
#include <cassert>

namespace kinformer {

namespace {

std::uint32_t hash_of(std::string_view key) {
  return static_cast<std::uint32_t>(string_hash{}(key));
}

// The slot a hash starts probing at in a table of `capacity` (a power of two) slots: the top
// bits of a multiplicative mix, so that the bits cow_shards picked the shard by still spread
// the entries.
std::size_t home_of(std::uint32_t hash, std::size_t capacity) noexcept {
  const int bits = std::countr_zero(capacity);
  return bits == 0 ? 0
                   : static_cast<std::size_t>((std::uint64_t{hash} * 0x9E3779B97F4A7C15ULL) >>
                                              (64 - bits));
}

} // namespace

std::size_t store_table::probe(std::string_view key, std::uint32_t hash) const noexcept {
  assert(!slots_.empty()); // and never full: an empty slot ends every probe
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = home_of(hash, slots_.size());; i = (i + 1) & mask) {
    const store_entry& slot = slots_[i];
    if (!slot.object || (slot.key_hash == hash && slot.object->key() == key))
      return i;
  }
}

store_table::const_iterator store_table::find(std::string_view key) const {
  if (size_ == 0)
    return end();
  const std::size_t i = probe(key, hash_of(key));
  return slots_[i].object ? at(i) : end();
}

std::pair<store_table::const_iterator, bool> store_table::insert(const object_ptr& obj) {
  const std::uint32_t hash = hash_of(obj->key());
  std::size_t i = slots_.empty() ? 0 : probe(obj->key(), hash);
  if (!slots_.empty() && slots_[i].object)
    return {at(i), false}; // stored already: nothing added, nothing grows
  // At most 3/4 full: an insert of a new key probes about 8 slots then, at 7/8 about 32.
  if ((size_ + 1) * 4 > slots_.size() * 3) {
    rehash(slots_.empty() ? 8 : slots_.size() * 2);
    i = probe(obj->key(), hash);
  }
  store_entry& slot = slots_[i];
  slot.object = obj;
  slot.listed_in = 0;
  slot.key_hash = hash;
  ++size_;
  return {at(i), true};
}

void store_table::erase(const_iterator it) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t hole = static_cast<std::size_t>(it.at_ - slots_.data());
  slots_[hole] = store_entry{};
  --size_;
  // Backward shift: an entry later in the run moves into the hole when the hole lies between
  // its home slot and where it is, so that every probe still finds it before an empty slot.
  for (std::size_t j = (hole + 1) & mask; slots_[j].object; j = (j + 1) & mask) {
    const std::size_t home = home_of(slots_[j].key_hash, slots_.size());
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      slots_[hole] = std::move(slots_[j]);
      slots_[j] = store_entry{};
      hole = j;
    }
  }
  // Under 1/8 full (after a relist dropped most objects): half the slots, at most 1/4 full then,
  // so that an insert does not grow it straight back.
  if (slots_.size() > 8 && size_ * 8 < slots_.size())
    rehash(slots_.size() / 2);
}

void store_table::rehash(std::size_t capacity) {
  std::vector<store_entry> old(capacity);
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (store_entry& entry : old) {
    if (!entry.object)
      continue;
    std::size_t i = home_of(entry.key_hash, slots_.size());
    while (slots_[i].object)
      i = (i + 1) & mask;
    slots_[i] = std::move(entry);
  }
}

} // namespace kinformer
