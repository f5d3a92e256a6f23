#include "protocol/selector.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace kinformer {

namespace {

// ---- Label key and value validation (apimachinery's IsQualifiedName / IsValidLabelValue) ----

constexpr std::size_t max_label_name = 63;
constexpr std::size_t max_dns_subdomain = 253;

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A label name or value: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?
bool is_label_token(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// A DNS-1123 subdomain: dot-separated labels of [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > max_dns_subdomain)
    return false;
  std::size_t start = 0;
  while (true) {
    auto dot = s.find('.', start);
    auto part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (part.empty() || !is_lower_alnum(part.front()) || !is_lower_alnum(part.back()))
      return false;
    if (!std::all_of(part.begin(), part.end(),
                     [](char c) { return is_lower_alnum(c) || c == '-'; }))
      return false;
    if (dot == std::string_view::npos)
      return true;
    start = dot + 1;
  }
}

// Why `key` is not a valid label key, or an empty string when it is.
std::string label_key_problem(std::string_view key) {
  std::string_view name = key;
  auto slash = key.find('/');
  if (slash != std::string_view::npos) {
    auto prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty())
      return "the prefix before '/' must not be empty";
    if (!is_dns_subdomain(prefix))
      return "the prefix must be a lower-case DNS subdomain of at most 253 characters";
    if (name.find('/') != std::string_view::npos)
      return "a key has at most one '/'";
  }
  if (name.empty())
    return "the name part must not be empty";
  if (name.size() > max_label_name)
    return "the name part must be at most 63 characters";
  if (!is_label_token(name))
    return "the name part must be alphanumerics, '-', '_' or '.', starting and ending with an "
           "alphanumeric";
  return {};
}

std::string label_value_problem(std::string_view value) {
  if (value.empty())
    return {};
  if (value.size() > max_label_name)
    return "a label value must be at most 63 characters";
  if (!is_label_token(value))
    return "a label value must be alphanumerics, '-', '_' or '.', starting and ending with an "
           "alphanumeric";
  return {};
}

std::optional<std::int64_t> parse_int64(std::string_view s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

// ---- The label selector lexer (apimachinery's labels.Lexer) ----

enum class token_kind {
  end,
  identifier,
  bang,
  equals,
  double_equals,
  not_equals,
  in,
  not_in,
  greater,
  less,
  open_paren,
  close_paren,
  comma
};

struct token {
  token_kind kind;
  std::string_view text;
  std::size_t pos;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool is_special(char c) {
  switch (c) {
  case '=':
  case '!':
  case '(':
  case ')':
  case ',':
  case '>':
  case '<':
    return true;
  default:
    return false;
  }
}

std::vector<token> lex(std::string_view text) {
  std::vector<token> out;
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && is_space(text[i]))
      ++i;
    if (i == text.size()) {
      out.push_back({token_kind::end, {}, i});
      return out;
    }
    const std::size_t start = i;
    auto two = text.substr(i, 2);
    if (two == "!=" || two == "==") {
      out.push_back({two == "!=" ? token_kind::not_equals : token_kind::double_equals, two, start});
      i += 2;
      continue;
    }
    if (is_special(text[i])) {
      token_kind kind = token_kind::comma;
      switch (text[i]) {
      case '=':
        kind = token_kind::equals;
        break;
      case '!':
        kind = token_kind::bang;
        break;
      case '(':
        kind = token_kind::open_paren;
        break;
      case ')':
        kind = token_kind::close_paren;
        break;
      case '>':
        kind = token_kind::greater;
        break;
      case '<':
        kind = token_kind::less;
        break;
      default:
        break;
      }
      out.push_back({kind, text.substr(i, 1), start});
      ++i;
      continue;
    }
    while (i < text.size() && !is_space(text[i]) && !is_special(text[i]))
      ++i;
    auto word = text.substr(start, i - start);
    auto kind = word == "in"      ? token_kind::in
                : word == "notin" ? token_kind::not_in
                                  : token_kind::identifier;
    out.push_back({kind, word, start});
  }
}

// ---- The label selector parser (apimachinery's labels.Parser) ----

class label_parser {
public:
  explicit label_parser(std::string_view text) : text_(text), tokens_(lex(text)) {}

  result<std::vector<label_requirement>> parse() {
    std::vector<label_requirement> out;
    if (peek_value().kind == token_kind::end)
      return out;
    while (true) {
      const auto& start = peek_value();
      if (start.kind != token_kind::identifier && start.kind != token_kind::bang)
        return fail(start, "'!' or a label key");
      auto req = parse_requirement();
      if (!req)
        return std::move(req).err();
      out.push_back(std::move(*req));
      const auto& sep = next_value();
      if (sep.kind == token_kind::end)
        return out;
      if (sep.kind != token_kind::comma)
        return fail(sep, "',' or end of string");
      const auto& after = peek_value();
      if (after.kind != token_kind::identifier && after.kind != token_kind::bang)
        return fail(after, "'!' or a label key after ','");
    }
  }

private:
  // Keywords are only keywords where an operator may stand; as values they are plain words.
  token as_value(token t) const {
    if (t.kind == token_kind::in || t.kind == token_kind::not_in)
      t.kind = token_kind::identifier;
    return t;
  }
  token peek_value() const { return as_value(tokens_[next_]); }
  token next_value() { return as_value(next()); }
  const token& next() {
    const token& t = tokens_[next_];
    if (t.kind != token_kind::end)
      ++next_;
    return t;
  }

  error fail(const token& found, std::string_view expected) const {
    std::string what = found.kind == token_kind::end ? std::string("end of string")
                                                     : "'" + std::string(found.text) + "'";
    return make_error(errc::invalid_argument, "label selector \"" + std::string(text_) +
                                                  "\": expected " + std::string(expected) +
                                                  " at position " + std::to_string(found.pos) +
                                                  ", found " + what);
  }
  error invalid(std::size_t pos, std::string_view what, std::string_view problem) const {
    return make_error(errc::invalid_argument, "label selector \"" + std::string(text_) +
                                                  "\": invalid " + std::string(what) +
                                                  " at position " + std::to_string(pos) + ": " +
                                                  std::string(problem));
  }

  result<label_requirement> parse_requirement() {
    label_requirement req;
    bool negated = false;
    token key = next();
    if (key.kind == token_kind::bang) {
      negated = true;
      key = next();
    }
    if (key.kind != token_kind::identifier)
      return fail(key, "a label key");
    if (auto problem = label_key_problem(key.text); !problem.empty())
      return invalid(key.pos, "label key '" + std::string(key.text) + "'", problem);
    req.key = std::string(key.text);
    if (negated) {
      req.op = label_op::does_not_exist;
      return req;
    }
    if (auto t = peek_value().kind; t == token_kind::end || t == token_kind::comma) {
      req.op = label_op::exists;
      return req;
    }
    const token op = next();
    std::vector<std::pair<std::string_view, std::size_t>> values; // value, position
    switch (op.kind) {
    case token_kind::in:
    case token_kind::not_in: {
      req.op = op.kind == token_kind::in ? label_op::in : label_op::not_in;
      auto set = parse_value_set();
      if (!set)
        return std::move(set).err();
      values = std::move(*set);
      break;
    }
    case token_kind::equals:
    case token_kind::double_equals:
    case token_kind::not_equals:
    case token_kind::greater:
    case token_kind::less: {
      req.op = op.kind == token_kind::not_equals ? label_op::not_equals
               : op.kind == token_kind::greater  ? label_op::greater_than
               : op.kind == token_kind::less     ? label_op::less_than
                                                 : label_op::equals;
      auto value = parse_exact_value();
      if (!value)
        return std::move(value).err();
      values.push_back(*value);
      break;
    }
    default:
      return fail(op, "one of '=', '==', '!=', 'in', 'notin', '>', '<'");
    }

    for (const auto& [value, pos] : values) {
      if (req.op == label_op::greater_than || req.op == label_op::less_than) {
        if (!parse_int64(value))
          return invalid(pos, "value '" + std::string(value) + "'", "'>' and '<' need an integer");
      } else if (auto problem = label_value_problem(value); !problem.empty()) {
        return invalid(pos, "label value '" + std::string(value) + "'", problem);
      }
      req.values.emplace_back(value);
    }
    std::sort(req.values.begin(), req.values.end());
    req.values.erase(std::unique(req.values.begin(), req.values.end()), req.values.end());
    return req;
  }

  // After `=`, `!=`, `>`, `<`: one word, or nothing (the empty value) before ',' or the end.
  result<std::pair<std::string_view, std::size_t>> parse_exact_value() {
    const token t = peek_value();
    if (t.kind == token_kind::end || t.kind == token_kind::comma)
      return std::pair{std::string_view{}, t.pos};
    next();
    if (t.kind != token_kind::identifier)
      return fail(t, "a label value");
    return std::pair{t.text, t.pos};
  }

  // After `in` / `notin`: "(" value {"," value} ")", where a value may be empty ("(a,,b)").
  result<std::vector<std::pair<std::string_view, std::size_t>>> parse_value_set() {
    const token open = next();
    if (open.kind != token_kind::open_paren)
      return fail(open, "'('");
    if (const token t = peek_value(); t.kind == token_kind::close_paren)
      return fail(t, "at least one value");
    std::vector<std::pair<std::string_view, std::size_t>> values;
    while (true) {
      const token t = peek_value();
      if (t.kind == token_kind::identifier) {
        next();
        values.emplace_back(t.text, t.pos);
      } else {
        values.emplace_back(std::string_view{}, t.pos);
      }
      const token sep = next_value();
      if (sep.kind == token_kind::close_paren)
        return values;
      if (sep.kind != token_kind::comma)
        return fail(sep, "',' or ')'");
    }
  }

  std::string_view text_;
  std::vector<token> tokens_;
  std::size_t next_ = 0;
};

void normalise(std::vector<label_requirement>& reqs) {
  std::sort(reqs.begin(), reqs.end());
  reqs.erase(std::unique(reqs.begin(), reqs.end()), reqs.end());
}

// ---- Field selector escaping (apimachinery's fields.EscapeValue / UnescapeValue) ----

std::string escape_field_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == ',' || c == '=')
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

result<std::string> unescape_field_value(std::string_view value, std::string_view text,
                                         std::size_t offset) {
  auto fail = [&](std::size_t at, std::string problem) {
    return make_error(errc::invalid_argument, "field selector \"" + std::string(text) +
                                                  "\": " + problem + " at position " +
                                                  std::to_string(offset + at));
  };
  std::string out;
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c == '\\') {
      if (i + 1 == value.size())
        return fail(i, "a value may not end with a single '\\'");
      char escaped = value[++i];
      if (escaped != '\\' && escaped != ',' && escaped != '=')
        return fail(i - 1, std::string("invalid escape sequence '\\") + escaped +
                               "' (only \\\\, \\, and \\= are allowed)");
      out.push_back(escaped);
    } else if (c == '=' || c == ',') {
      return fail(i, std::string("unescaped '") + c + "' in a value (write '\\" + c + "')");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool is_field_path_char(char c) {
  return is_alnum(c) || c == '.' || c == '-' || c == '_';
}

std::string_view trim(std::string_view s, std::size_t& offset) {
  while (!s.empty() && is_space(s.front())) {
    s.remove_prefix(1);
    ++offset;
  }
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

result<field_requirement> parse_field_term(std::string_view term, std::string_view text,
                                           std::size_t offset) {
  auto fail = [&](std::size_t at, const std::string& problem) {
    return make_error(errc::invalid_argument, "field selector \"" + std::string(text) + "\": " +
                                                  problem + " at position " + std::to_string(at));
  };
  // The first unescaped operator splits the term; "!=" and "==" win over "=".
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '\\') {
      ++i;
      continue;
    }
    field_requirement req;
    std::size_t op_len = 0;
    if (term.substr(i, 2) == "!=") {
      req.op = field_op::not_equals;
      op_len = 2;
    } else if (term.substr(i, 2) == "==") {
      op_len = 2;
    } else if (term[i] == '=') {
      op_len = 1;
    } else {
      continue;
    }
    std::size_t field_offset = offset;
    auto field = trim(term.substr(0, i), field_offset);
    if (field.empty())
      return fail(offset + i, "expected a field name before the operator");
    for (std::size_t k = 0; k < field.size(); ++k)
      if (!is_field_path_char(field[k]))
        return fail(field_offset + k, "invalid character '" + std::string(1, field[k]) +
                                          "' in field name '" + std::string(field) + "'");
    req.field = std::string(field);
    auto value = unescape_field_value(term.substr(i + op_len), text, offset + i + op_len);
    if (!value)
      return std::move(value).err();
    req.value = std::move(*value);
    return req;
  }
  return fail(offset + term.size(),
              "expected '=', '==' or '!=' in term '" + std::string(term) + "'");
}

} // namespace

// ---- label_requirement / label_selector ----

bool label_requirement::matches(const string_map_view& labels) const {
  const std::optional<std::string_view> value = labels.find(key);
  const bool present = value.has_value();
  auto in_values = [&] {
    return present && std::binary_search(values.begin(), values.end(), *value);
  };
  switch (op) {
  case label_op::exists:
    return present;
  case label_op::does_not_exist:
    return !present;
  case label_op::equals:
  case label_op::in:
    return in_values();
  case label_op::not_equals:
  case label_op::not_in:
    return !in_values();
  case label_op::greater_than:
  case label_op::less_than: {
    if (!present || values.size() != 1)
      return false;
    auto have = parse_int64(*value);
    auto want = parse_int64(values.front());
    if (!have || !want)
      return false;
    return op == label_op::greater_than ? *have > *want : *have < *want;
  }
  }
  return false;
}

result<label_selector> label_selector::parse(std::string_view text) {
  auto reqs = label_parser(text).parse();
  if (!reqs)
    return std::move(reqs).err();
  label_selector out;
  out.requirements_ = std::move(*reqs);
  normalise(out.requirements_);
  return out;
}

label_selector
label_selector::from_labels(const std::vector<std::pair<std::string, std::string>>& labels) {
  label_selector out;
  for (const auto& [key, value] : labels)
    out.requirements_.push_back({key, label_op::equals, {value}});
  normalise(out.requirements_);
  return out;
}

bool label_selector::matches(const string_map_view& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const label_requirement& r) { return r.matches(labels); });
}

std::string label_selector::to_string() const {
  std::string out;
  for (const auto& r : requirements_) {
    if (!out.empty())
      out.push_back(',');
    auto single = r.values.empty() ? std::string() : r.values.front();
    switch (r.op) {
    case label_op::exists:
      out += r.key;
      break;
    case label_op::does_not_exist:
      out += "!" + r.key;
      break;
    case label_op::equals:
      out += r.key + "=" + single;
      break;
    case label_op::not_equals:
      out += r.key + "!=" + single;
      break;
    case label_op::greater_than:
      out += r.key + ">" + single;
      break;
    case label_op::less_than:
      out += r.key + "<" + single;
      break;
    case label_op::in:
    case label_op::not_in: {
      out += r.key + (r.op == label_op::in ? " in (" : " notin (");
      std::string joined;
      for (std::size_t i = 0; i < r.values.size(); ++i)
        joined += (i ? "," : "") + r.values[i];
      // "()" is rejected by the parser; the set holding only "" is written "(,)".
      out += joined.empty() ? "," : joined;
      out += ")";
      break;
    }
    }
  }
  return out;
}

label_selector label_selector::operator&(const label_selector& other) const {
  label_selector out = *this;
  out.requirements_.insert(out.requirements_.end(), other.requirements_.begin(),
                           other.requirements_.end());
  normalise(out.requirements_);
  return out;
}

// ---- field_selector ----

result<field_selector> field_selector::parse(std::string_view text) {
  field_selector out;
  std::size_t term_start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i + 1 < text.size() && text[i] == '\\') {
      ++i; // an escaped character never separates terms
      continue;
    }
    if (i < text.size() && text[i] != ',')
      continue;
    auto term = text.substr(term_start, i - term_start);
    std::size_t offset = term_start;
    term_start = i + 1;
    // apimachinery skips empty terms ("a=b,,c=d"), and so do we; blanks count as empty.
    if (trim(term, offset).empty())
      continue;
    auto req = parse_field_term(term, text, offset);
    if (!req)
      return std::move(req).err();
    out.requirements_.push_back(std::move(*req));
  }
  std::sort(out.requirements_.begin(), out.requirements_.end());
  out.requirements_.erase(std::unique(out.requirements_.begin(), out.requirements_.end()),
                          out.requirements_.end());
  return out;
}

bool field_selector::matches(const object& obj) const {
  return std::all_of(requirements_.begin(), requirements_.end(), [&](const field_requirement& r) {
    auto actual = field_value(obj, r.field).value_or(std::string());
    return (actual == r.value) == (r.op == field_op::equals);
  });
}

std::string field_selector::to_string() const {
  std::string out;
  for (const auto& r : requirements_) {
    if (!out.empty())
      out.push_back(',');
    out += r.field;
    out += r.op == field_op::equals ? "=" : "!=";
    out += escape_field_value(r.value);
  }
  return out;
}

field_selector field_selector::operator&(const field_selector& other) const {
  field_selector out = *this;
  out.requirements_.insert(out.requirements_.end(), other.requirements_.begin(),
                           other.requirements_.end());
  std::sort(out.requirements_.begin(), out.requirements_.end());
  out.requirements_.erase(std::unique(out.requirements_.begin(), out.requirements_.end()),
                          out.requirements_.end());
  return out;
}

std::optional<std::string> field_selector::required_value(std::string_view field) const {
  for (const auto& r : requirements_)
    if (r.op == field_op::equals && r.field == field)
      return r.value;
  return std::nullopt;
}

} // namespace kinformer
