#pragma once
// A change to one object as the informer's handlers see it.

#include "protocol/object.hpp"

namespace kinformer {

enum class delta_type {
  added,   // the object is new to the store
  updated, // the object changed: `old_object` is what the store held before
  deleted, // the object is gone: `object` is its final (or last known) state
  sync,    // a relist found the object unchanged (same resourceVersion)
};

inline const char* to_string(delta_type type) noexcept {
  switch (type) {
  case delta_type::added:
    return "added";
  case delta_type::updated:
    return "updated";
  case delta_type::deleted:
    return "deleted";
  case delta_type::sync:
    return "sync";
  }
  return "unknown";
}

struct delta {
  delta_type type = delta_type::added;
  object_ptr object;         // never null
  object_ptr old_object;     // updated and sync: the previous state; deleted: the stored state
  bool initial_list = false; // part of the first list, or of a late subscriber's initial replay
  // A delete inferred on relist: the object vanished while we were not watching, so `object` is
  // the last state we knew, not the state at deletion (client-go's DeletedFinalStateUnknown).
  bool final_state_unknown = false;
};

} // namespace kinformer
