#pragma once
// The informer's store: every object of one informer by key ("namespace/name"), its indexes,
// and the deltas each change produces.
//
// Exactly one thread writes a store (the informer actor). Any thread reads through a
// `store_snapshot`: an immutable view taken on the writer thread in O(#shards), read without
// locks, and never stalling the writer, whose next write to a shard copies that shard alone
// (see cow_shards.hpp).

#include "actors/cow_shards.hpp"
#include "actors/delta.hpp"
#include "actors/indexer.hpp"
#include "actors/store_table.hpp"
#include "protocol/decode.hpp"
#include "protocol/held_objects.hpp"
#include "protocol/object.hpp"
#include "protocol/result.hpp"
#include "protocol/selector.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace kinformer {

struct store_options {
  std::size_t shard_count = 256;      // object map shards (rounded up to a power of two)
  std::size_t index_shard_count = 64; // value map shards per index
};

// Every stored object by key, in shards a snapshot shares until the writer next writes to them.
using object_map = cow_shards<store_table>;

// An immutable view of a store at one moment. Copyable; safe to read from any thread.
class store_snapshot {
public:
  // Null when absent.
  object_ptr get(std::string_view key) const;
  // Every object, in no particular order.
  std::vector<object_ptr> list() const;
  // The objects in namespace `ns` ("" = all) matching both selectors. An `=` term of the field
  // selector is answered from the field index "field:<path>" when there is one (the term is then
  // trusted to the index, as controller-runtime does); otherwise a namespace narrows the search
  // through the namespace index, and every remaining term is checked on each object.
  std::vector<object_ptr> list(std::string_view ns, const label_selector& labels,
                               const field_selector& fields) const;
  std::size_t size() const noexcept { return size_; }
  const std::string& resource_version() const noexcept { return resource_version_; }

  // The objects indexed under `value` in index `name` (client-go's ByIndex).
  result<std::vector<object_ptr>> by_index(std::string_view name, std::string_view value) const;
  result<std::vector<std::string>> index_keys(std::string_view name, std::string_view value) const {
    return indexes_.index_keys(name, value);
  }
  result<std::vector<std::string>> list_index_values(std::string_view name) const {
    return indexes_.list_index_values(name);
  }
  const index_snapshot& indexes() const noexcept { return indexes_; }

  // Approximate heap bytes of the objects (counted even when shared with other holders), the
  // maps and the indexes. Walks every object: call it off the informer's thread.
  std::size_t heap_bytes() const;

private:
  friend class store;
  object_map::frozen shards_;
  index_snapshot indexes_;
  std::size_t size_ = 0;
  std::string resource_version_;
};

// What a late subscriber receives first: an added delta, flagged initial_list, for every object
// in `snap` (design.md section 3).
std::vector<delta> initial_deltas(const store_snapshot& snap);

class store {
public:
  explicit store(store_options options = {});

  // Applies one watch event (ADDED, MODIFIED or DELETED) and returns the delta it produces:
  // added, or updated when the key was already stored (and an ADDED for a known key, or a
  // MODIFIED for an unknown one, is treated by what the store holds, as client-go does);
  // deleted, carrying the event's object as the final state and the stored one as old_object;
  // a delete of an unknown key still yields a delete. BOOKMARK and ERROR events, and events
  // without an object, are refused: the caller handles those.
  result<delta> apply(event_type type, const object_ptr& obj);

  // Replaces the whole content with a (re)list, per design.md section 3, returning the deltas in
  // list order, then the deletions sorted by key:
  //   new key -> added;  stored with a different resourceVersion -> updated;
  //   stored with the same resourceVersion -> sync, keeping the stored object (no write);
  //   stored but not listed -> deleted, final_state_unknown, carrying the last known object.
  // The deltas of the first replace are flagged initial_list. Null items are skipped.
  std::vector<delta> replace(const std::vector<object_ptr>& items, std::string resource_version);

  // The same replace, fed as the list arrives: begin_replace(), then replace_batch() for each
  // batch of items (their deltas at once), then finish_replace() (the deletions, the resource
  // version, synced). A list of a million objects is applied while it is still being received.
  // Between the calls the store holds a mix: objects already listed, and ones not listed yet;
  // each of them is a state the server had. A new begin_replace() drops an unfinished one.
  void begin_replace();
  std::vector<delta> replace_batch(const std::vector<object_ptr>& items);
  std::vector<delta> finish_replace(std::string resource_version);
  bool replacing() const noexcept { return replacing_; }
  // Listed items that were the stored objects themselves (handed on through held_view()).
  std::uint64_t listed_as_stored() const noexcept { return listed_as_stored_; }

  // Moves the resource version alone (a BOOKMARK).
  void set_resource_version(std::string resource_version);

  // Adds an index and indexes the objects already stored.
  status_result add_index(std::string name, index_func fn);
  // Adds controller-runtime's field index "field:<field>" (see indexer.hpp). `extract` yields an
  // object's raw values; by default the field is read as a field selector reads it.
  status_result add_field_index(std::string field, index_func extract = {});

  object_ptr get(std::string_view key) const;
  std::vector<object_ptr> list() const;
  std::size_t size() const noexcept { return size_; }
  // The last resource version synced: the list's, then each event's or bookmark's.
  const std::string& resource_version() const noexcept { return resource_version_; }
  // True once a list has been applied.
  bool has_synced() const noexcept { return synced_; }

  // O(#shards x #indexes). Call it on the writer thread, then hand the snapshot to anyone.
  store_snapshot snapshot() const;

  // The stored objects as held_objects (protocol/held_objects.hpp), for a relist's decode thread
  // to hand unchanged items on as the objects stored. Taken on the writer thread in O(#shards),
  // as a snapshot is; the decode thread takes each listed item's object from it, so it keeps no
  // replaced version past the item's batch. Drop it when the relist is done: it keeps the
  // objects the list lacks.
  std::shared_ptr<held_objects> held_view() const;

  // As store_snapshot::heap_bytes (walks every object).
  std::size_t heap_bytes() const { return snapshot().heap_bytes(); }

private:
  // Stores `obj` under its key; returns what was stored before (null if nothing). `listed`:
  // the replace in progress listed it.
  object_ptr put(const object_ptr& obj, bool listed = false);
  // Removes `key`; returns what was stored (null if nothing).
  object_ptr remove(std::string_view key);
  void note_resource_version(const object& obj);

  object_map objects_;
  indexer indexes_;
  std::size_t size_ = 0;
  std::string resource_version_;
  bool synced_ = false;
  bool replacing_ = false;
  std::uint64_t listed_as_stored_ = 0;
  // The replace in progress marks each entry it lists with its number (no key is copied).
  std::uint32_t replace_number_ = 0;
  // Keys the replace in progress listed and a watch event still in flight then removed: should
  // one come back before the replace ends, it still counts as listed. Almost always empty.
  std::unordered_set<std::string, string_hash, std::equal_to<>> listed_then_removed_;
};

} // namespace kinformer
