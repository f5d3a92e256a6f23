#pragma once
// The object handle: one immutable Kubernetes object, shared by pointer.
//
// An object is its JSON text, as the server sent it (or as a transform made it): those bytes are
// what is stored and what every reader that sends objects on sends. Beside them sit the metadata
// fields every component needs (namespace, name, labels, ...), read once while the text was
// validated, as views into the text. No JSON tree is kept: `tree()` parses one for a caller
// that wants it. An object is never modified after construction, so `object_ptr` can be handed
// between threads and actors freely: copying the pointer is the only copy ever made.

#include "protocol/gvk.hpp"
#include "protocol/object_meta.hpp"
#include "protocol/result.hpp"

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kinformer {

class object;
class held_objects;
class object_packer;
class text_dictionary;
struct object_scan;
using object_ptr = std::shared_ptr<const object>;

// An object's JSON text, for as long as this lives: a view of the object's own bytes, or the
// bytes of an object kept compressed (object::packed()), decompressed. A view of it must not
// outlive it, so it gives none to a temporary: `std::string_view t = obj->json_text();` does not
// compile; `auto text = obj->json_text();` then `text.view()` does.
class object_text {
public:
  std::string_view view() const& noexcept {
    return decompressed_.empty() ? in_place_ : std::string_view(decompressed_);
  }
  std::string_view view() && = delete;
  operator std::string_view() const& noexcept { return view(); }
  operator std::string_view() && = delete;
  std::size_t size() const noexcept { return view().size(); }
  friend bool operator==(const object_text& a, std::string_view b) noexcept {
    return a.view() == b;
  }

private:
  friend class object;
  explicit object_text(std::string_view in_place) noexcept : in_place_(in_place) {}
  explicit object_text(std::string decompressed) noexcept
      : decompressed_(std::move(decompressed)) {}
  std::string_view in_place_;
  std::string decompressed_; // never empty when used: an object's text is at least "{}"
};

// Applied to a freshly parsed object before it is frozen (for example, dropping
// metadata.managedFields). It receives the whole object value and may change it in place; the
// object then stores the transformed tree's text.
using object_transform = std::function<void(boost::json::value&)>;

// The type a List's items carry when they name none (PodList items have no kind/apiVersion):
// filled in when both are missing, as client-go's unstructured decoder does.
struct item_type {
  std::string kind;        // "Pod"; empty: fill nothing
  std::string api_version; // "v1"
};

// The largest object text kept (an object addresses its bytes with 32-bit offsets); the API
// server's own limit on a request is 3 MiB.
inline constexpr std::size_t max_object_bytes = std::size_t(1) << 30;

class object {
public:
  // Builds an object from JSON text: validates all of it, reads the metadata, and keeps a copy
  // of the text (or of what `transform` made of it). Fails with errc::invalid_json for text that
  // is not JSON and errc::invalid_object for JSON that is not an object or whose metadata has
  // the wrong shape.
  // With `held` (held_objects.hpp), text naming a held object takes it from `held`, and at the
  // same resourceVersion gives that object back: validated and scanned, but not made again. Not
  // through a transform that needs a tree.
  // With `packer` (object_packer.hpp), the object keeps its text compressed once the packer has
  // a dictionary (packed()).
  static result<object_ptr> parse(std::string_view json_text,
                                  const object_transform* transform = nullptr,
                                  const item_type* fill_type = nullptr,
                                  held_objects* held = nullptr, object_packer* packer = nullptr);
  // As parse(), for text followed by at least scan_padding readable bytes, whatever they hold
  // (the next items of a list being received): scanned where it lies rather than copied first.
  static result<object_ptr> parse_padded(std::string_view json_text,
                                         const object_transform* transform = nullptr,
                                         const item_type* fill_type = nullptr,
                                         held_objects* held = nullptr,
                                         object_packer* packer = nullptr);
  // Builds an object from text found by a scan of a larger buffer (a watch event line):
  // `scan.object` says where the object's text is in `buffer`, and every range is an offset
  // into `buffer`. Copies only the object's own text (less managedFields for
  // drop_managed_fields()); any other transform is applied to a tree of it.
  static result<object_ptr> from_scan(std::string_view buffer, const object_scan& scan,
                                      const object_transform* transform = nullptr,
                                      object_packer* packer = nullptr);
  // Builds an object from a JSON value (serialised once).
  static result<object_ptr> from_json(const boost::json::value& value,
                                      const object_transform* transform = nullptr);

  object(const object&) = delete;
  object& operator=(const object&) = delete;
  ~object();

  // The object's JSON text: what was received (or what a transform made), byte for byte. A view
  // of the stored bytes, or for a packed object, the text decompressed (a copy, each call).
  object_text json_text() const {
    return packed_bytes_ ? unpacked_text() : object_text(text_in_place());
  }
  // The text where it lies in this object, for a reader that keeps the view while it holds the
  // object: empty for a packed object, whose text only json_text() gives.
  std::string_view text_in_place() const noexcept {
    return packed_bytes_ ? std::string_view() : std::string_view(tail() + text_at_, size_);
  }
  // Whether the text is kept compressed (made with an object_packer that had a dictionary).
  bool packed() const noexcept { return packed_bytes_ != 0; }
  // The text's size, packed or not.
  std::size_t text_size() const noexcept { return size_; }
  // Where meta().resource_version lies in the text, for a reader that splices another in; npos
  // when the text has none, or writes it with escapes.
  std::size_t resource_version_at() const noexcept;
  // A parsed tree of the text, owned by the caller (default allocator). Costs a parse on every
  // call and about three times the text in memory while the caller keeps it.
  boost::json::value tree() const;
  // The same, allocated from `storage` (a monotonic resource makes a short-lived tree cheap).
  boost::json::value tree(boost::json::storage_ptr storage) const;
  // Views into this object, made from its stored spans on each call (a few loads; inline, so
  // a caller that reads one field pays for that one).
  object_meta meta() const noexcept {
    object_meta m;
    m.namespace_ = namespace_.in(tail());
    m.name = name_.in(tail());
    m.uid = uid_.in(tail());
    m.resource_version = resource_version_.in(tail());
    m.generation = generation_;
    m.deletion_timestamp = deletion_timestamp_.in(tail());
    m.labels = {tail(), reinterpret_cast<const text_pair*>(tail() + labels_at_), labels_};
    m.annotations = {tail(), reinterpret_cast<const text_pair*>(tail() + annotations_at_),
                     annotations_};
    m.owner_references = {
        tail(), reinterpret_cast<const stored_owner_reference*>(tail() + owners_at_), owners_};
    return m;
  }
  // "namespace/name", or "name" when cluster-scoped.
  std::string_view key() const noexcept { return key_.in(tail()); }
  std::string_view kind() const noexcept { return kind_.in(tail()); }
  std::string_view api_version() const noexcept { return api_version_.in(tail()); }

  // The JSON text as a string (a copy of json_text()).
  std::string to_json() const;
  // Heap bytes held by this object, all in one block (its control block, the object, its text
  // and metadata): for memory accounting.
  std::size_t heap_bytes() const noexcept;

  // A metadata-only projection of this object as PartialObjectMetadata
  // (apiVersion meta.k8s.io/v1), exactly as the API server returns it for
  // `as=PartialObjectMetadata`: its metadata text is copied as it is.
  object_ptr to_partial_metadata() const;
  // Its text alone, for a reader that only sends it on.
  std::string partial_metadata_json() const;

  // Reads a dotted path ("status.phase", "spec.nodeName") from the text: for field selectors and
  // field indexes. metadata.name and metadata.namespace come from meta().
  std::optional<std::string> field(std::string_view dotted_path) const;

private:
  struct builder;
  // parse() without a transform, or with drop_managed_fields() (`cut`): `padded_text` is
  // `json_text` or a copy of it that is padded.
  static result<object_ptr> from_text(std::string_view json_text, std::string_view padded_text,
                                      const item_type* fill_type, const object_transform* cut,
                                      held_objects* held, object_packer* packer);
  // parse() through a tree: parsed, filled, transformed, serialised, then scanned.
  static result<object_ptr> parse_tree(std::string_view json_text,
                                       const object_transform& transform,
                                       const item_type* fill_type, object_packer* packer);
  struct construct_tag {
    explicit construct_tag() = default;
  };

public:
  explicit object(construct_tag) noexcept {} // for make(): objects are made by the functions above

private:
  // The object, its control block and everything it points to, in one allocation; null when
  // that would pass what 32-bit spans reach. `text` is what `scan` scanned, at offset `shift` of
  // its buffer; the type `filled` (needs_type) goes in place of its opening brace; with
  // `cut_managed_fields`, the scan's managed_fields range is left out. With a `packer` that has
  // a dictionary, the text is kept compressed.
  static std::shared_ptr<object> make(const object_scan& scan, std::string_view text,
                                      std::size_t shift, const item_type* filled,
                                      bool cut_managed_fields, object_packer* packer);
  object_text unpacked_text() const;
  // The dictionary a packed object was compressed with (kept in its tail).
  const std::shared_ptr<const text_dictionary>& dictionary() const noexcept;

  // Everything below is a place in the tail, the bytes make() allocated right after this object:
  // the metadata arrays, the key, decoded escapes, then the text. Offsets in 32 bits: objects are
  // smaller than max_object_bytes.
  const char* tail() const noexcept { return reinterpret_cast<const char*>(this + 1); }
  std::uint32_t text_at_ = 0, size_ = 0;
  std::uint32_t block_bytes_ = 0; // the control block, this object and the tail
  std::uint32_t metadata_begin_ = 0, metadata_end_ = 0; // in the text; empty: no "metadata"
  // The compressed text's bytes at text_at_ (its dictionary right before them); 0: the text is
  // there as it is. (In what was padding before generation_.)
  std::uint32_t packed_bytes_ = 0;
  text_span key_, kind_, api_version_;
  text_span namespace_, name_, uid_, resource_version_, deletion_timestamp_;
  std::int64_t generation_ = 0;
  std::uint32_t labels_at_ = 0, labels_ = 0;
  std::uint32_t annotations_at_ = 0, annotations_ = 0;
  std::uint32_t owners_at_ = 0, owners_ = 0;
};

// Reads a dotted path ("status.phase", "spec.nodeName", "metadata.name") as a string, the way
// field selectors compare values: strings as they are, booleans and numbers as their JSON text.
std::optional<std::string> field_value(const object& obj, std::string_view dotted_path);

} // namespace kinformer
