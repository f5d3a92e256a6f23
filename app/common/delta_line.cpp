#include "app/common/delta_line.hpp"

#include <boost/json.hpp>

namespace kinformer {

std::string delta_line(const delta& d) {
  // A sync (a resync, or an object a relist found unchanged) is never shown as an update.
  const char* type = d.type == delta_type::added     ? "ADDED"
                     : d.type == delta_type::deleted ? "DELETED"
                     : d.type == delta_type::sync    ? "SYNC"
                                                     : "UPDATED";
  boost::json::object line;
  line["type"] = type;
  line["key"] = d.object->key();
  line["resourceVersion"] = d.object->meta().resource_version;
  line["initialList"] = d.initial_list;
  line["finalStateUnknown"] = d.final_state_unknown;
  return boost::json::serialize(line);
}

} // namespace kinformer
