// Continue tokens in the API server's format, with and without the read API's snapshot id.

#include "app/apiserver/continue_token.hpp"

#include <catch2/catch.hpp>

using namespace kinformer::apiserver;

TEST_CASE("continue tokens round-trip, the snapshot id only when given") {
  auto plain = continue_token::decode(continue_token::after(42, "ns/a").encode());
  REQUIRE(plain.ok());
  CHECK(plain->resource_version == 42);
  CHECK(plain->start_key == std::string("ns/a\0", 5));
  CHECK(!plain->snapshot);

  auto kept = continue_token::decode(continue_token::after(42, "ns/a", 7).encode());
  REQUIRE(kept.ok());
  CHECK(kept->snapshot == 7u);
  CHECK(kept->start_key == plain->start_key);

  CHECK(!continue_token::decode("garbage").ok());
  CHECK(!continue_token::decode("e30").ok()); // {}
}
