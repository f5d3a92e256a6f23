#pragma once
// The metadata every component reads from an object (namespace, name, labels, ...), as views
// into the object's own bytes.
//
// An object stores each string as a text_span, an offset and a size in 8 bytes where a
// std::string_view takes 16, and labels and owner references as arrays of them: a stored pod
// saves about 200 bytes. object::meta() hands out an object_meta made from them on the spot;
// its views stay valid while the object lives.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>

namespace kinformer {

// A string inside one block of bytes: `size` bytes from `offset`.
struct text_span {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;

  std::string_view in(const char* base) const noexcept {
    return size == 0 ? std::string_view() : std::string_view(base + offset, size);
  }
};

// One label or annotation.
struct text_pair {
  text_span key, value;
};

// A read-only list whose elements are made from stored spans on the spot: operator[] and the
// iterator return values, not references.
template <class Stored, class Value, Value (*make)(const char*, const Stored&)>
class span_list {
public:
  using value_type = Value;

  span_list() = default;
  span_list(const char* base, const Stored* entries, std::size_t count) noexcept
      : base_(base), entries_(entries), count_(count) {}

  std::size_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  Value operator[](std::size_t i) const noexcept { return make(base_, entries_[i]); }

  // Holds what it reads, not the list: valid while the object lives, whatever the list was.
  class iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Value;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Value;

    iterator() = default;
    iterator(const char* base, const Stored* at) noexcept : base_(base), at_(at) {}
    Value operator*() const noexcept { return make(base_, *at_); }
    Value operator[](difference_type n) const noexcept { return make(base_, at_[n]); }
    iterator& operator++() noexcept { return ++at_, *this; }
    iterator operator++(int) noexcept { return {base_, at_++}; }
    iterator& operator--() noexcept { return --at_, *this; }
    iterator operator--(int) noexcept { return {base_, at_--}; }
    iterator& operator+=(difference_type n) noexcept { return at_ += n, *this; }
    iterator& operator-=(difference_type n) noexcept { return at_ -= n, *this; }
    friend iterator operator+(iterator it, difference_type n) noexcept { return it += n; }
    friend iterator operator+(difference_type n, iterator it) noexcept { return it += n; }
    friend iterator operator-(iterator it, difference_type n) noexcept { return it -= n; }
    friend difference_type operator-(const iterator& a, const iterator& b) noexcept {
      return a.at_ - b.at_;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.at_ == b.at_; }
    friend auto operator<=>(const iterator& a, const iterator& b) noexcept {
      return a.at_ <=> b.at_;
    }

  private:
    const char* base_ = nullptr;
    const Stored* at_ = nullptr;
  };

  iterator begin() const noexcept { return {base_, entries_}; }
  iterator end() const noexcept { return {base_, entries_ + count_}; }

protected:
  const char* base_ = nullptr;
  const Stored* entries_ = nullptr;
  std::size_t count_ = 0;
};

inline std::pair<std::string_view, std::string_view> make_label(const char* base,
                                                                const text_pair& p) noexcept {
  return {p.key.in(base), p.value.in(base)};
}

// Labels or annotations, sorted by key, each key once.
class string_map_view
    : public span_list<text_pair, std::pair<std::string_view, std::string_view>, make_label> {
public:
  using span_list::span_list;

  // The value for `key`, if present (a binary search).
  std::optional<std::string_view> find(std::string_view key) const noexcept {
    std::size_t low = 0, high = count_;
    while (low < high) {
      const std::size_t mid = low + (high - low) / 2;
      const std::string_view k = entries_[mid].key.in(base_);
      if (k == key)
        return entries_[mid].value.in(base_);
      if (k < key)
        low = mid + 1;
      else
        high = mid;
    }
    return std::nullopt;
  }
};

struct owner_reference {
  std::string_view api_version;
  std::string_view kind;
  std::string_view name;
  std::string_view uid;
  bool controller = false;
  bool block_owner_deletion = false;
};

// An owner reference as an object stores it.
struct stored_owner_reference {
  text_span api_version, kind, name, uid;
  bool controller = false;
  bool block_owner_deletion = false;
};

inline owner_reference make_owner_reference(const char* base,
                                            const stored_owner_reference& r) noexcept {
  return {r.api_version.in(base), r.kind.in(base), r.name.in(base),
          r.uid.in(base),         r.controller,    r.block_owner_deletion};
}

using owner_reference_list =
    span_list<stored_owner_reference, owner_reference, make_owner_reference>;

// The fields of ObjectMeta every component needs.
struct object_meta {
  std::string_view namespace_;
  std::string_view name;
  std::string_view uid;
  std::string_view resource_version;
  std::int64_t generation = 0;
  std::string_view deletion_timestamp; // empty unless the object is being deleted
  string_map_view labels;
  string_map_view annotations;
  owner_reference_list owner_references;

  // The label value for `key`, if present.
  std::optional<std::string_view> label(std::string_view key) const { return labels.find(key); }
  std::optional<std::string_view> annotation(std::string_view key) const {
    return annotations.find(key);
  }
};

} // namespace kinformer
