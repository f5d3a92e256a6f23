#include "tests/bench/chunked_line_counter.hpp"

#include <catch2/catch.hpp>

#include <string>

using kinformer::bench::chunked_line_counter;

namespace {

// Two watch lines in two chunks (one with an extension), then the last chunk and a trailer.
const std::string body = "17\r\n{\"type\":\"ADDED\",\"n\":1}\n\r\n"
                         "1B;ext=1\r\n{\"type\":\"MODIFIED\",\"n\":22}\n\r\n"
                         "0\r\nTrailer: x\r\n\r\n";

} // namespace

TEST_CASE("every line of a chunked body is counted, whatever the pieces it arrives in") {
  for (std::size_t piece = 1; piece <= body.size(); ++piece) {
    chunked_line_counter counter;
    for (std::size_t at = 0; at < body.size(); at += piece)
      REQUIRE(counter.feed(std::string_view(body).substr(at, piece)));
    INFO("pieces of " << piece << " bytes");
    CHECK(counter.lines() == 2);
    CHECK(counter.data_bytes() == 0x17 + 0x1b);
    CHECK(counter.ended());
  }
}

TEST_CASE("a line split across chunks is counted once, at its end") {
  chunked_line_counter counter;
  REQUIRE(counter.feed("3\r\n{\"a\r\n4\r\n\":1}\r\n2\r\n\n\n\r\n"));
  CHECK(counter.lines() == 2);
  CHECK_FALSE(counter.ended());
}

TEST_CASE("a malformed chunk head or chunk end fails the counter for good") {
  const char* malformed[] = {
      "zz\r\nab\r\n",          // not a hex size
      "\r\n",                  // an empty size
      "2\r\nabc\r\n",          // data longer than its chunk
      "2\r\nabX\n1\r\n\n\r\n", // data followed by something else than CRLF
      "10000000000000000\r\n", // a size of more than 16 hex digits
  };
  for (const char* bytes : malformed) {
    INFO(bytes);
    chunked_line_counter counter;
    CHECK_FALSE(counter.feed(bytes));
    CHECK(counter.failed());
    CHECK_FALSE(counter.feed("2\r\n\n\n\r\n"));
    CHECK(counter.lines() == 0);
  }
}

TEST_CASE("bytes after the last chunk are ignored") {
  chunked_line_counter counter;
  REQUIRE(counter.feed("1\r\n\n\r\n0\r\n\r\n"));
  REQUIRE(counter.ended());
  CHECK(counter.feed("5\r\n\n\n\n\n\n\r\n"));
  CHECK(counter.lines() == 1);
}
