#include "protocol/proxy.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace kinformer;

TEST_CASE("proxy URLs: http only, with credentials as Basic authorization") {
  auto p = parse_proxy_url("http://user:p%40ss@proxy.example:3128/");
  REQUIRE(p.ok());
  CHECK(p->host == "proxy.example");
  CHECK(p->port == "3128");
  CHECK(p->authorization == "Basic dXNlcjpwQHNz"); // user:p@ss
  auto bare = parse_proxy_url("proxy.example");
  REQUIRE(bare.ok());
  CHECK(bare->port == "80");
  CHECK(bare->authorization.empty());
  CHECK(parse_proxy_url("http://[fd00::1]:8080")->host == "fd00::1");
  CHECK_FALSE(parse_proxy_url("socks5://proxy:1080").ok());
  CHECK_FALSE(parse_proxy_url("https://proxy:443").ok());
  CHECK_FALSE(parse_proxy_url("http://proxy:port").ok());
  CHECK_FALSE(parse_proxy_url("http://:3128").ok());
}

TEST_CASE("NO_PROXY: everything, domains and their subdomains, subdomains only, hosts with ports") {
  CHECK(no_proxy_matches("*", "api.example", "443"));
  CHECK(no_proxy_matches("example.com", "example.com", "443"));
  CHECK(no_proxy_matches("example.com", "api.example.com", "443"));
  CHECK_FALSE(no_proxy_matches("example.com", "notexample.com", "443"));
  CHECK(no_proxy_matches(".example.com", "api.example.com", "443"));
  CHECK_FALSE(no_proxy_matches(".example.com", "example.com", "443"));
  CHECK(no_proxy_matches("a.test, 10.0.0.1 ,b.test", "10.0.0.1", "6443"));
  CHECK(no_proxy_matches("api.example:6443", "api.example", "6443"));
  CHECK_FALSE(no_proxy_matches("api.example:6443", "api.example", "443"));
  CHECK(no_proxy_matches("[fd00::1]:443", "fd00::1", "443"));
  CHECK(no_proxy_matches("API.Example", "api.example", "443"));
  CHECK_FALSE(no_proxy_matches("", "api.example", "443"));
}

TEST_CASE("the proxy from the environment, as Go's ProxyFromEnvironment picks it") {
  std::map<std::string, std::string> vars{{"HTTPS_PROXY", "http://secure:3128"},
                                          {"http_proxy", "http://plain:3128"},
                                          {"NO_PROXY", "internal.example"}};
  const env_getter env = [&](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional(it->second);
  };
  CHECK(proxy_url_from_environment(true, "api.example", "443", env) == "http://secure:3128");
  CHECK(proxy_url_from_environment(false, "api.example", "80", env) == "http://plain:3128");
  CHECK(proxy_url_from_environment(true, "k8s.internal.example", "443", env).empty());
  // Loopback is never proxied from the environment.
  CHECK(proxy_url_from_environment(true, "127.0.0.1", "6443", env).empty());
  CHECK(proxy_url_from_environment(true, "localhost", "6443", env).empty());
  vars.clear();
  CHECK(proxy_url_from_environment(true, "api.example", "443", env).empty());
}
