#include "app/apiserver/watch_event.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

namespace kinformer::apiserver {
namespace {

// A JSON string literal of `text`, escaped.
std::string quoted_json(std::string_view text) {
  return boost::json::serialize(boost::json::string(text));
}

} // namespace

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
  std::string out = R"({"kind":)" + quoted_json(kind) + R"(,"apiVersion":)" +
                    quoted_json(api_version) + R"(,"metadata":{"resourceVersion":)" +
                    quoted_json(resource_version) + R"(,"creationTimestamp":null)";
  if (initial_events_end)
    out += R"(,"annotations":{"k8s.io/initial-events-end":"true"})";
  out += "}}";
  return out;
}

} // namespace kinformer::apiserver
