#include "protocol/proxy.hpp"

#include "protocol/base64.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace kinformer {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

// %XX in the user information of a URL.
std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool is_loopback(std::string_view host) {
  const std::string h = lower(host);
  return h == "localhost" || h.ends_with(".localhost") || h == "::1" || h.starts_with("127.");
}

} // namespace

result<proxy_endpoint> parse_proxy_url(std::string_view url) {
  auto fail = [&](const std::string& why) {
    return make_error(errc::invalid_argument, "proxy URL \"" + std::string(url) + "\": " + why);
  };
  std::string_view rest = trim(url);
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return fail("only http:// proxies are supported");
  } // no scheme: http, as Go reads "proxy.example:3128"
  rest = rest.substr(0, rest.find('/'));
  proxy_endpoint out;
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    out.authorization = "Basic " + encode_base64(percent_decoded(rest.substr(0, at)));
    rest.remove_prefix(at + 1);
  }
  std::string_view port;
  if (rest.starts_with('[')) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos)
      return fail("unterminated '[' in IPv6 host");
    out.host = std::string(rest.substr(1, close - 1));
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':')
        return fail("unexpected text after ']'");
      port = rest.substr(close + 2);
    }
  } else {
    const auto colon = rest.find(':');
    out.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos)
      port = rest.substr(colon + 1);
  }
  if (out.host.empty())
    return fail("missing host");
  if (!port.empty() && (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) {
                          return c >= '0' && c <= '9';
                        })))
    return fail("port \"" + std::string(port) + "\" is not a number");
  out.port = port.empty() ? "80" : std::string(port);
  return out;
}

bool no_proxy_matches(std::string_view no_proxy, std::string_view host, std::string_view port) {
  const std::string h = lower(host);
  std::size_t at = 0;
  while (at <= no_proxy.size()) {
    const std::size_t comma = std::min(no_proxy.find(',', at), no_proxy.size());
    std::string entry = lower(trim(no_proxy.substr(at, comma - at)));
    at = comma + 1;
    if (entry.empty())
      continue;
    if (entry == "*")
      return true;
    // An optional port: "host:port" (an IPv6 literal only in brackets).
    std::string entry_port;
    if (entry.starts_with('[')) {
      const auto close = entry.find(']');
      if (close != std::string::npos) {
        if (close + 2 < entry.size() && entry[close + 1] == ':')
          entry_port = entry.substr(close + 2);
        entry = entry.substr(1, close - 1);
      }
    } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
      entry_port = entry.substr(entry.find(':') + 1);
      entry = entry.substr(0, entry.find(':'));
    }
    if (!entry_port.empty() && entry_port != port)
      continue;
    if (entry.starts_with('.')) { // subdomains only
      if (h.ends_with(entry))
        return true;
      continue;
    }
    if (h == entry || h.ends_with("." + entry))
      return true;
  }
  return false;
}

std::optional<std::string> process_environment(const char* name) {
  const char* value = std::getenv(name);
  if (!value)
    return std::nullopt;
  return std::string(value);
}

std::string proxy_url_from_environment(bool tls, std::string_view host, std::string_view port,
                                       const env_getter& env) {
  auto first = [&](const char* upper, const char* lower_name) {
    auto v = env(upper);
    if (!v || v->empty())
      v = env(lower_name);
    return v.value_or("");
  };
  const std::string url =
      tls ? first("HTTPS_PROXY", "https_proxy") : first("HTTP_PROXY", "http_proxy");
  if (url.empty() || is_loopback(host))
    return {};
  if (no_proxy_matches(first("NO_PROXY", "no_proxy"), host, port))
    return {};
  return url;
}

} // namespace kinformer
