#include "protocol/object.hpp"

#include "protocol/held_objects.hpp"
#include "protocol/object_memory.hpp"
#include "protocol/object_packer.hpp"
#include "protocol/object_scan.hpp"
#include "protocol/prefault.hpp"
#include "protocol/text_dictionary.hpp"
#include "protocol/transforms.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

namespace json = boost::json;

namespace kinformer {

namespace {

// The tail make() asks allocate() for, and where allocate() put it. Per thread, and read right
// after allocate_shared: the allocator itself holds nothing, so the control block stores no copy
// of it (16 bytes a stored object saves).
struct tail_request {
  std::size_t tail_bytes = 0;
  char* tail = nullptr;
  std::size_t block_bytes = 0;
};
thread_local tail_request pending_tail;

// Adds pending_tail.tail_bytes after what allocate_shared asks for, right after it: the control
// block's last member is the object, so the tail begins where the object ends (make() checks).
// The object, its control block and its text are one allocation.
template <class T>
struct tail_allocator {
  using value_type = T;

  tail_allocator() noexcept = default;
  template <class U>
  tail_allocator(const tail_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t head = n * sizeof(T);
    char* block = static_cast<char*>(allocate_object_block(head + pending_tail.tail_bytes));
    note_bulk_allocation(block, head + pending_tail.tail_bytes); // a list's objects: map ahead
    pending_tail.tail = block + head;
    pending_tail.block_bytes = head + pending_tail.tail_bytes;
    return reinterpret_cast<T*>(block);
  }
  // Often on another thread than allocate(): freed on the next allocate()'s (object_memory.hpp).
  void deallocate(T* p, std::size_t) noexcept { release_object_block(p); }
  template <class U>
  bool operator==(const tail_allocator<U>&) const noexcept {
    return true;
  }
};

std::size_t decoded_size(const scanned_string& s) {
  return !s.present ? 0 : s.escaped ? s.unescaped.size() : s.size;
}

// A thread's padded copy of `text`, scanned in place of the caller's bytes, which may end
// anywhere (a watch line's object lies in decode.cpp's own buffer, never in this one).
std::string_view padded_scratch(std::string_view text) {
  thread_local std::string scratch;
  return padded_copy(scratch, text);
}

// `{"kind":"Pod","apiVersion":"v1",` for an item that names no type (no comma for `{}`).
std::string type_prefix(const item_type& type, bool has_members) {
  std::string out = "{\"kind\":" + json::serialize(json::string_view(type.kind)) +
                    ",\"apiVersion\":" + json::serialize(json::string_view(type.api_version));
  out += has_members ? "," : "";
  return out;
}

// A kind or apiVersion whose JSON form is not the plain text in quotes (never, for real kinds).
bool needs_escape(const item_type& type) {
  auto plain = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) {
      return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    });
  };
  return !plain(type.kind) || !plain(type.api_version);
}

bool needs_type(const object_scan& scan, const item_type* fill) {
  auto missing = [](const scanned_string& s) { return !s.present || s.size == 0; };
  return fill && !fill->kind.empty() && missing(scan.kind) && missing(scan.api_version);
}

// Whether the cut would not do what the transform does on a tree: managedFields given twice (a
// tree keeps the last, and the transform erases it), or a key in the metadata that may be
// "managedFields" written with escapes (a letter can only be escaped as \uXXXX), which the scan
// does not read as that name. Both are rare; the tree decides them.
bool cut_in_doubt(const object_scan& scan, std::string_view scanned_text) {
  if (scan.managed_fields_members > 1)
    return true;
  if (!scan.metadata.present)
    return false;
  const std::string_view metadata =
      scanned_text.substr(scan.metadata.begin, scan.metadata.end - scan.metadata.begin);
  return metadata.find("\\u") != std::string_view::npos;
}

// A transform other than the managedFields cut: it works on a tree.
bool needs_tree(const object_transform* transform) {
  return transform && *transform && !cuts_managed_fields(transform);
}

// The transform when it is the cut, which works on the text as it is copied; null otherwise.
const object_transform* text_cut(const object_transform* transform) {
  return cuts_managed_fields(transform) ? transform : nullptr;
}

error too_large(std::size_t bytes) {
  return make_error(errc::too_large, "an object of " + std::to_string(bytes) +
                                         " bytes is too large to keep (at most " +
                                         std::to_string(max_object_bytes) +
                                         " bytes of text, and 4 GiB with its metadata)");
}

} // namespace

using dictionary_ref = std::shared_ptr<const text_dictionary>;

// What a packed object keeps in its tail right before its compressed text: its dictionary, and
// what its spans cannot tell of the text they no longer point into.
struct packed_header {
  dictionary_ref dictionary;
  std::uint32_t resource_version_at; // in the text; no_offset: none there
};
constexpr std::uint32_t no_offset = std::numeric_limits<std::uint32_t>::max();

std::size_t align_up(std::size_t n, std::size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// What make() puts after the object, in this order (arrays first, for their alignment). A
// packed object's strings are all decoded copies (its text is compressed), then come its
// dictionary and its compressed text.
struct object_tail {
  using label = text_pair;
  std::size_t labels = 0, annotations = 0, owners = 0, key = 0, decoded = 0, text = 0;
  bool packed = false;

  // `packed_bytes`: the compressed text's size, or 0 to keep the text as it is.
  object_tail(const object_scan& scan, std::size_t text_size, const item_type* filled,
              std::size_t packed_bytes)
      : labels(scan.labels.size()), annotations(scan.annotations.size()),
        owners(scan.owner_references.size()),
        key(decoded_size(scan.namespace_) + 1 + decoded_size(scan.name)),
        decoded(packed_bytes ? strings_bytes(scan, filled) : scan.escaped_bytes),
        text(packed_bytes ? packed_bytes : text_size), packed(packed_bytes != 0) {}

  // Every string a span of the object names, decoded.
  static std::size_t strings_bytes(const object_scan& scan, const item_type* filled) {
    std::size_t n = decoded_size(scan.namespace_) + decoded_size(scan.name) +
                    decoded_size(scan.uid) + decoded_size(scan.resource_version) +
                    decoded_size(scan.deletion_timestamp);
    n += filled ? filled->kind.size() + filled->api_version.size()
                : decoded_size(scan.kind) + decoded_size(scan.api_version);
    for (const auto& [k, v] : scan.labels)
      n += decoded_size(k) + decoded_size(v);
    for (const auto& [k, v] : scan.annotations)
      n += decoded_size(k) + decoded_size(v);
    for (const auto& r : scan.owner_references)
      n += decoded_size(r.api_version) + decoded_size(r.kind) + decoded_size(r.name) +
           decoded_size(r.uid);
    return n;
  }

  std::size_t labels_at() const { return 0; }
  std::size_t annotations_at() const { return labels_at() + labels * sizeof(label); }
  std::size_t owners_at() const { return annotations_at() + annotations * sizeof(label); }
  std::size_t key_at() const { return owners_at() + owners * sizeof(stored_owner_reference); }
  std::size_t decoded_at() const { return key_at() + key; }
  std::size_t header_at() const { return align_up(decoded_at() + decoded, alignof(packed_header)); }
  std::size_t text_at() const {
    return packed ? header_at() + sizeof(packed_header) : decoded_at() + decoded;
  }
  std::size_t bytes() const { return text_at() + text; }
};
static_assert(alignof(stored_owner_reference) <= alignof(object_tail::label));

// Turns a scan of an object's text into the object: the scan's byte ranges become spans in the
// object's own copy of the text, which the caller has written into the tail (or, for a packed
// object, copies of the strings they name).
struct object::builder {
  const object_scan& scan;
  object& obj;
  char* tail;
  const char* source;    // the scanned buffer: a scanned offset's byte is source[offset]
  std::size_t shift = 0; // the scan's offset of the object's first byte
  // A type prefix put in place of the opening brace at `brace` moves what follows it.
  std::size_t brace = std::string_view::npos;
  std::size_t inserted = 0;
  // Scanned bytes [cut_begin, cut_end) left out of the copy move what follows them back (no span
  // lies inside them). Empty: nothing cut.
  std::size_t cut_begin = 0, cut_end = 0;
  bool packed = false;
  std::size_t decoded_at = 0; // next free byte for decoded strings, in the tail

  // Where a scanned offset is in the tail.
  std::size_t at(std::size_t scanned) const {
    return obj.text_at_ + scanned - shift +
           (brace != std::string_view::npos && scanned > brace ? inserted : 0) -
           (scanned >= cut_end ? cut_end - cut_begin : 0);
  }

  text_span copy(std::string_view bytes) {
    if (!bytes.empty())
      std::memcpy(tail + decoded_at, bytes.data(), bytes.size());
    text_span out{static_cast<std::uint32_t>(decoded_at), static_cast<std::uint32_t>(bytes.size())};
    decoded_at += bytes.size();
    return out;
  }

  text_span span(const scanned_string& s) {
    if (!s.present)
      return {};
    if (s.escaped)
      return copy(s.unescaped);
    if (packed) // no text in the tail to point into
      return copy({source + s.begin, s.size});
    return {static_cast<std::uint32_t>(at(s.begin)), static_cast<std::uint32_t>(s.size)};
  }

  std::uint32_t map(const std::vector<std::pair<scanned_string, scanned_string>>& entries,
                    std::size_t offset) {
    auto* out = reinterpret_cast<text_pair*>(tail + offset);
    std::size_t n = 0;
    for (const auto& [k, v] : entries)
      new (out + n++) text_pair{span(k), span(v)};
    // Sorted for lookups; a key given twice keeps its last value, as a JSON decoder would. Short
    // maps (nearly all) by insertion: stable and in place, where std::stable_sort allocates.
    auto by_key = [this](const text_pair& a, const text_pair& b) {
      return a.key.in(tail) < b.key.in(tail);
    };
    if (n > 32) {
      std::stable_sort(out, out + n, by_key);
    } else {
      for (std::size_t i = 1; i < n; ++i)
        for (std::size_t j = i; j > 0 && by_key(out[j], out[j - 1]); --j)
          std::swap(out[j], out[j - 1]);
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (i + 1 == n || out[i + 1].key.in(tail) != out[i].key.in(tail))
        out[kept++] = out[i];
    return static_cast<std::uint32_t>(kept);
  }

  // kind and apiVersion of an item that named none: the prefix's strings,
  // `{"kind":"Pod","apiVersion":"v1"`, or copies of them.
  void fill_type(const item_type& filled) {
    if (packed) {
      obj.kind_ = copy(filled.kind);
      obj.api_version_ = copy(filled.api_version);
      return;
    }
    const std::size_t base = obj.text_at_ + scan.object.begin - shift;
    const std::size_t kind_at = std::string_view(R"({"kind":")").size();
    const std::size_t version_at =
        kind_at + filled.kind.size() + std::string_view(R"(","apiVersion":")").size();
    obj.kind_ = {static_cast<std::uint32_t>(base + kind_at),
                 static_cast<std::uint32_t>(filled.kind.size())};
    obj.api_version_ = {static_cast<std::uint32_t>(base + version_at),
                        static_cast<std::uint32_t>(filled.api_version.size())};
  }

  void build(const object_tail& layout, const item_type* filled) {
    decoded_at = layout.decoded_at();
    if (scan.metadata.present) {
      obj.metadata_begin_ = static_cast<std::uint32_t>(at(scan.metadata.begin) - obj.text_at_);
      obj.metadata_end_ = static_cast<std::uint32_t>(at(scan.metadata.end) - obj.text_at_);
    }
    if (filled) {
      fill_type(*filled);
    } else {
      obj.kind_ = span(scan.kind);
      obj.api_version_ = span(scan.api_version);
    }
    obj.namespace_ = span(scan.namespace_);
    obj.name_ = span(scan.name);
    obj.uid_ = span(scan.uid);
    obj.resource_version_ = span(scan.resource_version);
    obj.deletion_timestamp_ = span(scan.deletion_timestamp);
    obj.generation_ = scan.generation;
    obj.labels_at_ = static_cast<std::uint32_t>(layout.labels_at());
    obj.labels_ = map(scan.labels, layout.labels_at());
    obj.annotations_at_ = static_cast<std::uint32_t>(layout.annotations_at());
    obj.annotations_ = map(scan.annotations, layout.annotations_at());
    obj.owners_at_ = static_cast<std::uint32_t>(layout.owners_at());
    obj.owners_ = static_cast<std::uint32_t>(scan.owner_references.size());
    auto* owners = reinterpret_cast<stored_owner_reference*>(tail + layout.owners_at());
    for (std::size_t i = 0; i < scan.owner_references.size(); ++i) {
      const auto& r = scan.owner_references[i];
      new (owners + i)
          stored_owner_reference{span(r.api_version), span(r.kind), span(r.name),
                                 span(r.uid),         r.controller, r.block_owner_deletion};
    }
    // "namespace/name", or "name" when cluster-scoped (make_object_key's form).
    const std::string_view ns = obj.namespace_.in(tail), name = obj.name_.in(tail);
    char* key = tail + layout.key_at();
    std::size_t key_size = 0;
    if (!ns.empty()) {
      std::memcpy(key, ns.data(), ns.size());
      key_size = ns.size();
      key[key_size++] = '/';
    }
    if (!name.empty()) // an absent name is a null view: memcpy must not see it
      std::memcpy(key + key_size, name.data(), name.size());
    obj.key_ = {static_cast<std::uint32_t>(layout.key_at()),
                static_cast<std::uint32_t>(key_size + name.size())};
  }
};

namespace {

// The object's text as make() keeps it: `text` copied in up to three runs, up to the opening
// brace (replaced by the type prefix), up to the cut, and the rest. The brace comes before the
// cut, which is in metadata. Offsets are the scan's (`shift` is the text's first byte).
struct text_copy {
  std::string_view text;
  std::size_t shift;
  std::size_t brace; // scanned; npos: no prefix
  std::string_view type_prefix;
  std::size_t cut_begin, cut_end; // scanned; equal: nothing cut

  std::size_t size() const {
    return text.size() + (type_prefix.empty() ? 0 : type_prefix.size() - 1) - (cut_end - cut_begin);
  }

  void write(char* out) const {
    std::size_t from = 0; // in `text`
    auto copy_to = [&](std::size_t to) {
      std::memcpy(out, text.data() + from, to - from);
      out += to - from;
    };
    if (!type_prefix.empty()) {
      copy_to(brace - shift);
      std::memcpy(out, type_prefix.data(), type_prefix.size());
      out += type_prefix.size();
      from = brace - shift + 1;
    }
    if (cut_end != cut_begin) {
      copy_to(cut_begin - shift);
      from = cut_end - shift;
    }
    copy_to(text.size());
  }
};

// The text compressed into `packed` with the dictionary `packer` has (null while it gathers
// samples, or when compressing saves nothing).
dictionary_ref pack(object_packer& packer, const text_copy& copy, std::string& packed) {
  thread_local std::string whole;
  whole.resize(copy.size());
  copy.write(whole.data());
  dictionary_ref dictionary = packer.dictionary_for(whole);
  if (!dictionary || !dictionary->compress(whole, packed))
    return nullptr;
  // The header in the tail: packing must save more than it.
  if (packed.size() + sizeof(packed_header) >= whole.size())
    return nullptr;
  return dictionary;
}

} // namespace

std::shared_ptr<object> object::make(const object_scan& scan, std::string_view text,
                                     std::size_t shift, const item_type* filled,
                                     bool cut_managed_fields, object_packer* packer) {
  const std::string prefix = filled ? type_prefix(*filled, scan.has_members) : std::string();
  text_copy copy{text, shift, scan.object.begin, prefix, 0, 0};
  if (cut_managed_fields && scan.managed_fields.present) {
    copy.cut_begin = scan.managed_fields.begin;
    copy.cut_end = scan.managed_fields.end;
  }
  thread_local std::string packed;
  dictionary_ref dictionary = packer ? pack(*packer, copy, packed) : nullptr;
  const object_tail layout(scan, copy.size(), filled, dictionary ? packed.size() : 0);
  // Spans are 32-bit offsets into the tail, and its arrays can outgrow the text (an owner
  // reference `{}` is 3 bytes of text and 36 in the tail).
  if (layout.bytes() > std::numeric_limits<std::uint32_t>::max() - 4096)
    return nullptr;
  pending_tail.tail_bytes = layout.bytes();
  auto obj = std::allocate_shared<object>(tail_allocator<object>(), construct_tag{});
  char* tail = pending_tail.tail;
  // tail() finds the tail at the object's end, where the control block ends: a library that
  // laid out its control block otherwise would fail every test that makes an object.
  if (tail != reinterpret_cast<char*>(obj.get() + 1))
    std::abort();
  obj->text_at_ = static_cast<std::uint32_t>(layout.text_at());
  obj->size_ = static_cast<std::uint32_t>(copy.size());
  obj->block_bytes_ = static_cast<std::uint32_t>(pending_tail.block_bytes);
  const std::size_t brace = prefix.empty() ? std::string_view::npos : scan.object.begin;
  object::builder build{scan,
                        *obj,
                        tail,
                        text.data() - shift,
                        shift,
                        brace,
                        prefix.empty() ? 0 : prefix.size() - 1,
                        copy.cut_begin,
                        copy.cut_end,
                        layout.packed};
  if (dictionary) {
    const scanned_string& version = scan.resource_version;
    const std::uint32_t version_at =
        version.present && !version.escaped && version.size > 0 // as resource_version_at()
            ? static_cast<std::uint32_t>(build.at(version.begin) - obj->text_at_)
            : no_offset;
    new (tail + layout.header_at()) packed_header{std::move(dictionary), version_at};
    std::memcpy(tail + layout.text_at(), packed.data(), packed.size());
    obj->packed_bytes_ = static_cast<std::uint32_t>(packed.size());
  } else {
    copy.write(tail + layout.text_at());
  }
  build.build(layout, filled);
  return obj;
}

// A packed object's header, right before its compressed text.
static const packed_header& header_of(const char* text) noexcept {
  return *std::launder(reinterpret_cast<const packed_header*>(text - sizeof(packed_header)));
}

object::~object() {
  if (packed_bytes_)
    std::destroy_at(&header_of(tail() + text_at_));
}

const dictionary_ref& object::dictionary() const noexcept {
  return header_of(tail() + text_at_).dictionary;
}

std::size_t object::resource_version_at() const noexcept {
  if (packed_bytes_) {
    const std::uint32_t at = header_of(tail() + text_at_).resource_version_at;
    return at == no_offset ? std::string_view::npos : at;
  }
  // Inside the text unless decoded (escaped) or absent.
  const text_span version = resource_version_;
  if (version.size == 0 || version.offset < text_at_ || version.offset - text_at_ >= size_)
    return std::string_view::npos;
  return version.offset - text_at_;
}

object_text object::unpacked_text() const {
  std::string text(size_, '\0');
  // The object's own bytes, compressed by the same dictionary: this cannot fail.
  if (!dictionary()->decompress({tail() + text_at_, packed_bytes_}, text.data(), text.size()))
    std::abort();
  return object_text(std::move(text));
}

std::string object::to_json() const {
  if (!packed_bytes_)
    return std::string(text_in_place());
  auto text = unpacked_text();
  return std::move(text.decompressed_);
}

// What a stored object costs beside its text (a pod's was 232 bytes with string views). A
// multiple of 8, so that the control block has no padding after it and the tail follows it.
static_assert(sizeof(object) <= 120 && sizeof(object) % alignof(void*) == 0);
static_assert(alignof(text_pair) <= alignof(void*) &&
              alignof(stored_owner_reference) <= alignof(void*)); // what the tail holds

// Takes the held object `scan` names; it, when at the scanned resourceVersion, or null.
static object_ptr held_at_same_version(held_objects& held, std::string_view text,
                                       const object_scan& scan) {
  auto scanned = [&](const scanned_string& s) -> std::string_view {
    if (!s.present)
      return {};
    return s.escaped ? std::string_view(s.unescaped) : text.substr(s.begin, s.size);
  };
  if (!scan.name.present || !scan.resource_version.present)
    return nullptr;
  auto found = held.take(scanned(scan.namespace_), scanned(scan.name));
  if (found && found->meta().resource_version == scanned(scan.resource_version))
    return found;
  return nullptr;
}

result<object_ptr> object::parse(std::string_view json_text, const object_transform* transform,
                                 const item_type* fill_type, held_objects* held,
                                 object_packer* packer) {
  if (json_text.size() > max_object_bytes)
    return too_large(json_text.size());
  if (needs_tree(transform))
    return parse_tree(json_text, *transform, fill_type, packer);
  return from_text(json_text, padded_scratch(json_text), fill_type, text_cut(transform), held,
                   packer);
}

result<object_ptr> object::parse_tree(std::string_view json_text, const object_transform& transform,
                                      const item_type* fill_type, object_packer* packer) {
  // The transform needs a tree: parse, fill, transform, and keep the result's text.
  boost::system::error_code ec;
  json::parse_options options;
  options.max_depth = 256;
  json::value tree = json::parse(json_text, ec, {}, options);
  if (ec)
    return make_error(errc::invalid_json, ec.message());
  if (auto* o = tree.if_object(); o && fill_type && !fill_type->kind.empty()) {
    auto missing = [&](std::string_view name) {
      auto it = o->find(name);
      return it == o->end() || it->value().is_null() ||
             (it->value().is_string() && it->value().get_string().empty());
    };
    if (missing("kind") && missing("apiVersion")) {
      (*o)["kind"] = fill_type->kind;
      (*o)["apiVersion"] = fill_type->api_version;
    }
  }
  transform(tree);
  return parse(json::serialize(tree), nullptr, nullptr, nullptr, packer);
}

result<object_ptr> object::parse_padded(std::string_view json_text,
                                        const object_transform* transform,
                                        const item_type* fill_type, held_objects* held,
                                        object_packer* packer) {
  if (json_text.size() > max_object_bytes || needs_tree(transform))
    return parse(json_text, transform, fill_type, held, packer);
  return from_text(json_text, json_text, fill_type, text_cut(transform), held, packer);
}

result<object_ptr> object::from_text(std::string_view json_text, std::string_view padded_text,
                                     const item_type* fill_type, const object_transform* cut,
                                     held_objects* held, object_packer* packer) {
  thread_local object_scan scan;
  auto scanned = scan_object(padded_text, scan);
  if (!scanned)
    return std::move(scanned).err();
  if (held)
    if (auto same = held_at_same_version(*held, padded_text, scan))
      return same;
  static const object_transform keep_as_is = [](json::value&) {};
  if (cut && cut_in_doubt(scan, padded_text))
    return parse_tree(json_text, *cut, fill_type, packer);
  if (needs_type(scan, fill_type) && (scan.type_members || needs_escape(*fill_type))) {
    // "kind": "" or "apiVersion": null in the text: replaced in a tree, not duplicated.
    return parse_tree(json_text, cut ? *cut : keep_as_is, fill_type, packer);
  }
  // A type to fill goes in place of the opening brace as the text is copied: every range moves
  // by the prefix; nothing is scanned again.
  const item_type* filled = needs_type(scan, fill_type) ? fill_type : nullptr;
  if (auto obj = make(scan, json_text, 0, filled, cut != nullptr, packer))
    return object_ptr(std::move(obj));
  return too_large(json_text.size());
}

result<object_ptr> object::from_scan(std::string_view buffer, const object_scan& scan,
                                     const object_transform* transform, object_packer* packer) {
  const std::string_view text =
      buffer.substr(scan.object.begin, scan.object.end - scan.object.begin);
  if (text.size() > max_object_bytes)
    return too_large(text.size());
  const object_transform* cut = text_cut(transform);
  if (needs_tree(transform) || (cut && cut_in_doubt(scan, buffer)))
    return parse_tree(text, *transform, nullptr, packer);
  if (auto obj = make(scan, text, scan.object.begin, nullptr, cut != nullptr, packer))
    return object_ptr(std::move(obj));
  return too_large(text.size());
}

result<object_ptr> object::from_json(const json::value& value, const object_transform* transform) {
  if (transform && *transform) {
    json::value scratch(value, json::storage_ptr());
    (*transform)(scratch);
    return parse(json::serialize(scratch));
  }
  return parse(json::serialize(value));
}

json::value object::tree() const {
  return tree({});
}

json::value object::tree(json::storage_ptr storage) const {
  json::parse_options options;
  options.max_depth = 256;
  // The text was validated when the object was made: this cannot fail.
  const auto text = json_text();
  return json::parse(text.view(), std::move(storage), options);
}

std::size_t object::heap_bytes() const noexcept {
  return block_bytes_;
}

std::string object::partial_metadata_json() const {
  std::string text = R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":)";
  // The metadata's own text is copied as it is.
  if (metadata_end_ > metadata_begin_) {
    const auto whole = json_text();
    text.append(whole.view().substr(metadata_begin_, metadata_end_ - metadata_begin_));
  } else
    text += "{}";
  text += "}";
  return text;
}

object_ptr object::to_partial_metadata() const {
  // Every field of the source was already validated, so this cannot fail.
  return *parse(partial_metadata_json());
}

std::optional<std::string> object::field(std::string_view dotted_path) const {
  if (dotted_path == "metadata.name")
    return std::string(name_.in(tail()));
  if (dotted_path == "metadata.namespace")
    return std::string(namespace_.in(tail()));
  // The stored text has no scan padding after it (64 bytes an object): scanned from a copy.
  const auto text = json_text();
  return scan_field(padded_scratch(text.view()), dotted_path);
}

std::optional<std::string> field_value(const object& obj, std::string_view dotted_path) {
  return obj.field(dotted_path);
}

} // namespace kinformer
