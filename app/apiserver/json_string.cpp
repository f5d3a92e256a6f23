#include "app/apiserver/json_string.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

namespace kinformer::apiserver {

std::string json_string(std::string_view text) {
  return boost::json::serialize(boost::json::string(text));
}

} // namespace kinformer::apiserver
