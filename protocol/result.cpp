#include "protocol/result.hpp"

namespace kinformer {

const char* to_string(errc code) noexcept {
  switch (code) {
  case errc::invalid_json:
    return "invalid_json";
  case errc::invalid_object:
    return "invalid_object";
  case errc::invalid_argument:
    return "invalid_argument";
  case errc::status:
    return "status";
  case errc::io:
    return "io";
  case errc::tls:
    return "tls";
  case errc::timeout:
    return "timeout";
  case errc::too_large:
    return "too_large";
  case errc::not_found:
    return "not_found";
  case errc::no_match:
    return "no_match";
  case errc::cancelled:
    return "cancelled";
  case errc::not_cached:
    return "not_cached";
  case errc::namespace_not_covered:
    return "namespace_not_covered";
  case errc::no_index:
    return "no_index";
  case errc::expired:
    return "expired";
  case errc::credentials:
    return "credentials";
  case errc::conflict:
    return "conflict";
  case errc::already_exists:
    return "already_exists";
  }
  return "unknown";
}

} // namespace kinformer
