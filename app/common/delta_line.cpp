#include "app/common/delta_line.hpp"

#include "protocol/json_string.hpp"

namespace kinformer {

std::string delta_line(const delta& d) {
  // A sync (a resync, or an object a relist found unchanged) is never shown as an update.
  const char* type = d.type == delta_type::added     ? "ADDED"
                     : d.type == delta_type::deleted ? "DELETED"
                     : d.type == delta_type::sync    ? "SYNC"
                                                     : "UPDATED";
  // Written out, not built as a JSON value first: a line per delta is the CLI's hot path.
  const std::string_view key = d.object->key();
  const std::string_view resource_version = d.object->meta().resource_version;
  std::string line;
  line.reserve(96 + key.size() + resource_version.size());
  line += R"({"type":")";
  line += type;
  line += R"(","key":)";
  append_json_string(line, key);
  line += R"(,"resourceVersion":)";
  append_json_string(line, resource_version);
  line += R"(,"initialList":)";
  line += d.initial_list ? "true" : "false";
  line += R"(,"finalStateUnknown":)";
  line += d.final_state_unknown ? "true" : "false";
  line += '}';
  return line;
}

} // namespace kinformer
