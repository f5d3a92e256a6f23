#include "actors/store.hpp"

#include <algorithm>
#include <bit>
#include <unordered_set>
#include <utility>

namespace kinformer {

namespace {

// The stored objects at one moment, for the decode thread of one relist, which takes each listed
// item's object as the item arrives. From then on only the store keeps it, so a version the
// relist replaces is freed when the store drops it, batch by batch, not when the whole list is
// in. (The frozen shards alone, used before, kept every replaced version until the end.)
//
// Made on the writer thread from frozen shards, in O(#shards) as a snapshot is, so the list's
// first items are not decoded before it is there. At its first item the decode thread turns
// them into an open-addressed table of the objects themselves (their keys are in them; 24
// bytes a slot, at most 80% used: 3 MB for 100,000 pods) and lets the shards go, most likely
// before the writer has a batch of this list to write, so the writer copies no shard for it.
class handed_over_objects final : public held_objects {
public:
  explicit handed_over_objects(object_map::frozen shards) : shards_(std::move(shards)) {}

  object_ptr take(std::string_view namespace_, std::string_view name) override {
    if (!shards_.empty())
      build();
    thread_local std::string key; // the decode thread looks up every listed item
    key.assign(namespace_);
    if (!key.empty())
      key += '/';
    key.append(name);
    const std::size_t tag = tag_of(key);
    for (std::size_t i = tag & mask_;; i = (i + 1) & mask_) {
      auto& s = slots_[i];
      if (s.tag == 0)
        return nullptr;
      // A taken slot keeps its tag, so that the objects placed past it are still found.
      if (s.tag == tag && s.object && s.object->key() == key)
        return std::move(s.object);
    }
  }

private:
  struct slot {
    std::size_t tag = 0; // the key's hash with its lowest bit set; 0: never used
    object_ptr object;
  };

  static std::size_t tag_of(std::string_view key) { return string_hash{}(key) | 1; }

  void build() {
    std::size_t n = 0;
    for (const auto& shard : shards_)
      n += shard->size();
    slots_.resize(std::bit_ceil(n + n / 4 + 1));
    mask_ = slots_.size() - 1;
    for (const auto& shard : shards_)
      for (const auto& entry : *shard)
        insert(entry.object);
    shards_ = {};
  }

  void insert(const object_ptr& obj) {
    const std::size_t tag = tag_of(obj->key());
    std::size_t i = tag & mask_;
    while (slots_[i].tag != 0)
      i = (i + 1) & mask_;
    slots_[i] = {tag, obj};
  }

  object_map::frozen shards_; // until the first take
  std::vector<slot> slots_;
  std::size_t mask_ = 0;
};

bool matches_requirement(const object& obj, const field_requirement& req) {
  // A missing field compares as "", as the API server does.
  bool equal = field_value(obj, req.field).value_or(std::string()) == req.value;
  return req.op == field_op::equals ? equal : !equal;
}

} // namespace

// ---- store_snapshot ----

object_ptr store_snapshot::get(std::string_view key) const {
  if (shards_.empty()) // a default-constructed snapshot is empty
    return nullptr;
  const auto& shard = frozen_shard_for(shards_, key);
  auto it = shard.find(key);
  return it == shard.end() ? nullptr : it->object;
}

std::vector<object_ptr> store_snapshot::list() const {
  std::vector<object_ptr> out;
  out.reserve(size_);
  for (const auto& shard : shards_)
    for (const auto& entry : *shard)
      out.push_back(entry.object);
  return out;
}

std::vector<object_ptr> store_snapshot::list(std::string_view ns, const label_selector& labels,
                                             const field_selector& fields) const {
  if (ns.empty() && labels.empty() && fields.empty())
    return list(); // everything, into a vector sized once
  // Pick the narrowest candidate set an index gives: a field index for an `=` term, else the
  // namespace index, else everything.
  const field_requirement* indexed_term = nullptr;
  const index_key_set* candidates = nullptr;
  bool narrowed = false;
  for (const auto& req : fields.requirements()) {
    if (req.op != field_op::equals)
      continue;
    auto keys = indexes_.bucket(field_index_name(req.field), namespaced_index_key(ns, req.value));
    if (keys) {
      indexed_term = &req;
      candidates = *keys;
      narrowed = true;
      break;
    }
  }
  if (!narrowed && !ns.empty()) {
    auto keys = indexes_.bucket(namespace_index_name, ns);
    candidates = keys ? *keys : nullptr;
    narrowed = keys.ok();
  }

  auto accept = [&](const object& obj) {
    if (!ns.empty() && obj.meta().namespace_ != ns)
      return false;
    if (!labels.empty() && !labels.matches(obj))
      return false;
    for (const auto& req : fields.requirements())
      if (&req != indexed_term && !matches_requirement(obj, req))
        return false;
    return true;
  };

  std::vector<object_ptr> out;
  if (narrowed) {
    if (!candidates)
      return out;
    for (const auto& key : *candidates)
      if (auto obj = get(key); obj && accept(*obj))
        out.push_back(std::move(obj));
    return out;
  }
  for (const auto& shard : shards_)
    for (const auto& entry : *shard)
      if (accept(*entry.object))
        out.push_back(entry.object);
  return out;
}

result<std::vector<object_ptr>> store_snapshot::by_index(std::string_view name,
                                                         std::string_view value) const {
  auto keys = indexes_.bucket(name, value);
  if (!keys)
    return std::move(keys).err();
  std::vector<object_ptr> out;
  if (*keys) {
    out.reserve((*keys)->size());
    for (const auto& key : **keys)
      if (auto obj = get(key))
        out.push_back(std::move(obj));
  }
  return out;
}

std::size_t store_snapshot::heap_bytes() const {
  std::size_t n = shards_.size() * sizeof(object_map::map_type);
  for (const auto& shard : shards_) {
    n += shard->capacity() * sizeof(store_entry);
    for (const auto& entry : *shard)
      n += entry.object->heap_bytes();
  }
  return n + indexes_.heap_bytes();
}

std::vector<delta> initial_deltas(const store_snapshot& snap) {
  std::vector<delta> out;
  out.reserve(snap.size());
  for (auto& obj : snap.list())
    out.push_back(delta{delta_type::added, std::move(obj), nullptr, true, false});
  return out;
}

// ---- store ----

store::store(store_options options)
    : objects_(options.shard_count), indexes_(options.index_shard_count) {}

object_ptr store::put(const object_ptr& obj, bool listed) {
  auto& shard = objects_.mutable_shard_for(obj->key());
  // One lookup: the insert finds the entry already stored under the key, if any.
  auto [it, inserted] = shard.insert(obj);
  if (listed ||
      (replacing_ && !listed_then_removed_.empty() && listed_then_removed_.contains(obj->key())))
    it->listed_in = replace_number_;
  if (inserted) {
    ++size_;
    indexes_.on_add(*obj);
    return nullptr;
  }
  // Same key, so the same hash and position: the version is swapped in place.
  object_ptr old = std::exchange(it->object, obj);
  indexes_.on_update(*old, *obj);
  return old;
}

object_ptr store::remove(std::string_view key) {
  auto& shard = objects_.mutable_shard_for(key);
  auto it = shard.find(key);
  if (it == shard.end())
    return nullptr;
  object_ptr old = it->object;
  if (replacing_ && it->listed_in == replace_number_)
    listed_then_removed_.emplace(key);
  shard.erase(it);
  --size_;
  indexes_.on_delete(*old);
  return old;
}

void store::note_resource_version(const object& obj) {
  if (!obj.meta().resource_version.empty())
    resource_version_.assign(obj.meta().resource_version);
}

result<delta> store::apply(event_type type, const object_ptr& obj) {
  if (!obj)
    return make_error(errc::invalid_argument,
                      std::string("store: ") + to_string(type) + " event without an object");
  switch (type) {
  case event_type::added:
  case event_type::modified: {
    note_resource_version(*obj);
    object_ptr old = put(obj);
    if (old)
      return delta{delta_type::updated, obj, std::move(old), false, false};
    return delta{delta_type::added, obj, nullptr, false, false};
  }
  case event_type::deleted: {
    note_resource_version(*obj);
    return delta{delta_type::deleted, obj, remove(obj->key()), false, false};
  }
  case event_type::bookmark:
  case event_type::error:
    break;
  }
  return make_error(errc::invalid_argument,
                    std::string("store: cannot apply a ") + to_string(type) + " event");
}

std::vector<delta> store::replace(const std::vector<object_ptr>& items,
                                  std::string resource_version) {
  begin_replace();
  auto deltas = replace_batch(items);
  auto deletions = finish_replace(std::move(resource_version));
  deltas.insert(deltas.end(), std::make_move_iterator(deletions.begin()),
                std::make_move_iterator(deletions.end()));
  return deltas;
}

void store::begin_replace() {
  listed_then_removed_.clear();
  // Numbers start at 1, so that no entry (0 until listed) counts as listed by a new replace.
  if (++replace_number_ == 0)
    ++replace_number_;
  replacing_ = true;
}

std::vector<delta> store::replace_batch(const std::vector<object_ptr>& items) {
  if (!replacing_)
    begin_replace();
  const bool initial = !synced_;
  std::vector<delta> deltas;
  deltas.reserve(items.size());
  for (const auto& obj : items) {
    if (!obj)
      continue;
    // Marking an unchanged entry writes only `listed_in`, which no snapshot reads: the shard is
    // not copied for it.
    const auto& shard = objects_.shard_for(obj->key());
    if (auto it = shard.find(obj->key());
        it != shard.end() && it->object->meta().resource_version == obj->meta().resource_version) {
      it->listed_in = replace_number_;
      if (it->object == obj)
        ++listed_as_stored_;
      deltas.push_back(delta{delta_type::sync, it->object, it->object, initial, false});
      continue;
    }
    object_ptr old = put(obj, true);
    if (old)
      deltas.push_back(delta{delta_type::updated, obj, std::move(old), initial, false});
    else
      deltas.push_back(delta{delta_type::added, obj, nullptr, initial, false});
  }
  return deltas;
}

std::vector<delta> store::finish_replace(std::string resource_version) {
  const bool initial = !synced_;
  std::vector<delta> deltas;
  std::vector<std::string_view> missing;
  for (std::size_t i = 0; i < objects_.shard_count(); ++i)
    for (const auto& entry : objects_.shard(i))
      if (entry.listed_in != replace_number_)
        missing.push_back(entry.object->key());
  std::sort(missing.begin(), missing.end());
  // Copy the keys out before removing: each view dies with its entry.
  for (std::string key : std::vector<std::string>(missing.begin(), missing.end())) {
    object_ptr last = remove(key);
    deltas.push_back(delta{delta_type::deleted, last, last, initial, true});
  }
  listed_then_removed_ = {};
  replacing_ = false;
  resource_version_ = std::move(resource_version);
  synced_ = true;
  return deltas;
}

void store::set_resource_version(std::string resource_version) {
  resource_version_ = std::move(resource_version);
}

status_result store::add_index(std::string name, index_func fn) {
  return indexes_.add_index(std::move(name), std::move(fn), list());
}

status_result store::add_field_index(std::string field, index_func extract) {
  if (!extract)
    extract = field_path_extractor(field);
  return add_index(field_index_name(field), make_field_index_func(std::move(extract)));
}

object_ptr store::get(std::string_view key) const {
  const auto& shard = objects_.shard_for(key);
  auto it = shard.find(key);
  return it == shard.end() ? nullptr : it->object;
}

std::vector<object_ptr> store::list() const {
  std::vector<object_ptr> out;
  out.reserve(size_);
  for (std::size_t i = 0; i < objects_.shard_count(); ++i)
    for (const auto& entry : objects_.shard(i))
      out.push_back(entry.object);
  return out;
}

std::shared_ptr<held_objects> store::held_view() const {
  return std::make_shared<handed_over_objects>(objects_.freeze());
}

store_snapshot store::snapshot() const {
  store_snapshot snap;
  snap.shards_ = objects_.freeze();
  snap.indexes_ = indexes_.snapshot();
  snap.size_ = size_;
  snap.resource_version_ = resource_version_;
  return snap;
}

} // namespace kinformer
