#pragma once
// Secondary indexes over the informer's store: client-go's Indexers/Indices
// (tools/cache/index.go, thread_safe_store.go) plus controller-runtime's field indexes.
//
// An index maps each object to zero or more values; a bucket per value holds the keys of the
// objects that yield it. The writer (the store, on the informer's thread) maintains the buckets
// as objects come and go; readers get an immutable `index_snapshot`. Both the value maps and the
// buckets are copy-on-write (see cow_shards.hpp), so a snapshot costs O(#indexes x #shards) and
// a write copies only the shard and the bucket it touches, and only once per snapshot.

#include "actors/cow_shards.hpp"
#include "actors/key_set.hpp"
#include "protocol/object.hpp"
#include "protocol/result.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kinformer {

// The values an object is indexed under. Duplicates are ignored; no values: not indexed.
using index_func = std::function<std::vector<std::string>(const object&)>;

// The index every store has: objects by namespace ("" for cluster-scoped ones), as client-go's
// cache.NamespaceIndex.
inline constexpr std::string_view namespace_index_name = "namespace";

// controller-runtime's conventions for field indexes (pkg/cache/internal/cache_reader.go):
// the index over `field` is named "field:<field>", and a value is keyed "<namespace>/<value>",
// plus "__all_namespaces/<value>" so a list across all namespaces finds it too. Cluster-scoped
// objects get only the all-namespaces key.
inline constexpr std::string_view all_namespaces_namespace = "__all_namespaces";
std::string field_index_name(std::string_view field);
// The index key to look up for `value` in namespace `ns` ("" = all namespaces).
std::string namespaced_index_key(std::string_view ns, std::string_view value);
// Wraps `extract` (an object's raw field values) into an index function producing the
// namespace-qualified keys above, as controller-runtime's IndexField does.
index_func make_field_index_func(index_func extract);
// Reads `dotted_path` the way a field selector does: a missing field reads as "".
index_func field_path_extractor(std::string dotted_path);

using index_key_set = key_set;

// Every index's value map: value -> bucket of object keys, each bucket shared until written.
using index_value_map = cow_shards<
    std::unordered_map<std::string, std::shared_ptr<index_key_set>, string_hash, std::equal_to<>>>;

// An immutable view of every index at one moment. Safe to read from any thread.
class index_snapshot {
public:
  bool has_index(std::string_view name) const;
  // The keys of the objects indexed under `value`; null when there are none. Fails when there
  // is no index `name`.
  result<const index_key_set*> bucket(std::string_view name, std::string_view value) const;
  // As `bucket`, copied out (client-go's IndexKeys).
  result<std::vector<std::string>> index_keys(std::string_view name, std::string_view value) const;
  // Every value with at least one object (client-go's ListIndexFuncValues).
  result<std::vector<std::string>> list_index_values(std::string_view name) const;
  // Approximate heap bytes of the buckets and value maps.
  std::size_t heap_bytes() const;

private:
  friend class indexer;
  const index_value_map::frozen* find(std::string_view name) const;

  std::shared_ptr<const std::vector<std::string>> names_;
  std::vector<index_value_map::frozen> values_; // parallel to *names_
};

class indexer {
public:
  // Starts with the namespace index. `shard_count` shards per index value map.
  explicit indexer(std::size_t shard_count = 64);

  // Adds an index and indexes `existing` (the store's objects) in it. Fails when the name is
  // already taken (client-go refuses to redefine an index too).
  status_result add_index(std::string name, index_func fn, const std::vector<object_ptr>& existing);
  bool has_index(std::string_view name) const;

  void on_add(const object& obj);
  void on_update(const object& old_obj, const object& new_obj);
  void on_delete(const object& obj);

  index_snapshot snapshot() const;

private:
  struct index {
    index_func fn; // empty for the namespace index, which reads the namespace without allocating
    index_value_map values;
  };

  void values_of(const index& idx, const object& obj, std::vector<std::string>& out) const;
  void insert(index& idx, std::string_view value, std::string_view key);
  void erase(index& idx, std::string_view value, std::string_view key);

  std::size_t shard_count_;
  std::shared_ptr<const std::vector<std::string>> names_;
  std::vector<index> indexes_;                       // parallel to *names_
  std::vector<std::string> old_values_, new_values_; // scratch, reused across updates
};

} // namespace kinformer
