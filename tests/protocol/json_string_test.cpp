#include "protocol/json_string.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace kinformer;

namespace {

std::string boost_json_string(std::string_view text) {
  return boost::json::serialize(boost::json::string(text));
}

} // namespace

TEST_CASE("json_string: every single byte is escaped as Boost.JSON escapes it") {
  for (int c = 0; c < 256; ++c) {
    const std::string text(1, static_cast<char>(c));
    INFO("byte " << c);
    CHECK(json_string(text) == boost_json_string(text));
  }
}

TEST_CASE("json_string: runs of plain bytes around escapes, UTF-8 as it is") {
  for (const std::string_view text :
       {std::string_view(""), std::string_view("default/web-0"),
        std::string_view("a\"b\\c\nd\te\x01f\x1f"), std::string_view("\"\"\\\\"),
        std::string_view("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
        std::string_view("tail\x7f", 5), std::string_view("\0mid\0", 5)}) {
    INFO(text);
    CHECK(json_string(text) == boost_json_string(text));
  }
}

TEST_CASE("append_json_string: appends to what the string holds") {
  std::string out = "{\"key\":";
  append_json_string(out, "ns/a\"b");
  CHECK(out == R"({"key":"ns/a\"b")");
}
