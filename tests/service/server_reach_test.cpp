// What kinformerd's start-up makes of an API server it cannot reach yet (server_reach.hpp).

#include "app/kinformerd/server_reach.hpp"

#include <catch2/catch.hpp>

using namespace kinformer;
using namespace kinformer::service;
using what = reach_outcome::what;

namespace {

result<http_response> answer(int code) {
  http_response response;
  response.status_code = code;
  return response;
}

} // namespace

TEST_CASE("server_reach: an absent, slow or overloaded server is waited for") {
  auto refused = reach_from_version(make_error(errc::io, "connecting: Connection refused"));
  CHECK(refused.outcome == what::retry);
  REQUIRE(refused.failure);
  CHECK(refused.failure->message == "connecting: Connection refused");
  CHECK(reach_from_version(make_error(errc::timeout, "no answer")).outcome == what::retry);
  for (int code : {429, 500, 502, 503, 504}) {
    auto outcome = reach_from_version(answer(code));
    CHECK(outcome.outcome == what::retry);
    REQUIRE(outcome.failure);
    CHECK(outcome.failure->message == "GET /version: HTTP " + std::to_string(code));
  }
  // A server that went away while the informers were being set up.
  CHECK(reach_from_failure({errc::io, "reset"}).outcome == what::retry);
}

TEST_CASE("server_reach: what waiting cannot fix fails start-up") {
  auto unauthorized = reach_from_version(answer(401));
  CHECK(unauthorized.outcome == what::refused);
  REQUIRE(unauthorized.failure);
  CHECK(unauthorized.failure->code == errc::credentials);
  CHECK(reach_from_version(make_error(errc::tls, "certificate verify failed")).outcome ==
        what::refused);
  CHECK(reach_from_failure({errc::no_match, "no resource \"podz\""}).outcome == what::refused);
  CHECK(reach_from_failure({errc::credentials, "exec plugin failed"}).outcome == what::refused);
}

TEST_CASE("server_reach: any other answer comes from a server that is up") {
  for (int code : {200, 403, 404}) {
    auto outcome = reach_from_version(answer(code));
    CHECK(outcome.outcome == what::answered);
    CHECK_FALSE(outcome.failure);
  }
}
