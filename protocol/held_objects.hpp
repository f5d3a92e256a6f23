#pragma once
// Objects a client already holds, looked up while a list of the same objects arrives: a listed
// item whose resourceVersion equals the held object's is handed on as that object instead of
// being made again. A resourceVersion names one state of an object, so the two are the same,
// and the store would keep the held one anyway (actors/store.hpp, replace_batch).
//
// Why: a relist of 100,000 mostly unchanged pods otherwise built 100,000 stored objects (about
// 350 MB) only to drop them batch by batch, among objects that live on. (Measured in session 28:
// informer_bench's relist peak fell from 4-6 to 2-3 MiB over the process; the soak's step in the
// memory glibc keeps after a relist stayed, so that step is not these objects: README, Soak.)
//
// Taken from by the client's decode thread: implementations are made on one thread and then
// taken from on another, by one thread at a time (a list has one decode thread).

#include <memory>
#include <mutex>
#include <string_view>

namespace kinformer {

class object;
using object_ptr = std::shared_ptr<const object>;

class held_objects {
public:
  virtual ~held_objects() = default;
  // The held object named so ("" namespace for a cluster-scoped one), which is from then on not
  // held here: a list names each object once, and keeping it until the list ends would keep a
  // version the list replaces. Null when none is held.
  virtual object_ptr take(std::string_view namespace_, std::string_view name) = 0;
};

// Where the holder puts what it holds for the length of a list, and takes it back after: the
// list's decode thread reads it as items arrive. Empty until filled; an item decoded while it is
// empty is simply made.
class held_objects_slot {
public:
  void fill(std::shared_ptr<held_objects> held) {
    std::lock_guard lock(mutex_);
    held_ = std::move(held);
  }
  void empty() { fill(nullptr); }
  std::shared_ptr<held_objects> current() const {
    std::lock_guard lock(mutex_);
    return held_;
  }

private:
  mutable std::mutex mutex_;
  std::shared_ptr<held_objects> held_;
};

} // namespace kinformer
