#include "app/kubesim/merge_patch.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <optional>
#include <string>
#include <vector>

namespace json = boost::json;

namespace kinformer::sim {

void apply_merge_patch(json::value& target, const json::value& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object())
    target = json::object();
  auto& out = target.get_object();
  for (const auto& kv : patch.get_object()) {
    if (kv.value().is_null()) {
      out.erase(kv.key());
      continue;
    }
    apply_merge_patch(out[kv.key()], kv.value());
  }
}

namespace {

error patch_error(std::size_t index, std::string why) {
  return make_error(errc::invalid_argument,
                    "json patch operation " + std::to_string(index) + ": " + std::move(why));
}

// Splits a JSON pointer ("/a/b~1c") into unescaped tokens.
result<std::vector<std::string>> parse_pointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty())
    return tokens;
  if (pointer.front() != '/')
    return make_error(errc::invalid_argument, "path must start with '/': " + std::string(pointer));
  std::string token;
  for (std::size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
    } else if (pointer[i] == '~') {
      if (i + 1 >= pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1'))
        return make_error(errc::invalid_argument, "bad escape in path: " + std::string(pointer));
      token += pointer[i + 1] == '0' ? '~' : '/';
      ++i;
    } else {
      token += pointer[i];
    }
  }
  return tokens;
}

std::optional<std::size_t> array_index(const std::string& token, std::size_t size, bool allow_end) {
  if (allow_end && token == "-")
    return size;
  std::size_t index = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
  if (ec != std::errc() || end != token.data() + token.size() || token.empty() ||
      (token.size() > 1 && token[0] == '0'))
    return std::nullopt;
  if (index > size || (!allow_end && index == size))
    return std::nullopt;
  return index;
}

// The value at the pointer's parent, or null when a step is missing.
json::value* resolve(json::value& root, const std::vector<std::string>& tokens, std::size_t count) {
  json::value* at = &root;
  for (std::size_t i = 0; i < count; ++i) {
    if (at->is_object()) {
      at = at->get_object().if_contains(tokens[i]);
    } else if (at->is_array()) {
      auto index = array_index(tokens[i], at->get_array().size(), false);
      at = index ? &at->get_array()[*index] : nullptr;
    } else {
      at = nullptr;
    }
    if (!at)
      return nullptr;
  }
  return at;
}

status_result add_at(json::value& root, const std::vector<std::string>& tokens, json::value v) {
  if (tokens.empty()) {
    root = std::move(v);
    return ok_v;
  }
  json::value* parent = resolve(root, tokens, tokens.size() - 1);
  if (!parent)
    return make_error(errc::invalid_argument, "parent path does not exist");
  if (parent->is_object()) {
    parent->get_object()[tokens.back()] = std::move(v);
    return ok_v;
  }
  if (parent->is_array()) {
    auto& arr = parent->get_array();
    auto index = array_index(tokens.back(), arr.size(), true);
    if (!index)
      return make_error(errc::invalid_argument, "array index out of range: " + tokens.back());
    arr.insert(arr.begin() + std::ptrdiff_t(*index), std::move(v));
    return ok_v;
  }
  return make_error(errc::invalid_argument, "parent is neither an object nor an array");
}

result<json::value> remove_at(json::value& root, const std::vector<std::string>& tokens) {
  if (tokens.empty())
    return make_error(errc::invalid_argument, "cannot remove the whole document");
  json::value* parent = resolve(root, tokens, tokens.size() - 1);
  if (parent && parent->is_object()) {
    auto& obj = parent->get_object();
    auto it = obj.find(tokens.back());
    if (it != obj.end()) {
      json::value removed = std::move(it->value());
      obj.erase(it);
      return removed;
    }
  } else if (parent && parent->is_array()) {
    auto& arr = parent->get_array();
    if (auto index = array_index(tokens.back(), arr.size(), false)) {
      json::value removed = std::move(arr[*index]);
      arr.erase(arr.begin() + std::ptrdiff_t(*index));
      return removed;
    }
  }
  return make_error(errc::invalid_argument, "path does not exist");
}

} // namespace

status_result apply_json_patch(json::value& target, const json::value& patch) {
  if (!patch.is_array())
    return make_error(errc::invalid_argument, "json patch must be an array of operations");
  std::size_t index = 0;
  for (const auto& step : patch.get_array()) {
    if (!step.is_object())
      return patch_error(index, "not an object");
    const auto& o = step.get_object();
    const auto* op = o.if_contains("op");
    const auto* path = o.if_contains("path");
    if (!op || !op->is_string() || !path || !path->is_string())
      return patch_error(index, "missing op or path");
    auto tokens = parse_pointer(path->get_string());
    if (!tokens)
      return patch_error(index, tokens.err().message);
    const std::string_view name = op->get_string();
    const auto* value = o.if_contains("value");
    status_result done = ok_v;
    if (name == "add" || name == "replace" || name == "test") {
      if (!value)
        return patch_error(index, "missing value");
      if (name == "test") {
        json::value* at = resolve(target, *tokens, tokens->size());
        if (!at || *at != *value)
          return patch_error(index, "test failed at " + std::string(path->get_string()));
      } else {
        if (name == "replace") {
          if (!resolve(target, *tokens, tokens->size()))
            return patch_error(index, "path does not exist: " + std::string(path->get_string()));
          if (!tokens->empty()) {
            auto removed = remove_at(target, *tokens);
            if (!removed)
              return patch_error(index, removed.err().message);
          }
        }
        done = add_at(target, *tokens, *value);
      }
    } else if (name == "remove") {
      auto removed = remove_at(target, *tokens);
      if (!removed)
        return patch_error(index, removed.err().message + ": " + std::string(path->get_string()));
    } else if (name == "move" || name == "copy") {
      const auto* from = o.if_contains("from");
      if (!from || !from->is_string())
        return patch_error(index, "missing from");
      auto from_tokens = parse_pointer(from->get_string());
      if (!from_tokens)
        return patch_error(index, from_tokens.err().message);
      json::value moved;
      if (name == "move") {
        auto removed = remove_at(target, *from_tokens);
        if (!removed)
          return patch_error(index, removed.err().message + ": " + std::string(from->get_string()));
        moved = std::move(*removed);
      } else {
        json::value* at = resolve(target, *from_tokens, from_tokens->size());
        if (!at)
          return patch_error(index, "path does not exist: " + std::string(from->get_string()));
        moved = *at;
      }
      done = add_at(target, *tokens, std::move(moved));
    } else {
      return patch_error(index, "unknown op " + std::string(name));
    }
    if (!done)
      return patch_error(index, done.err().message);
    ++index;
  }
  return ok_v;
}

} // namespace kinformer::sim
