#pragma once
// The kind of JSON value a byte begins, as error messages name it ("a List must be a JSON
// object, found an array").

namespace kinformer {

constexpr const char* json_value_kind(char first) noexcept {
  switch (first) {
  case '{':
    return "an object";
  case '[':
    return "an array";
  case '"':
    return "a string";
  case 't':
  case 'f':
    return "a boolean";
  case 'n':
    return "null";
  default:
    return first == '-' || (first >= '0' && first <= '9') ? "a number" : "not JSON";
  }
}

} // namespace kinformer
