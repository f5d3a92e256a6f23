#include "app/apiserver/watch_event.hpp"

#include "app/apiserver/json_string.hpp"

namespace kinformer::apiserver {

std::string watch_event_line(event_type type, std::string_view object_json) {
  std::string line;
  line.reserve(object_json.size() + 40);
  line.append(R"({"type":")").append(to_string(type)).append(R"(","object":)");
  line.append(object_json);
  line.append("}\n");
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
