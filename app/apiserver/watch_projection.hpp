#pragma once
// What a watch narrowed by a selection (namespace, labels, fields) is sent for one change, as the
// API server's watch cache decides it (cacheWatcher.convertToWatchEvent): the change's own type
// while the object matches before and after; ADDED when it starts matching; DELETED when it stops
// matching, carrying its previous content stamped with the change's resourceVersion, so that a
// client resuming from that event's resourceVersion misses nothing and keeps nothing stale.
//
// The simulator's watches and kinformerd's read API both decide through these functions.

#include "protocol/decode.hpp"

#include <string>
#include <string_view>

namespace kinformer {
class object;
}

namespace kinformer::apiserver {

enum class watch_projection { none, as_is, started_matching, stopped_matching };

// `type`: added, modified or deleted. `matches_now`: the change's object matches the selection;
// `matched_before`: the state before it did (read for a modification only).
watch_projection project_change(event_type type, bool matches_now, bool matched_before) noexcept;

// The event type the watcher sees for a change of `type` projected as `projection`.
event_type projected_type(watch_projection projection, event_type type) noexcept;

// `previous`'s JSON text with its metadata.resourceVersion replaced by `resource_version`: what a
// watcher is sent for an object that stopped matching. Only the version's bytes change.
std::string with_resource_version(const object& previous, std::string_view resource_version);

} // namespace kinformer::apiserver
