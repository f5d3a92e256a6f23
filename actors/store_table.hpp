#pragma once
// One shard of the store's object map: an open-addressed hash table of store entries, each found
// by its object's own key().
//
// Why not std::unordered_set: a node there costs a malloc chunk of 48 bytes (the entry, the next
// pointer and the cached hash) plus a bucket pointer, about 60 bytes a stored object. Here an
// entry is 24 bytes in one array (the key's hash in what was its padding) at a load of 3/8 to
// 3/4 while it grows: 32 to 64 bytes, 43 on average, and one allocation per shard rather than
// one per object.
//
// Linear probing; an erase shifts the entries after it back, so there are no tombstones and a
// lookup stops at the first empty slot. A probe compares the stored hash before the key, which
// lives in the object (cold in cache). Copyable: a snapshot's shard is copied whole (cow_shards).

#include "protocol/object.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

namespace kinformer {

// One stored object, found by its own key(): the entry needs no string of its own. An update
// swaps in the next version of the same key in place, which leaves the key text, hence the hash
// and the entry's position, unchanged: that is why `object` may be mutable. `listed_in` is the
// number of the last replace that listed the entry: only the writer reads or writes it.
struct store_entry {
  mutable object_ptr object; // null: an empty slot
  mutable std::uint32_t listed_in = 0;
  std::uint32_t key_hash = 0; // the low bits of the key's string_hash
};

class store_table {
public:
  class const_iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = store_entry;
    using difference_type = std::ptrdiff_t;
    using pointer = const store_entry*;
    using reference = const store_entry&;

    const_iterator() = default;
    reference operator*() const noexcept { return *at_; }
    pointer operator->() const noexcept { return at_; }
    const_iterator& operator++() noexcept {
      ++at_;
      skip_empty();
      return *this;
    }
    const_iterator operator++(int) noexcept {
      auto before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) noexcept {
      return a.at_ == b.at_;
    }

  private:
    friend class store_table;
    const_iterator(const store_entry* at, const store_entry* end) noexcept : at_(at), end_(end) {
      skip_empty();
    }
    void skip_empty() noexcept {
      while (at_ != end_ && !at_->object)
        ++at_;
    }
    const store_entry* at_ = nullptr;
    const store_entry* end_ = nullptr;
  };
  using iterator = const_iterator; // entries change only through their mutable members
  using value_type = store_entry;

  const_iterator begin() const noexcept { return {slots_.data(), slots_.data() + slots_.size()}; }
  const_iterator end() const noexcept {
    return {slots_.data() + slots_.size(), slots_.data() + slots_.size()};
  }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  // Slots allocated (a power of two, or 0): for memory accounting.
  std::size_t capacity() const noexcept { return slots_.size(); }

  const_iterator find(std::string_view key) const;
  // Stores `obj` unless an entry with its key is there; returns that entry and whether `obj` was
  // stored. May move every entry (iterators from before are invalid then).
  std::pair<const_iterator, bool> insert(const object_ptr& obj);
  // Removes the entry `it` points to, and halves the slots when under 1/8 are used. Iterators
  // from before are invalid afterwards.
  void erase(const_iterator it);

private:
  const_iterator at(std::size_t i) const noexcept {
    return {slots_.data() + i, slots_.data() + slots_.size()};
  }
  // Where `key` is stored, or the empty slot that ends its probe sequence.
  std::size_t probe(std::string_view key, std::uint32_t hash) const noexcept;
  // Moves every entry into `capacity` (a power of two, more than size()) new slots.
  void rehash(std::size_t capacity);

  std::vector<store_entry> slots_;
  std::size_t size_ = 0;
};

} // namespace kinformer
