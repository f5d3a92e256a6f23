// The fast path's grammar check over simdjson's first-stage positions: it accepts valid JSON of
// the usual kinds, refuses what is not JSON, and leaves to the walk what Boost.JSON reads
// differently from simdjson. Whatever it accepts, Boost.JSON parses (object::tree() must).

#include "protocol/object.hpp"
#include "protocol/object_scan.hpp"
#include "protocol/object_scan_validate.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>

using namespace kinformer;

namespace {

bool accepted(const std::string& text) {
  std::string buffer;
  return validate_fast(padded_copy(buffer, text)).has_value();
}

// As object::tree() parses: nesting up to 256.
bool boost_parses(const std::string& text) {
  boost::system::error_code ec;
  boost::json::parse_options options;
  options.max_depth = 256;
  boost::json::parse(text, ec, {}, options);
  return !ec;
}

// The full walk, which decides whatever the fast path leaves, accepts an object's text.
bool walk_accepts(const std::string& text) {
  std::string buffer;
  object_scan scan;
  return scan_object_walking(padded_copy(buffer, text), scan).ok();
}

bool is_object(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

} // namespace

TEST_CASE("the grammar check accepts valid JSON of every kind a Kubernetes object holds") {
  for (const std::string text :
       {R"({})", R"([])", R"("s")", R"(0)", R"(-0)", R"(true)", R"(false)", R"(null)",
        R"({"a":{"b":[1,2,{"c":null}]},"d":[]})", " \t\r\n{ \"a\" : [ 1 , 2 ] }\n ",
        R"({"n":-12.5e+3,"m":0.25,"e":1E-2,"z":0,"big":123456789012345678901234567890})",
        R"({"esc":"\"\\\/\b\f\n\r\t\u00e9\u0041","utf8":"h\u00e9llo wörld ✓"})",
        R"({"":"","a":"","k":"end with space "})", R"([[[[[]]]]])",
        R"({"kind":"Pod","kind":"Pod","metadata":{}})"}) {
    INFO(text);
    CHECK(accepted(text));
    CHECK(boost_parses(text));
    if (is_object(text))
      CHECK(walk_accepts(text));
  }
}

TEST_CASE("the grammar check refuses what is not JSON") {
  for (const std::string text : {R"({"a":1,})",
                                 R"([1,])",
                                 R"({"a" 1})",
                                 R"({"a":})",
                                 R"({,})",
                                 R"({"a":1 "b":2})",
                                 R"([1 2])",
                                 R"({"a":1}})",
                                 R"({"a":1})"
                                 "x",
                                 R"({"a":1}{})",
                                 R"({"a":[1}})",
                                 R"({"a":{1:2}})",
                                 R"({1:2})",
                                 R"(["a":1])",
                                 R"({"a"})",
                                 R"({"a":tru})",
                                 R"({"a":truex})",
                                 R"({"a":nul})",
                                 R"({"a":True})",
                                 R"({"a":01})",
                                 R"({"a":1.})",
                                 R"({"a":.5})",
                                 R"({"a":-})",
                                 R"({"a":1e})",
                                 R"({"a":1e+})",
                                 R"({"a":+1})",
                                 R"({"a":0x10})",
                                 R"({"a":"\x"})",
                                 R"({"a":"\u12G4"})",
                                 R"({"a":"\u12"})",
                                 R"({"a":"\u-123"})",
                                 R"({"a":"\u+123"})",
                                 R"({"a":"b"c})",
                                 R"({"a":"b""c"})",
                                 R"({"a")",
                                 R"({"a":[)",
                                 "[",
                                 "{",
                                 "}",
                                 "]",
                                 ",",
                                 ":",
                                 R"(1 2)",
                                 R"({"a":1,,"b":2})",
                                 R"({"a"::1})",
                                 R"({:1})"}) {
    INFO(text);
    CHECK_FALSE(accepted(text));
    // None of these are JSON: the walk, which decides after the fast path, refuses them too.
    std::string buffer;
    object_scan scan;
    CHECK_FALSE(scan_object_walking(padded_copy(buffer, text), scan).ok());
  }
}

TEST_CASE("the grammar check leaves to the walk what it does not surely read as Boost.JSON does") {
  for (const std::string text :
       {// Past 32 characters, or an exponent of three digits or more.
        R"({"a":123456789012345678901234567890123})", R"({"a":4e-400})", R"({"a":1e100})",
        R"({"a":4e-99999999999})",
        // A \u escape naming a surrogate: Boost.JSON checks that they pair.
        R"({"a":"\ud83d\ude00"})", R"({"a":"\udc00"})"}) {
    INFO(text);
    CHECK_FALSE(accepted(text));
  }
  // Surrogate escapes go to the walk, which reads a pair as Boost.JSON does.
  CHECK(walk_accepts(R"({"a":"\ud83d\ude00"})"));
  CHECK(boost_parses(R"({"a":"\ud83d\ude00"})"));
  CHECK(object::parse(R"({"a":"\ud83d\ude00"})").ok());
  // Nesting: 250 levels are the fast path's, 251 the walk's; both read as object::tree() does.
  const std::string deepest = "{\"a\":" + std::string(249, '[') + std::string(249, ']') + "}";
  CHECK(accepted(deepest));
  CHECK(walk_accepts(deepest));
  CHECK(boost_parses(deepest));
  const std::string deeper = "{\"a\":" + std::string(250, '[') + std::string(250, ']') + "}";
  CHECK_FALSE(accepted(deeper));
  CHECK(walk_accepts(deeper));
}

TEST_CASE("the grammar check counts the root's kind, apiVersion and metadata by their text") {
  std::string buffer;
  const auto count = [&](const std::string& text) {
    auto validated = validate_object_fast(padded_copy(buffer, text));
    REQUIRE(validated);
    return validated->type_and_metadata_members;
  };
  CHECK(count(R"({"kind":"A","apiVersion":"v1","metadata":{},"spec":{}})") == 3);
  CHECK(count(R"({"spec":{"kind":"x","metadata":{}},"items":[{"kind":"y"}]})") == 0);
  CHECK(count(R"({"kind":"A","kind":"B"})") == 2);
  CHECK(count(R"({"ki\u006ed":"A"})") == 0); // the structural read compares keys as written
  CHECK_FALSE(validate_object_fast(padded_copy(buffer, "[]")));
  CHECK_FALSE(validate_object_fast(padded_copy(buffer, R"("s")")));
}
