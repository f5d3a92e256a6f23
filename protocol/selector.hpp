#pragma once
// Label and field selectors: the Kubernetes grammar, parsed once, matched many times.
//
// Label selectors (k8s.io/apimachinery/pkg/labels):  `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
// `a notin (x,y)`, `a` (exists), `!a` (does not exist), `a>3`, `a<3`, comma-separated, all ANDed.
// Field selectors (k8s.io/apimachinery/pkg/fields): `path=value`, `path==value`, `path!=value`,
// comma-separated, with `\,`, `\=` and `\\` escapes in values.
//
// One deliberate difference from apimachinery: `a in ()` is an error here (apimachinery reads it as
// `a in ("")`); the set holding only the empty value is written `a in (,)`.

#include "protocol/object.hpp"
#include "protocol/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

enum class label_op {
  equals,
  not_equals,
  in,
  not_in,
  exists,
  does_not_exist,
  greater_than,
  less_than
};

struct label_requirement {
  std::string key;
  label_op op = label_op::exists;
  std::vector<std::string> values; // sorted, unique; one value for =, !=, >, <

  bool matches(const string_map_view& labels) const;
  auto operator<=>(const label_requirement&) const = default;
};

class label_selector {
public:
  // The empty selector matches everything.
  label_selector() = default;
  // Parses the query-string form. Errors name the offending position and token, for example
  // `invalid_argument: label selector "a in (b": expected ')' at position 7`.
  static result<label_selector> parse(std::string_view text);
  // The selector that matches exactly these labels (matchLabels).
  static label_selector from_labels(const std::vector<std::pair<std::string, std::string>>& labels);

  bool empty() const noexcept { return requirements_.empty(); }
  bool matches(const string_map_view& labels) const;
  bool matches(const object& obj) const { return matches(obj.meta().labels); }
  // The canonical query-string form, requirements sorted by key: parse(to_string()) == *this.
  std::string to_string() const;
  const std::vector<label_requirement>& requirements() const noexcept { return requirements_; }
  // ANDs another selector into this one.
  label_selector operator&(const label_selector& other) const;
  bool operator==(const label_selector&) const = default;

private:
  std::vector<label_requirement> requirements_;
};

enum class field_op { equals, not_equals };

struct field_requirement {
  std::string field; // a dotted path: "metadata.name", "status.phase"
  field_op op = field_op::equals;
  std::string value;
  auto operator<=>(const field_requirement&) const = default;
};

class field_selector {
public:
  field_selector() = default;
  static result<field_selector> parse(std::string_view text);

  bool empty() const noexcept { return requirements_.empty(); }
  // A missing field compares as the empty string, as the API server does.
  bool matches(const object& obj) const;
  // Canonical form with escapes, sorted by field: parse(to_string()) == *this.
  std::string to_string() const;
  const std::vector<field_requirement>& requirements() const noexcept { return requirements_; }
  field_selector operator&(const field_selector& other) const;
  bool operator==(const field_selector&) const = default;
  // The value required by an `=` term on `field`, if there is one (for index lookups).
  std::optional<std::string> required_value(std::string_view field) const;

private:
  std::vector<field_requirement> requirements_;
};

} // namespace kinformer
