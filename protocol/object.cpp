#include "protocol/object.hpp"

#include "protocol/object_scan.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstring>

namespace json = boost::json;

namespace kinformer {

namespace {

std::optional<std::string_view> find_in(const string_map_view& m, std::string_view key) {
  auto it = std::lower_bound(m.begin(), m.end(), key,
                             [](const auto& kv, std::string_view k) { return kv.first < k; });
  if (it != m.end() && it->first == key)
    return it->second;
  return std::nullopt;
}

// A copy of `text` followed by the padding object_scan needs.
std::unique_ptr<char[]> padded_copy(std::string_view text) {
  std::unique_ptr<char[]> out(new char[text.size() + scan_padding]);
  std::memcpy(out.get(), text.data(), text.size());
  std::memset(out.get() + text.size(), ' ', scan_padding);
  return out;
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

} // namespace

std::optional<std::string_view> object_meta::label(std::string_view key) const {
  return find_in(labels, key);
}

std::optional<std::string_view> object_meta::annotation(std::string_view key) const {
  return find_in(annotations, key);
}

// Turns a scan of an object's text into the object: the scan's byte ranges become views into
// the object's own copy of the text.
struct object::builder {
  const object_scan& scan;
  object& obj;
  std::size_t shift = 0; // the scan's offset of the object's first byte
  // A type prefix put in place of the opening brace at `brace` moves what follows it.
  std::size_t brace = std::string_view::npos;
  std::size_t inserted = 0;
  char* decoded_at = nullptr; // next free byte of obj.decoded_

  // Where a scanned offset is in the object's own text.
  std::size_t at(std::size_t scanned) const {
    return scanned - shift + (brace != std::string_view::npos && scanned > brace ? inserted : 0);
  }

  std::string_view view(const scanned_string& s) {
    if (!s.present)
      return {};
    if (!s.escaped)
      return {obj.text_.get() + at(s.begin), s.size};
    std::memcpy(decoded_at, s.unescaped.data(), s.unescaped.size());
    std::string_view out(decoded_at, s.unescaped.size());
    decoded_at += s.unescaped.size();
    return out;
  }

  string_map_view map(const std::vector<std::pair<scanned_string, scanned_string>>& entries) {
    string_map_view out;
    out.reserve(entries.size());
    for (const auto& [k, v] : entries)
      out.emplace_back(view(k), view(v));
    // Sorted for lookups; a key given twice keeps its last value, as a JSON decoder would.
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    auto last = std::unique(out.rbegin(), out.rend(),
                            [](const auto& a, const auto& b) { return a.first == b.first; });
    out.erase(out.begin(), last.base());
    out.shrink_to_fit();
    return out;
  }

  void build() {
    if (scan.escaped_bytes != 0) {
      obj.decoded_.reset(new char[scan.escaped_bytes]);
      decoded_at = obj.decoded_.get();
    }
    if (scan.metadata.present) {
      obj.metadata_begin_ = static_cast<std::uint32_t>(at(scan.metadata.begin));
      obj.metadata_end_ = static_cast<std::uint32_t>(at(scan.metadata.end));
    }
    obj.kind_ = view(scan.kind);
    obj.api_version_ = view(scan.api_version);
    object_meta& m = obj.meta_;
    m.namespace_ = view(scan.namespace_);
    m.name = view(scan.name);
    m.uid = view(scan.uid);
    m.resource_version = view(scan.resource_version);
    m.deletion_timestamp = view(scan.deletion_timestamp);
    m.generation = scan.generation;
    m.labels = map(scan.labels);
    m.annotations = map(scan.annotations);
    m.owner_references.reserve(scan.owner_references.size());
    for (const auto& r : scan.owner_references)
      m.owner_references.push_back(owner_reference{view(r.api_version), view(r.kind), view(r.name),
                                                   view(r.uid), r.controller,
                                                   r.block_owner_deletion});
    obj.key_ = make_object_key(m.namespace_, m.name);
  }
};

object::~object() = default;

result<object_ptr> object::parse(std::string_view json_text, const object_transform* transform,
                                 const item_type* fill_type) {
  if (transform && *transform) {
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
    (*transform)(tree);
    return parse(json::serialize(tree));
  }

  thread_local object_scan scan;
  auto obj = std::shared_ptr<object>(new object());
  obj->text_ = padded_copy(json_text);
  obj->size_ = json_text.size();
  auto scanned = scan_object(obj->json_text(), scan);
  if (!scanned)
    return std::move(scanned).err();
  if (needs_type(scan, fill_type) && (scan.type_members || needs_escape(*fill_type))) {
    // "kind": "" or "apiVersion": null in the text: replaced in a tree, not duplicated.
    static const object_transform keep_as_is = [](json::value&) {};
    return parse(json_text, &keep_as_is, fill_type);
  }
  if (needs_type(scan, fill_type)) {
    // The type goes in place of the opening brace: the text is copied once more and every range
    // moves by the prefix; nothing is scanned again.
    const std::string prefix = type_prefix(*fill_type, scan.has_members);
    const std::size_t brace = scan.object.begin;
    std::string filled;
    filled.reserve(json_text.size() + prefix.size());
    filled.append(json_text.substr(0, brace)).append(prefix).append(json_text.substr(brace + 1));
    obj->text_ = padded_copy(filled);
    obj->size_ = filled.size();
    builder{scan, *obj, 0, brace, prefix.size() - 1}.build();
    // kind and apiVersion are the prefix's strings: `{"kind":"Pod","apiVersion":"v1"`.
    const char* base = obj->text_.get() + brace;
    const std::size_t kind_at = std::string_view(R"({"kind":")").size();
    const std::size_t version_at =
        kind_at + fill_type->kind.size() + std::string_view(R"(","apiVersion":")").size();
    obj->kind_ = std::string_view(base + kind_at, fill_type->kind.size());
    obj->api_version_ = std::string_view(base + version_at, fill_type->api_version.size());
    return object_ptr(std::move(obj));
  }
  builder{scan, *obj}.build();
  return object_ptr(std::move(obj));
}

result<object_ptr> object::from_scan(std::string_view buffer, const object_scan& scan) {
  const std::string_view text =
      buffer.substr(scan.object.begin, scan.object.end - scan.object.begin);
  auto obj = std::shared_ptr<object>(new object());
  obj->text_ = padded_copy(text);
  obj->size_ = text.size();
  builder{scan, *obj, scan.object.begin}.build();
  return object_ptr(std::move(obj));
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
  json::parse_options options;
  options.max_depth = 256;
  // The text was validated when the object was made: this cannot fail.
  return json::parse(json_text(), {}, options);
}

std::size_t object::heap_bytes() const noexcept {
  std::size_t n = sizeof(object) + size_ + scan_padding + key_.capacity();
  n += (meta_.labels.capacity() + meta_.annotations.capacity()) *
       sizeof(string_map_view::value_type);
  n += meta_.owner_references.capacity() * sizeof(owner_reference);
  return n;
}

object_ptr object::to_partial_metadata() const {
  std::string text = R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":)";
  // The metadata's own text is copied as it is.
  if (metadata_end_ > metadata_begin_)
    text.append(text_.get() + metadata_begin_, metadata_end_ - metadata_begin_);
  else
    text += "{}";
  text += "}";
  // Every field of the source was already validated, so this cannot fail.
  return *parse(text);
}

std::optional<std::string> object::field(std::string_view dotted_path) const {
  if (dotted_path == "metadata.name")
    return std::string(meta_.name);
  if (dotted_path == "metadata.namespace")
    return std::string(meta_.namespace_);
  return scan_field({text_.get(), size_}, dotted_path);
}

std::optional<std::string> field_value(const object& obj, std::string_view dotted_path) {
  return obj.field(dotted_path);
}

} // namespace kinformer
