#pragma once
// The object handle: one immutable, parsed Kubernetes object, shared by pointer.
//
// An object owns its JSON tree (in its own arena) and reads the metadata fields once, as views
// into that tree. It is never modified after construction, so `object_ptr` can be handed between
// threads and actors freely: copying the pointer is the only copy ever made.

#include "protocol/gvk.hpp"
#include "protocol/result.hpp"

#include <boost/json/fwd.hpp>

namespace boost::json {
class monotonic_resource;
} // namespace boost::json

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kinformer {

class object;
using object_ptr = std::shared_ptr<const object>;

// Labels and annotations as views into the object's JSON, sorted by key.
using string_map_view = std::vector<std::pair<std::string_view, std::string_view>>;

struct owner_reference {
  std::string_view api_version;
  std::string_view kind;
  std::string_view name;
  std::string_view uid;
  bool controller = false;
  bool block_owner_deletion = false;
};

// The fields of ObjectMeta every component needs, read once at construction.
struct object_meta {
  std::string_view namespace_;
  std::string_view name;
  std::string_view uid;
  std::string_view resource_version;
  std::int64_t generation = 0;
  std::string_view deletion_timestamp; // empty unless the object is being deleted
  string_map_view labels;
  string_map_view annotations;
  std::vector<owner_reference> owner_references;

  // The label value for `key`, if present.
  std::optional<std::string_view> label(std::string_view key) const;
  std::optional<std::string_view> annotation(std::string_view key) const;
};

// Applied to a freshly parsed object before it is frozen (for example, dropping
// metadata.managedFields). It receives the whole object value and may change it in place.
using object_transform = std::function<void(boost::json::value&)>;

class object {
public:
  // Builds an object from a JSON value: copies `value` into the object's own arena, after
  // applying `transform` to a mutable copy when one is given. Fails when `value` is not a JSON
  // object or its metadata has the wrong shape.
  static result<object_ptr> from_json(const boost::json::value& value,
                                      const object_transform* transform = nullptr);
  // Takes ownership of `value` without copying when it is allocated with the default
  // allocator, copying otherwise.
  static result<object_ptr> from_json(boost::json::value&& value,
                                      const object_transform* transform = nullptr);
  // Takes `value` together with the arena it was parsed into, without copying: the object keeps
  // the arena alive. `value` must be allocated from `arena` (anything else in the arena, such as
  // a watch event's envelope, stays until the object goes). With a transform, the transformed
  // tree is copied into a right-sized arena instead, so that what the transform dropped is freed.
  static result<object_ptr> adopt(std::unique_ptr<boost::json::monotonic_resource> arena,
                                  boost::json::value&& value,
                                  const object_transform* transform = nullptr);
  // Parses JSON text and builds an object.
  static result<object_ptr> parse(std::string_view json_text,
                                  const object_transform* transform = nullptr);

  object(const object&) = delete;
  object& operator=(const object&) = delete;
  ~object();

  // The tree, read-only. To copy it, give the copy its own storage:
  // `boost::json::value copy(obj->json(), {})`. Boost.JSON's plain copy constructor allocates
  // from the source's resource, which is this object's arena: that is not thread-safe and
  // grows the arena for as long as the object lives.
  const boost::json::value& json() const noexcept;
  const object_meta& meta() const noexcept { return meta_; }
  // "namespace/name", or "name" when cluster-scoped.
  const std::string& key() const noexcept { return key_; }
  std::string_view kind() const noexcept { return kind_; }
  std::string_view api_version() const noexcept { return api_version_; }

  // The JSON text of the whole object (serialised on every call).
  std::string to_json() const;
  // Approximate heap bytes held by this object: for memory accounting.
  std::size_t heap_bytes() const noexcept;

  // A metadata-only projection of this object as PartialObjectMetadata
  // (apiVersion meta.k8s.io/v1), keeping the original kind and apiVersion in `typeMeta`-less form
  // exactly as the API server returns it for `as=PartialObjectMetadata`.
  object_ptr to_partial_metadata() const;

private:
  struct body;
  explicit object(std::unique_ptr<body> b);
  static result<object_ptr> finish(std::unique_ptr<body> b);
  static std::unique_ptr<body> copy_into_arena(const boost::json::value& v);

  std::unique_ptr<body> body_;
  object_meta meta_;
  std::string key_;
  std::string_view kind_;
  std::string_view api_version_;
};

// Reads a dotted path ("status.phase", "spec.nodeName", "metadata.name") as a string, the way
// field selectors compare values: strings as they are, booleans and numbers as their JSON text.
std::optional<std::string> field_value(const object& obj, std::string_view dotted_path);

} // namespace kinformer
