#pragma once
// The lines of a watch stream, as the API server writes them: one WatchEvent JSON object per
// line, {"type":"ADDED","object":<the object's own bytes>}, and the object of a BOOKMARK.
// The simulator and the read API frame their watches with these.

#include "app/apiserver/byte_pieces.hpp"
#include "protocol/decode.hpp"

#include <memory>

#include <string>
#include <string_view>

namespace kinformer::apiserver {

// {"type":"<TYPE>","object":<object_json>}\n, by concatenation: the object is serialised already.
std::string watch_event_line(event_type type, std::string_view object_json);
// The same line in pieces, nothing copied: a literal head, `object_json` (which `owner` keeps
// alive: the stored object whose bytes these are) and a literal tail.
byte_pieces watch_event_pieces(event_type type, std::shared_ptr<const void> owner,
                               std::string_view object_json);

// The object of a BOOKMARK: the kind with nothing set but metadata.resourceVersion (and, ending a
// streaming list's initial events, the k8s.io/initial-events-end annotation), as Go serialises
// an empty object: {"kind":K,"apiVersion":V,"metadata":{"resourceVersion":"N",
// "creationTimestamp":null}}.
std::string bookmark_object(std::string_view kind, std::string_view api_version,
                            std::string_view resource_version, bool initial_events_end);

} // namespace kinformer::apiserver
