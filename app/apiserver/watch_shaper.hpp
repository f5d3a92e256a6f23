#pragma once
// The lines of one watch in the shape its request asked for (Accept): objects as stored,
// PartialObjectMetadata cut from full objects, or Tables (the column definitions in the first
// event's alone, as the API server sends them); and its BOOKMARKs, whose object is of the kind the
// client decodes. Both backends of the front end (api_backend.hpp) shape their watches with it.
// Not thread-safe: one per watch.

#include "app/apiserver/api_backend.hpp"
#include "app/apiserver/byte_pieces.hpp"
#include "protocol/decode.hpp"

#include <string>
#include <string_view>

namespace kinformer::apiserver {

struct table_printer;

class watch_shaper {
public:
  // `metadata_only`: the watched store holds PartialObjectMetadata already. `request` must
  // outlive the shaper.
  watch_shaper(const resource_request& request, bool metadata_only);

  // {"type":...,"object":...}\n for `obj` in the shape asked for: an object as stored is its own
  // bytes, shared, between the line's literal head and tail (watch_event_pieces).
  byte_pieces event_line(event_type type, const object_ptr& obj);

  // The line a change of `now` (from `before`, for a modification) gives this watch's selection
  // (watch_projection.hpp), or "" when it is not to see it. An object that stopped matching is
  // sent as DELETED with `before`'s content at `now`'s resourceVersion. A modification without
  // `before` (a state its queue did not keep: kinformerd's read API keeps only states in the
  // selection) matched before only if the selection has no label or field to leave: it then
  // matched as it does now, its namespace being the same.
  byte_pieces change_line(event_type type, const object_ptr& now, const object_ptr& before);

  // A BOOKMARK at `resource_version`.
  std::string bookmark_line(std::string_view resource_version, bool initial_events_end) const;

private:
  std::string shaped(const object_ptr& obj);

  const resource_request& request_;
  bool metadata_only_;
  const table_printer* printer_;
  bool columns_sent_ = false;
};

} // namespace kinformer::apiserver
