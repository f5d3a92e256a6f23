#include "protocol/object_scan_grammar.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kinformer {

namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// Every escape in the text is one JSON knows, and no \u names a surrogate. One pass over the
// whole text rather than one per string: a backslash outside a string is inside a number or
// literal token, which its own check refuses, so the escapes are the same ones either way (left
// to right, a backslash begins an escape unless an escape before it took it).
bool escapes_ok(const char* at, const char* end) {
  while (
      (at = static_cast<const char*>(std::memchr(at, '\\', static_cast<std::size_t>(end - at))))) {
    if (end - at < 2)
      return false;
    switch (at[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      at += 2;
      break;
    case 'u': {
      if (end - at < 6)
        return false;
      unsigned code = 0;
      if (std::from_chars(at + 2, at + 6, code, 16).ptr != at + 6) // four hex digits, no sign
        return false;
      if (code >= 0xD800 && code <= 0xDFFF)
        return false; // the walk checks the pairing, as Boost.JSON does
      at += 6;
      break;
    }
    default:
      return false;
    }
  }
  return true;
}

// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]{1,2})?, at most 32 characters: well inside what
// both the walk and Boost.JSON read as a number (longer ones and larger exponents are the walk's).
bool number_ok(const char* at, const char* end) {
  if (end - at > 32)
    return false;
  if (at != end && *at == '-')
    ++at;
  if (at == end)
    return false;
  if (*at == '0') {
    ++at;
  } else if (digit(*at)) {
    while (at != end && digit(*at))
      ++at;
  } else {
    return false;
  }
  if (at != end && *at == '.') {
    const char* digits = ++at;
    while (at != end && digit(*at))
      ++at;
    if (at == digits)
      return false;
  }
  if (at != end && (*at == 'e' || *at == 'E')) {
    ++at;
    if (at != end && (*at == '+' || *at == '-'))
      ++at;
    const char* digits = at;
    while (at != end && digit(*at))
      ++at;
    if (at == digits || at - digits > 2)
      return false;
  }
  return at == end;
}

bool literal_is(const char* at, const char* end, std::string_view literal) {
  return static_cast<std::size_t>(end - at) == literal.size() &&
         std::memcmp(at, literal.data(), literal.size()) == 0;
}

bool counted_key(std::string_view key) {
  return key == "kind" || key == "apiVersion" || key == "metadata";
}

// Reads the tokens in order. The states are where the grammar is between two tokens:
// - value: a value must come next (the root, after ':' or ',' in an array, or after '[');
// - key: a member's key must come next (after ',' in an object, or after '{' with members);
// - after_value: ',', a closing bracket, or the end of the text when nothing is open.
class grammar_reader {
public:
  grammar_reader(std::string_view text, structural_positions structurals)
      : text_(text.data()), positions_(structurals.data()),
        count_(structurals.empty() ? 0 : structurals.size() - 1) {}

  grammar_check read() {
    grammar_check result;
    state next = state::value;
    while (next != state::done && next != state::refused) {
      switch (next) {
      case state::value:
        next = on_value();
        break;
      case state::key:
        next = on_key();
        break;
      case state::after_value:
        next = on_after_value();
        break;
      case state::done:
      case state::refused:
        break;
      }
    }
    result.accepted = next == state::done;
    result.type_and_metadata_members = root_members_;
    return result;
  }

private:
  enum class state { value, key, after_value, done, refused };

  bool at_end() const noexcept { return at_ >= count_; }
  char current() const noexcept { return text_[positions_[at_]]; }
  // The token at `at_` without the whitespace between it and the next position.
  const char* token_end() const noexcept {
    return kinformer::token_end(text_ + positions_[at_], text_ + positions_[at_ + 1]);
  }

  // One past the closing quote of the string at `at_`, or null when the token is not a closed
  // string: it ends at the last quote before the next position (the first stage closed it
  // there; its escapes were checked with the whole text's). A pointer, not a view through an
  // out-parameter: the view's size spilled to the stack cost a store-forwarding stall a key.
  const char* string_end() const noexcept {
    const char* begin = text_ + positions_[at_];
    const char* end = token_end();
    return end - begin >= 2 && end[-1] == '"' ? end : nullptr;
  }

  state open(char bracket) {
    if (depth_ == max_grammar_depth)
      return state::refused;
    open_[depth_++] = bracket;
    ++at_;
    if (at_end())
      return state::refused;
    if (current() == (bracket == '{' ? '}' : ']')) {
      ++at_;
      --depth_;
      return state::after_value;
    }
    return bracket == '{' ? state::key : state::value;
  }

  state on_value() {
    if (at_end())
      return state::refused;
    const char first = current();
    if (first == '{' || first == '[')
      return open(first);
    if (first == '"') {
      if (!string_end())
        return state::refused;
      ++at_;
      return state::after_value;
    }
    const char* begin = text_ + positions_[at_];
    const char* end = token_end();
    bool ok = false;
    if (first == 't')
      ok = literal_is(begin, end, "true");
    else if (first == 'f')
      ok = literal_is(begin, end, "false");
    else if (first == 'n')
      ok = literal_is(begin, end, "null");
    else
      ok = number_ok(begin, end);
    if (!ok)
      return state::refused;
    ++at_;
    return state::after_value;
  }

  state on_key() {
    if (at_end() || current() != '"')
      return state::refused;
    const char* begin = text_ + positions_[at_];
    const char* end = string_end();
    if (!end)
      return state::refused;
    // A key at depth 1 is one of the root object's.
    if (depth_ == 1 && counted_key({begin + 1, static_cast<std::size_t>(end - begin - 2)}))
      ++root_members_;
    ++at_;
    if (at_end() || current() != ':')
      return state::refused;
    ++at_;
    return state::value;
  }

  state on_after_value() {
    if (depth_ == 0)
      return at_end() ? state::done : state::refused;
    if (at_end())
      return state::refused;
    const char c = current();
    const char inside = open_[depth_ - 1];
    ++at_;
    if (c == ',')
      return inside == '{' ? state::key : state::value;
    if ((c == '}' && inside == '{') || (c == ']' && inside == '[')) {
      --depth_;
      return state::after_value;
    }
    return state::refused;
  }

  const char* text_;
  const std::uint32_t* positions_;
  std::size_t count_; // positions, without the size that follows them
  std::size_t at_ = 0;
  int depth_ = 0;
  char open_[max_grammar_depth];
  int root_members_ = 0;
};

} // namespace

grammar_check check_grammar(std::string_view text, structural_positions structurals) {
  if (!escapes_ok(text.data(), text.data() + text.size()))
    return {};
  return grammar_reader(text, structurals).read();
}

} // namespace kinformer
