#include "protocol/json_nesting.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using namespace kinformer;

namespace {

// Where the value starting at text[0] ends, one byte at a time: the rule the scan must follow.
std::size_t reference_end(const std::string& text) {
  std::uint64_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 0 && --depth == 0) {
      return i + 1;
    }
  }
  return std::string::npos;
}

// Feeds `text` (its first byte already opened the value) in the given piece sizes.
std::size_t scanned_end(const std::string& text, const std::vector<std::size_t>& pieces) {
  json_nesting nesting;
  nesting.depth = 1;
  std::size_t at = 1;
  for (std::size_t piece : pieces) {
    if (at >= text.size())
      break;
    const std::size_t n = std::min(piece, text.size() - at);
    bool ended = false;
    const std::size_t used = nesting.scan(text.data() + at, n, ended);
    if (ended)
      return at + used;
    REQUIRE(used == n);
    at += n;
  }
  return std::string::npos;
}

// Valid JSON with deep nesting, strings full of brackets, quotes and runs of backslashes.
std::string random_value(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto string_value = [&] {
    std::string s = "\"";
    const int len = pick(90);
    for (int i = 0; i < len; ++i) {
      switch (pick(8)) {
      case 0:
        s += std::string(static_cast<std::size_t>(1 + pick(2)) * 2, '\\'); // escaped backslashes
        break;
      case 1:
        s += "\\\"";
        break;
      case 2:
        s += "{[]}";
        break;
      case 3:
        s += "\\u00e9";
        break;
      default:
        s += static_cast<char>('a' + pick(26));
      }
    }
    return s + "\"";
  };
  if (depth > 6 || pick(3) == 0) {
    switch (pick(4)) {
    case 0:
      return string_value();
    case 1:
      return std::to_string(pick(100000));
    case 2:
      return "true";
    default:
      return "null";
    }
  }
  const bool array = pick(2) == 0;
  std::string out = array ? "[" : "{";
  const int members = pick(6);
  for (int i = 0; i < members; ++i) {
    if (i)
      out += pick(2) ? "," : " ,\n ";
    if (!array)
      out += string_value() + ":";
    out += random_value(rng, depth + 1);
  }
  return out + (array ? "]" : "}");
}

} // namespace

TEST_CASE("json_nesting finds where a value ends, for any split of the text") {
  std::mt19937 rng(20261125);
  for (int round = 0; round < 400; ++round) {
    std::string value = random_value(rng, 0);
    if (value.front() != '{' && value.front() != '[')
      value = "[" + value + "]";
    // What follows the value must not be taken for part of it.
    const std::string text = value + ",{\"next\":\"}\"}]" + std::string(70, ' ');
    const std::size_t expected = reference_end(text);
    REQUIRE(expected == value.size());
    // One piece (the block path), one byte at a time (the byte path), and random splits.
    CHECK(scanned_end(text, {text.size()}) == expected);
    CHECK(scanned_end(text, std::vector<std::size_t>(text.size(), 1)) == expected);
    for (int split = 0; split < 5; ++split) {
      std::vector<std::size_t> pieces;
      for (std::size_t total = 0; total < text.size();) {
        const std::size_t piece = 1 + rng() % 200;
        pieces.push_back(piece);
        total += piece;
      }
      CHECK(scanned_end(text, pieces) == expected);
    }
  }
}

TEST_CASE("json_nesting carries a string and an escape across pieces") {
  // The piece boundary falls after a backslash, then inside a run of backslashes.
  const std::string text = std::string("{\"k\":\"") + std::string(70, 'x') + "\\\\\\\"}" +
                           std::string(60, 'y') + "\"}" + std::string(64, ' ');
  const std::size_t expected = reference_end(text);
  REQUIRE(expected != std::string::npos);
  for (std::size_t cut = 2; cut < text.size() - 1; ++cut)
    CHECK(scanned_end(text, {cut - 1, text.size()}) == expected);
}

TEST_CASE("json_nesting reports a value that has not ended") {
  const std::string text = "{\"a\":[1,2,{\"b\":\"}}}}\"" + std::string(100, ' ');
  CHECK(scanned_end(text, {text.size()}) == std::string::npos);
  CHECK(reference_end(text) == std::string::npos);
}
