#include "app/apiserver/continue_token.hpp"

#include <boost/json.hpp>

#include <array>
#include <optional>

namespace json = boost::json;

namespace kinformer::apiserver {

namespace {

constexpr std::string_view alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// base64.RawURLEncoding, as the API server uses for continue tokens.
std::string base64url_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    std::uint32_t n =
        (std::uint8_t(in[i]) << 16) | (std::uint8_t(in[i + 1]) << 8) | std::uint8_t(in[i + 2]);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += alphabet[n & 63];
  }
  std::size_t rest = in.size() - i;
  if (rest > 0) {
    std::uint32_t n = std::uint8_t(in[i]) << 16;
    if (rest == 2)
      n |= std::uint8_t(in[i + 1]) << 8;
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    if (rest == 2)
      out += alphabet[(n >> 6) & 63];
  }
  return out;
}

std::optional<std::string> base64url_decode(std::string_view in) {
  std::array<int, 256> value{};
  value.fill(-1);
  for (std::size_t i = 0; i < alphabet.size(); ++i)
    value[std::uint8_t(alphabet[i])] = int(i);
  // Padded standard base64 is accepted too: strip '=' and map '+' '/'.
  while (!in.empty() && in.back() == '=')
    in.remove_suffix(1);
  if (in.size() % 4 == 1)
    return std::nullopt;
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    int v = c == '+' ? 62 : c == '/' ? 63 : value[std::uint8_t(c)];
    if (v < 0)
      return std::nullopt;
    buffer = (buffer << 6) | std::uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((buffer >> bits) & 0xff);
    }
  }
  return out;
}

// A JSON number that is a positive integer (Boost.JSON parses small ones as int64).
std::optional<std::uint64_t> positive_integer(const json::value& v) {
  if (v.is_uint64() && v.get_uint64() > 0)
    return v.get_uint64();
  if (v.is_int64() && v.get_int64() > 0)
    return std::uint64_t(v.get_int64());
  return std::nullopt;
}

error invalid_token(std::string why) {
  return make_error(errc::invalid_argument, "continue key is not valid: " + std::move(why));
}

} // namespace

continue_token continue_token::after(std::uint64_t resource_version, std::string_view last_key,
                                     std::optional<std::uint64_t> snapshot) {
  std::string start(last_key);
  start += '\0';
  return {resource_version, std::move(start), snapshot};
}

std::string continue_token::encode() const {
  json::object o;
  o["v"] = "meta.k8s.io/v1";
  o["rv"] = resource_version;
  o["start"] = start_key;
  if (snapshot)
    o["snapshot"] = *snapshot;
  return base64url_encode(json::serialize(o));
}

result<continue_token> continue_token::decode(std::string_view text) {
  auto raw = base64url_decode(text);
  if (!raw)
    return invalid_token("illegal base64 data");
  json::error_code ec;
  json::value v = json::parse(*raw, ec);
  if (ec || !v.is_object())
    return invalid_token("not a JSON object");
  const auto& o = v.get_object();
  const auto* version = o.if_contains("v");
  if (!version || !version->is_string() || version->get_string() != "meta.k8s.io/v1")
    return invalid_token("server does not recognize this encoded key");
  const auto* rv = o.if_contains("rv");
  const auto* start = o.if_contains("start");
  if (!rv || !start || !start->is_string())
    return invalid_token("missing rv or start");
  auto revision = positive_integer(*rv);
  if (!revision)
    return invalid_token("rv must be a positive integer");
  std::optional<std::uint64_t> snapshot;
  if (const auto* id = o.if_contains("snapshot")) {
    snapshot = positive_integer(*id);
    if (!snapshot)
      return invalid_token("snapshot must be a positive integer");
  }
  return continue_token{*revision, std::string(start->get_string()), snapshot};
}

} // namespace kinformer::apiserver
