#include "protocol/object.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace json = boost::json;

namespace kinformer {

// The JSON tree and the arena it lives in. The arena is absent when the tree uses the default
// allocator (adopted as it was parsed).
struct object::body {
  body() = default;
  // The tree is constructed in the arena: assigning a value from another resource would copy
  // it back onto the default heap.
  body(std::unique_ptr<json::monotonic_resource> a, json::value&& v)
      : arena(std::move(a)), value(std::move(v), json::storage_ptr(arena.get())) {}
  body(std::unique_ptr<json::monotonic_resource> a, const json::value& v)
      : arena(std::move(a)), value(v, json::storage_ptr(arena.get())) {}

  std::unique_ptr<unsigned char[]> buffer; // the arena's memory when sized up front
  std::unique_ptr<json::monotonic_resource> arena;
  json::value value;
};

namespace {

// A rough count of the bytes a copy of `v` needs, so the arena is allocated once.
std::size_t estimate_bytes(const json::value& v) {
  switch (v.kind()) {
  case json::kind::string:
    return v.get_string().size() + 1;
  case json::kind::array: {
    std::size_t n = v.get_array().size() * sizeof(json::value) + 16;
    for (const auto& e : v.get_array())
      n += estimate_bytes(e);
    return n;
  }
  case json::kind::object: {
    std::size_t n = v.get_object().size() * (sizeof(json::key_value_pair) + 8) + 32;
    for (const auto& kv : v.get_object())
      n += kv.key().size() + 1 + estimate_bytes(kv.value());
    return n;
  }
  default:
    return 0;
  }
}

result<std::string_view> string_field(const json::object& o, std::string_view name,
                                      std::string_view where) {
  auto it = o.find(name);
  if (it == o.end() || it->value().is_null())
    return std::string_view{};
  if (!it->value().is_string())
    return make_error(errc::invalid_object,
                      std::string(where) + "." + std::string(name) + " must be a string");
  const auto& s = it->value().get_string();
  return std::string_view(s.data(), s.size());
}

result<string_map_view> string_map_field(const json::object& meta, std::string_view name) {
  string_map_view out;
  auto it = meta.find(name);
  if (it == meta.end() || it->value().is_null())
    return out;
  if (!it->value().is_object())
    return make_error(errc::invalid_object, "metadata." + std::string(name) + " must be an object");
  const auto& m = it->value().get_object();
  out.reserve(m.size());
  for (const auto& kv : m) {
    if (!kv.value().is_string())
      return make_error(errc::invalid_object, "metadata." + std::string(name) + "." +
                                                  std::string(kv.key()) + " must be a string");
    const auto& s = kv.value().get_string();
    out.emplace_back(std::string_view(kv.key().data(), kv.key().size()),
                     std::string_view(s.data(), s.size()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string_view> find_in(const string_map_view& m, std::string_view key) {
  auto it = std::lower_bound(m.begin(), m.end(), key,
                             [](const auto& kv, std::string_view k) { return kv.first < k; });
  if (it != m.end() && it->first == key)
    return it->second;
  return std::nullopt;
}

} // namespace

std::optional<std::string_view> object_meta::label(std::string_view key) const {
  return find_in(labels, key);
}

std::optional<std::string_view> object_meta::annotation(std::string_view key) const {
  return find_in(annotations, key);
}

object::object(std::unique_ptr<body> b) : body_(std::move(b)) {}
object::~object() = default;

const json::value& object::json() const noexcept {
  return body_->value;
}

result<object_ptr> object::finish(std::unique_ptr<body> b) {
  if (!b->value.is_object())
    return make_error(errc::invalid_object, "a Kubernetes object must be a JSON object");
  // std::make_shared cannot reach the private constructor.
  auto obj = std::shared_ptr<object>(new object(std::move(b)));
  const auto& root = obj->body_->value.get_object();

  auto kind = string_field(root, "kind", "object");
  if (!kind)
    return std::move(kind).err();
  auto api_version = string_field(root, "apiVersion", "object");
  if (!api_version)
    return std::move(api_version).err();
  obj->kind_ = *kind;
  obj->api_version_ = *api_version;

  auto mit = root.find("metadata");
  if (mit != root.end() && !mit->value().is_null()) {
    if (!mit->value().is_object())
      return make_error(errc::invalid_object, "metadata must be an object");
    const auto& meta = mit->value().get_object();
    object_meta& m = obj->meta_;
    for (auto [field, target] :
         {std::pair{"namespace", &m.namespace_}, std::pair{"name", &m.name},
          std::pair{"uid", &m.uid}, std::pair{"resourceVersion", &m.resource_version},
          std::pair{"deletionTimestamp", &m.deletion_timestamp}}) {
      auto v = string_field(meta, field, "metadata");
      if (!v)
        return std::move(v).err();
      *target = *v;
    }
    if (auto git = meta.find("generation"); git != meta.end() && !git->value().is_null()) {
      if (auto g = git->value().if_int64())
        m.generation = *g;
      else if (auto u = git->value().if_uint64())
        m.generation = static_cast<std::int64_t>(*u);
      else
        return make_error(errc::invalid_object, "metadata.generation must be an integer");
    }
    auto labels = string_map_field(meta, "labels");
    if (!labels)
      return std::move(labels).err();
    m.labels = std::move(*labels);
    auto annotations = string_map_field(meta, "annotations");
    if (!annotations)
      return std::move(annotations).err();
    m.annotations = std::move(*annotations);

    if (auto oit = meta.find("ownerReferences"); oit != meta.end() && !oit->value().is_null()) {
      if (!oit->value().is_array())
        return make_error(errc::invalid_object, "metadata.ownerReferences must be an array");
      for (const auto& ref : oit->value().get_array()) {
        if (!ref.is_object())
          return make_error(errc::invalid_object, "metadata.ownerReferences[] must be objects");
        const auto& r = ref.get_object();
        owner_reference out;
        for (auto [field, target] :
             {std::pair{"apiVersion", &out.api_version}, std::pair{"kind", &out.kind},
              std::pair{"name", &out.name}, std::pair{"uid", &out.uid}}) {
          auto v = string_field(r, field, "metadata.ownerReferences[]");
          if (!v)
            return std::move(v).err();
          *target = *v;
        }
        if (auto c = r.find("controller"); c != r.end() && c->value().is_bool())
          out.controller = c->value().get_bool();
        if (auto b = r.find("blockOwnerDeletion"); b != r.end() && b->value().is_bool())
          out.block_owner_deletion = b->value().get_bool();
        m.owner_references.push_back(out);
      }
    }
  }
  obj->key_ = make_object_key(obj->meta_.namespace_, obj->meta_.name);
  return object_ptr(std::move(obj));
}

std::unique_ptr<object::body> object::copy_into_arena(const json::value& v) {
  // The arena gets one buffer of the estimated size (an upper bound); its own first block would
  // be rounded up to a power of two, wasting up to half of it for as long as the object lives.
  const std::size_t size = estimate_bytes(v) + 64;
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[size]);
  auto b = std::make_unique<object::body>(
      std::make_unique<json::monotonic_resource>(buffer.get(), size), v);
  b->buffer = std::move(buffer);
  return b;
}

result<object_ptr> object::adopt(std::unique_ptr<json::monotonic_resource> arena,
                                 json::value&& value, const object_transform* transform) {
  if (transform && *transform) {
    (*transform)(value);
    return finish(copy_into_arena(value));
  }
  // Same resource on both sides: the tree moves, nothing is copied.
  return finish(std::make_unique<body>(std::move(arena), std::move(value)));
}

result<object_ptr> object::from_json(const json::value& value, const object_transform* transform) {
  if (transform && *transform) {
    json::value scratch(value);
    (*transform)(scratch);
    return finish(copy_into_arena(scratch));
  }
  return finish(copy_into_arena(value));
}

result<object_ptr> object::from_json(json::value&& value, const object_transform* transform) {
  if (transform && *transform)
    (*transform)(value);
  if (value.storage().get() == json::storage_ptr().get()) {
    auto b = std::make_unique<body>();
    b->value = std::move(value);
    return finish(std::move(b));
  }
  return finish(copy_into_arena(value));
}

result<object_ptr> object::parse(std::string_view json_text, const object_transform* transform) {
  json::monotonic_resource scratch(json_text.size() * 2 + 256);
  boost::system::error_code ec;
  json::value v = json::parse(json_text, ec, json::storage_ptr(&scratch));
  if (ec)
    return make_error(errc::invalid_json, ec.message());
  if (transform && *transform)
    (*transform)(v);
  return finish(copy_into_arena(v));
}

std::string object::to_json() const {
  return json::serialize(body_->value);
}

std::size_t object::heap_bytes() const noexcept {
  std::size_t n = sizeof(object) + sizeof(body) + key_.capacity();
  n += (meta_.labels.capacity() + meta_.annotations.capacity()) *
       sizeof(string_map_view::value_type);
  n += meta_.owner_references.capacity() * sizeof(owner_reference);
  n += estimate_bytes(body_->value);
  return n;
}

object_ptr object::to_partial_metadata() const {
  json::object out;
  out["kind"] = "PartialObjectMetadata";
  out["apiVersion"] = "meta.k8s.io/v1";
  const auto& root = body_->value.get_object();
  if (auto it = root.find("metadata"); it != root.end())
    out["metadata"] = it->value();
  else
    out["metadata"] = json::object();
  // Every field of the source was already validated, so this cannot fail.
  return *finish(copy_into_arena(json::value(std::move(out))));
}

std::optional<std::string> field_value(const object& obj, std::string_view dotted_path) {
  const json::value* cur = &obj.json();
  while (!dotted_path.empty()) {
    auto dot = dotted_path.find('.');
    auto part = dotted_path.substr(0, dot);
    dotted_path = dot == std::string_view::npos ? std::string_view{} : dotted_path.substr(dot + 1);
    if (!cur->is_object())
      return std::nullopt;
    auto it = cur->get_object().find(part);
    if (it == cur->get_object().end())
      return std::nullopt;
    cur = &it->value();
  }
  switch (cur->kind()) {
  case json::kind::string:
    return std::string(cur->get_string());
  case json::kind::null:
    return std::nullopt;
  case json::kind::object:
  case json::kind::array:
    return std::nullopt;
  default:
    return json::serialize(*cur);
  }
}

} // namespace kinformer
