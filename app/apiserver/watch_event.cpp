#include "app/apiserver/watch_event.hpp"

#include "protocol/json_string.hpp"

namespace kinformer::apiserver {

namespace {

std::string_view event_head(event_type type) {
  switch (type) {
  case event_type::added:
    return R"({"type":"ADDED","object":)";
  case event_type::modified:
    return R"({"type":"MODIFIED","object":)";
  case event_type::deleted:
    return R"({"type":"DELETED","object":)";
  case event_type::bookmark:
    return R"({"type":"BOOKMARK","object":)";
  case event_type::error:
    return R"({"type":"ERROR","object":)";
  }
  return R"({"type":"UNKNOWN","object":)";
}

} // namespace

std::string watch_event_line(event_type type, std::string_view object_json) {
  std::string line;
  line.reserve(object_json.size() + 40);
  line.append(event_head(type));
  line.append(object_json);
  line.append("}\n");
  return line;
}

byte_pieces watch_event_pieces(event_type type, std::shared_ptr<const void> owner,
                               std::string_view object_json) {
  byte_pieces line;
  line.reserve(3);
  line.append_literal(event_head(type));
  line.append_shared(std::move(owner), object_json);
  line.append_literal("}\n");
  return line;
}

std::string bookmark_object(std::string_view kind, std::string_view api_version,
                            std::string_view resource_version, bool initial_events_end) {
  std::string out = R"({"kind":)" + json_string(kind) + R"(,"apiVersion":)" +
                    json_string(api_version) + R"(,"metadata":{"resourceVersion":)" +
                    json_string(resource_version) + R"(,"creationTimestamp":null)";
  if (initial_events_end)
    out += R"(,"annotations":{"k8s.io/initial-events-end":"true"})";
  out += "}}";
  return out;
}

} // namespace kinformer::apiserver
