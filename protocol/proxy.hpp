#pragma once
// Reaching the API server through an HTTP proxy, as client-go does: a kubeconfig cluster's
// `proxy-url`, else HTTPS_PROXY (https servers) or HTTP_PROXY (http servers) from the
// environment, unless NO_PROXY names the host; loopback servers are never proxied from the
// environment (as Go's ProxyFromEnvironment). The connection is a CONNECT tunnel through the
// proxy, TLS to the server inside it.

#include "protocol/result.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace kinformer {

struct proxy_endpoint {
  std::string host; // without brackets
  std::string port; // "3128"; "80" when the URL gives none
  // "Basic ..." from user:password in the URL; empty without.
  std::string authorization;
};

// Parses "http://[user:password@]host[:port][/]". Other schemes (https, socks5) are errors:
// kinformer tunnels through plain HTTP proxies only.
result<proxy_endpoint> parse_proxy_url(std::string_view url);

// Whether NO_PROXY's value exempts `host` (with `port`): "*" exempts everything; a domain
// exempts itself and its subdomains, ".domain" its subdomains only; an IP address or
// host:port exempts exactly that.
bool no_proxy_matches(std::string_view no_proxy, std::string_view host, std::string_view port);

using env_getter = std::function<std::optional<std::string>(const char* name)>;
// The process environment.
std::optional<std::string> process_environment(const char* name);

// The proxy URL for a server, from the environment: "" when none applies.
std::string proxy_url_from_environment(bool tls, std::string_view host, std::string_view port,
                                       const env_getter& env = process_environment);

} // namespace kinformer
