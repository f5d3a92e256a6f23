#include "actors/indexer.hpp"

#include <algorithm>

namespace kinformer {

std::string field_index_name(std::string_view field) {
  std::string name = "field:";
  name.append(field);
  return name;
}

std::string namespaced_index_key(std::string_view ns, std::string_view value) {
  std::string key(ns.empty() ? all_namespaces_namespace : ns);
  key.push_back('/');
  key.append(value);
  return key;
}

index_func make_field_index_func(index_func extract) {
  return [extract = std::move(extract)](const object& obj) {
    std::vector<std::string> raw = extract(obj);
    std::string_view ns = obj.meta().namespace_;
    std::vector<std::string> keys;
    keys.reserve(ns.empty() ? raw.size() : raw.size() * 2);
    for (const auto& value : raw) {
      keys.push_back(namespaced_index_key(ns, value));
      if (!ns.empty())
        keys.push_back(namespaced_index_key({}, value));
    }
    return keys;
  };
}

index_func field_path_extractor(std::string dotted_path) {
  return [path = std::move(dotted_path)](const object& obj) {
    return std::vector<std::string>{field_value(obj, path).value_or(std::string())};
  };
}

// ---- index_snapshot ----

const index_value_map::frozen* index_snapshot::find(std::string_view name) const {
  if (!names_)
    return nullptr;
  for (std::size_t i = 0; i < names_->size(); ++i)
    if ((*names_)[i] == name)
      return &values_[i];
  return nullptr;
}

bool index_snapshot::has_index(std::string_view name) const {
  return find(name) != nullptr;
}

namespace {
error no_such_index(std::string_view name) {
  return make_error(errc::not_found, "index with name " + std::string(name) + " does not exist");
}
} // namespace

result<const index_key_set*> index_snapshot::bucket(std::string_view name,
                                                    std::string_view value) const {
  const auto* values = find(name);
  if (!values)
    return no_such_index(name);
  const auto& shard = frozen_shard_for(*values, value);
  auto it = shard.find(value);
  return it == shard.end() ? nullptr : static_cast<const index_key_set*>(it->second.get());
}

result<std::vector<std::string>> index_snapshot::index_keys(std::string_view name,
                                                            std::string_view value) const {
  auto keys = bucket(name, value);
  if (!keys)
    return std::move(keys).err();
  if (!*keys)
    return std::vector<std::string>{};
  return std::vector<std::string>((*keys)->begin(), (*keys)->end());
}

result<std::vector<std::string>> index_snapshot::list_index_values(std::string_view name) const {
  const auto* values = find(name);
  if (!values)
    return no_such_index(name);
  std::vector<std::string> out;
  for (const auto& shard : *values)
    for (const auto& [value, keys] : *shard)
      out.push_back(value);
  return out;
}

std::size_t index_snapshot::heap_bytes() const {
  // A hash node is about two pointers plus the element; strings count their capacity.
  constexpr std::size_t node = 2 * sizeof(void*);
  std::size_t n = 0;
  for (const auto& values : values_)
    for (const auto& shard : values) {
      n += shard->bucket_count() * sizeof(void*);
      for (const auto& [value, keys] : *shard) {
        n += node + sizeof(value) + value.capacity() + sizeof(index_key_set);
        n += keys->heap_bytes();
      }
    }
  return n;
}

// ---- indexer ----

indexer::indexer(std::size_t shard_count)
    : shard_count_(shard_count), names_(std::make_shared<const std::vector<std::string>>(
                                     std::vector<std::string>{std::string(namespace_index_name)})) {
  indexes_.push_back(index{{}, index_value_map(shard_count_)});
}

bool indexer::has_index(std::string_view name) const {
  return std::find(names_->begin(), names_->end(), name) != names_->end();
}

status_result indexer::add_index(std::string name, index_func fn,
                                 const std::vector<object_ptr>& existing) {
  if (!fn)
    return make_error(errc::invalid_argument, "index " + name + " has no index function");
  if (has_index(name))
    return make_error(errc::invalid_argument, "index " + name + " already exists");
  // Snapshots hold the old name list: publish a new one rather than modifying it.
  auto names = std::make_shared<std::vector<std::string>>(*names_);
  names->push_back(std::move(name));
  names_ = std::move(names);
  auto& idx = indexes_.emplace_back(index{std::move(fn), index_value_map(shard_count_)});
  for (const auto& obj : existing) {
    values_of(idx, *obj, new_values_);
    for (const auto& value : new_values_)
      insert(idx, value, obj->key());
  }
  return ok_v;
}

void indexer::values_of(const index& idx, const object& obj, std::vector<std::string>& out) const {
  if (!idx.fn) {
    out.resize(1);
    out[0].assign(obj.meta().namespace_);
    return;
  }
  out = idx.fn(obj);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

void indexer::insert(index& idx, std::string_view value, std::string_view key) {
  auto& values = idx.values.mutable_shard_for(value);
  auto it = values.find(value);
  if (it == values.end())
    it = values.emplace(std::string(value), std::make_shared<index_key_set>()).first;
  ensure_exclusive(it->second).insert(key);
}

void indexer::erase(index& idx, std::string_view value, std::string_view key) {
  auto& values = idx.values.mutable_shard_for(value);
  auto it = values.find(value);
  if (it == values.end())
    return;
  auto& keys = ensure_exclusive(it->second);
  keys.erase(key);
  // Drop empty buckets so list_index_values only names values in use.
  if (keys.empty())
    values.erase(it);
}

void indexer::on_add(const object& obj) {
  for (auto& idx : indexes_) {
    values_of(idx, obj, new_values_);
    for (const auto& value : new_values_)
      insert(idx, value, obj.key());
  }
}

void indexer::on_delete(const object& obj) {
  for (auto& idx : indexes_) {
    values_of(idx, obj, old_values_);
    for (const auto& value : old_values_)
      erase(idx, value, obj.key());
  }
}

void indexer::on_update(const object& old_obj, const object& new_obj) {
  if (&old_obj == &new_obj)
    return;
  for (auto& idx : indexes_) {
    // The common case, an object staying in its namespace, touches nothing.
    if (!idx.fn && old_obj.meta().namespace_ == new_obj.meta().namespace_)
      continue;
    values_of(idx, old_obj, old_values_);
    values_of(idx, new_obj, new_values_);
    // Both are sorted and unique: move the key only between the buckets that differ.
    auto o = old_values_.begin();
    auto n = new_values_.begin();
    while (o != old_values_.end() || n != new_values_.end()) {
      if (n == new_values_.end() || (o != old_values_.end() && *o < *n))
        erase(idx, *o++, old_obj.key());
      else if (o == old_values_.end() || *n < *o)
        insert(idx, *n++, new_obj.key());
      else
        ++o, ++n;
    }
  }
}

index_snapshot indexer::snapshot() const {
  index_snapshot snap;
  snap.names_ = names_;
  snap.values_.reserve(indexes_.size());
  for (const auto& idx : indexes_)
    snap.values_.push_back(idx.values.freeze());
  return snap;
}

} // namespace kinformer
