#pragma once
// A set of strings kept compactly: an index bucket, the keys ("namespace/name") of the objects
// indexed under one value.
//
// Every object of a namespace has its key in that namespace's bucket, so a bucket costs per
// object. A node-based set spends a node, a cached hash and (past 15 bytes) a second allocation
// on each key: about 120 bytes for a pod's. Here the keys' bytes lie back to back in one buffer
// and an open-addressed table of 12-byte slots finds them: about 60 bytes, two allocations per
// bucket, and a copy (copy-on-write, when a snapshot shares the bucket) is two memcpys.
// Erased keys leave their bytes behind until they outweigh the live ones; then the set compacts.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

class key_set {
  // Where a key's bytes are in text_; `at` also marks free and erased slots.
  struct slot {
    std::uint32_t at = free_slot;
    std::uint32_t size = 0;
    std::uint32_t hash = 0;
  };
  static constexpr std::uint32_t free_slot = 0xffffffff;
  static constexpr std::uint32_t erased = 0xfffffffe;

public:
  // Visits the keys in no particular order, as std::string_view (valid until the set changes).
  class iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string_view;

    iterator() = default;
    std::string_view operator*() const noexcept {
      return {set_->text_.data() + at_->at, at_->size};
    }
    iterator& operator++() noexcept {
      ++at_;
      skip_free();
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.at_ == b.at_; }

  private:
    friend class key_set;
    iterator(const key_set* set, const slot* at) noexcept : set_(set), at_(at) { skip_free(); }
    void skip_free() noexcept {
      const slot* end = set_->slots_.data() + set_->slots_.size();
      while (at_ != end && at_->at >= erased)
        ++at_;
    }
    const key_set* set_ = nullptr;
    const slot* at_ = nullptr;
  };

  // False when `key` was already there.
  bool insert(std::string_view key);
  // False when `key` was not there.
  bool erase(std::string_view key);
  bool contains(std::string_view key) const noexcept;

  std::size_t size() const noexcept { return live_; }
  bool empty() const noexcept { return live_ == 0; }
  iterator begin() const noexcept { return {this, slots_.data()}; }
  iterator end() const noexcept { return {this, slots_.data() + slots_.size()}; }

  // Heap bytes held (the keys' buffer and the table, at their capacities).
  std::size_t heap_bytes() const noexcept {
    return text_.capacity() + slots_.capacity() * sizeof(slot);
  }

private:
  static std::uint32_t hash_of(std::string_view key) noexcept;
  // The slot holding `key`, or null.
  const slot* find(std::string_view key, std::uint32_t hash) const noexcept;
  // Rebuilds the table with `capacity` slots (a power of two) and the buffer without the bytes
  // of erased keys.
  void rebuild(std::size_t capacity);
  // Places a key already in the buffer in the first free or erased slot of `slots` (which has
  // room for it); true when that slot was free.
  static bool place(std::vector<slot>& slots, std::uint32_t at, std::uint32_t size,
                    std::uint32_t hash) noexcept;

  std::string text_;
  std::vector<slot> slots_; // empty, or a power of two in size
  std::size_t live_ = 0;    // keys in the set
  std::size_t used_ = 0;    // slots not free: live keys and erased ones
  std::size_t garbage_ = 0; // bytes of text_ that erased keys left
};

} // namespace kinformer
