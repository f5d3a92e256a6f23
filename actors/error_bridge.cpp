#include "actors/error_bridge.hpp"

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/sec.hpp>

#include <cstdint>
#include <string>

namespace kinformer {

namespace {

constexpr caf::atom_value category = caf::atom("kinformer");

} // namespace

caf::error to_caf_error(const error& err) {
  return caf::error{static_cast<uint8_t>(err.code), category, caf::make_message(err.message)};
}

error from_caf_error(const caf::error& err) {
  if (err.category() == category) {
    const auto& context = err.context();
    std::string message = context.match_elements<std::string>() ? context.get_as<std::string>(0)
                                                                : caf::to_string(context);
    // A code this build does not know (a newer remote peer): keep the message, not the code.
    if (err.code() > static_cast<std::uint8_t>(last_errc))
      return error{errc::cancelled, std::move(message)};
    return error{static_cast<errc>(err.code()), std::move(message)};
  }
  if (err.category() == caf::atom("system") &&
      err.code() == static_cast<uint8_t>(caf::sec::request_timeout))
    return error{errc::timeout, "the request timed out"};
  return error{errc::cancelled, caf::to_string(err)};
}

} // namespace kinformer
