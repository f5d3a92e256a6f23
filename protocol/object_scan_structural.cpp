#include "protocol/object_scan_structural.hpp"
#include "protocol/json_value_kind.hpp"
#include "protocol/object_scan_cut.hpp"

#include <simdjson.h>

#include <charconv>
#include <cstring>

namespace kinformer {

namespace {

// A string with escapes, decoded by simdjson as the walk decodes it (rare in metadata: the
// annotation kubectl apply leaves is one). Its own parser: the validating one still holds the
// positions being read.
std::string_view decode_escaped(std::string_view quoted) {
  thread_local simdjson::dom::parser parser;
  std::string_view decoded;
  // The text goes on past the token, so the padding simdjson reads ahead is there.
  [[maybe_unused]] auto e = parser.parse(quoted.data(), quoted.size(), false).get(decoded);
  return decoded; // validated before: it cannot fail
}

// Reads over the positions: `at_` is the structural being read. Each read_* consumes one value
// and leaves `at_` on the structural after it.
class structural_reader {
public:
  structural_reader(std::string_view text, structural_positions structurals, object_scan& out)
      : text_(text), structurals_(structurals), out_(out) {}

  // The root object, or a watch line's "object". With `stop_after` >= 0, stops once that many
  // members named kind, apiVersion or metadata have been read.
  bool read_object_root(int stop_after = -1) {
    out_.object.begin = position();
    out_.object.present = true;
    int read = 0;
    for (bool more = enter('}'); more; more = next_member('}')) {
      out_.has_members = true;
      if (read == stop_after)
        return true;
      const std::string_view key = key_content();
      if (key == "kind") {
        out_.type_members = true;
        if (!read_string_member(out_.kind))
          return false;
      } else if (key == "apiVersion") {
        out_.type_members = true;
        if (!read_string_member(out_.api_version))
          return false;
      } else if (key == "metadata") {
        if (!read_metadata())
          return false;
      } else {
        skip_value();
        continue;
      }
      ++read;
    }
    out_.object.end = position(-1) + 1;
    return true;
  }

  // At a watch line's root: reads "type" and "object" as scan_watch_line() does.
  bool read_watch_line(watch_line_scan& line) {
    bool type_seen = false;
    for (bool more = enter('}'); more; more = next_member('}')) {
      const std::string_view key = key_content();
      if (key == "type") {
        type_seen = current() == '"';
        if (type_seen)
          line.type.assign(string_value());
        skip_value();
      } else if (key == "object") {
        line.object_is_object = current() == '{';
        if (!line.object_is_object) {
          line.object_found = json_value_kind(current());
          skip_value();
          continue;
        }
        out_.clear();
        if (!read_object_root())
          return false;
      } else {
        skip_value();
      }
    }
    if (!type_seen)
      line.type.clear();
    return true;
  }

private:
  char current() const { return text_[structurals_[at_]]; }
  std::size_t position(int offset = 0) const { return structurals_[at_ + offset]; }

  // At '{' or '[': steps in. False for an empty one, which is then stepped over.
  bool enter(char close) {
    ++at_;
    if (current() != close)
      return true;
    ++at_;
    return false;
  }

  // After a member or element: steps over the ',' before the next one, or over the closing
  // brace or bracket.
  bool next_member(char close) {
    const bool more = current() != close;
    ++at_;
    return more;
  }

  // At a member's key: its raw content, and steps to its value.
  std::string_view key_content() {
    const std::string_view content = string_content();
    at_ += 2; // the key and ':'
    return content;
  }

  void skip_value() {
    const char first = current();
    ++at_;
    if (first != '{' && first != '[')
      return;
    for (int depth = 1; depth > 0; ++at_) {
      const char c = current();
      depth += (c == '{' || c == '[') - (c == '}' || c == ']');
    }
  }

  // The bytes between the quotes of the string at `at_`: it ends at the last quote before the
  // next structural.
  std::string_view string_content() const {
    const char* open = text_.data() + position();
    const char* end = token_end(open, text_.data() + position(1));
    return {open + 1, static_cast<std::size_t>(end - 1 - (open + 1))};
  }

  // The string at `at_`, decoded (not consumed).
  std::string_view string_value() const {
    const std::string_view content = string_content();
    if (std::memchr(content.data(), '\\', content.size()) == nullptr)
      return content;
    return decode_escaped({content.data() - 1, content.size() + 2});
  }

  // Records the string at `at_` (not consumed), the key of a map entry included.
  void record_string(scanned_string& out) {
    const std::string_view content = string_content();
    out.begin = static_cast<std::size_t>(content.data() - text_.data());
    out.size = content.size();
    out.present = true;
    out.escaped = std::memchr(content.data(), '\\', content.size()) != nullptr;
    out.unescaped.clear();
    if (!out.escaped)
      return;
    out.unescaped.assign(decode_escaped({content.data() - 1, content.size() + 2}));
    out_.escaped_bytes += out.unescaped.size();
  }

  // A string, or null (then absent). A repeated key: the last value wins.
  bool read_string_member(scanned_string& out) {
    out = scanned_string{};
    if (current() == '"')
      record_string(out);
    else if (current() != 'n')
      return false;
    ++at_;
    return true;
  }

  bool read_metadata() {
    clear_metadata();
    if (current() == 'n') {
      ++at_;
      return true;
    }
    if (current() != '{')
      return false;
    out_.metadata.begin = position();
    out_.metadata.present = true;
    const char* base = text_.data();
    const char* managed_fields_key = nullptr; // its opening quote, until the next member's
    for (bool more = enter('}'); more; more = next_member('}')) {
      const char* quote = base + position();
      if (managed_fields_key != nullptr) {
        out_.managed_fields = member_cut(base, managed_fields_key, quote);
        managed_fields_key = nullptr;
      }
      const std::string_view key = key_content();
      if (key == "managedFields") {
        managed_fields_key = quote;
        ++out_.managed_fields_members;
      }
      bool good = true;
      if (key == "namespace")
        good = read_string_member(out_.namespace_);
      else if (key == "name")
        good = read_string_member(out_.name);
      else if (key == "uid")
        good = read_string_member(out_.uid);
      else if (key == "resourceVersion")
        good = read_string_member(out_.resource_version);
      else if (key == "deletionTimestamp")
        good = read_string_member(out_.deletion_timestamp);
      else if (key == "generation")
        good = read_generation();
      else if (key == "labels")
        good = read_string_map(out_.labels);
      else if (key == "annotations")
        good = read_string_map(out_.annotations);
      else if (key == "ownerReferences")
        good = read_owner_references();
      else
        skip_value();
      if (!good)
        return false;
    }
    out_.metadata.end = position(-1) + 1;
    if (managed_fields_key != nullptr) // the last member: it ends before the closing brace
      out_.managed_fields = member_cut(base, managed_fields_key, base + out_.metadata.end - 1);
    return true;
  }

  void clear_metadata() {
    for (auto* field : {&out_.namespace_, &out_.name, &out_.uid, &out_.resource_version,
                        &out_.deletion_timestamp})
      *field = scanned_string{};
    out_.generation = 0;
    out_.labels.clear();
    out_.annotations.clear();
    out_.owner_references.clear();
    out_.metadata = scanned_range{};
    out_.managed_fields = scanned_range{};
    out_.managed_fields_members = 0;
  }

  // An integer in 64 bits, or null. The text is valid JSON, so a number that from_chars does not
  // read to its end has a fraction or an exponent.
  bool read_generation() {
    out_.generation = 0;
    const char first = current();
    if (first == 'n') {
      ++at_;
      return true;
    }
    if (first != '-' && (first < '0' || first > '9'))
      return false;
    const char* begin = text_.data() + position();
    const char* end = token_end(begin, text_.data() + position(1));
    std::int64_t g = 0;
    auto [stop, e] = std::from_chars(begin, end, g);
    if (e != std::errc() || stop != end)
      return false;
    out_.generation = g;
    ++at_;
    return true;
  }

  bool read_string_map(std::vector<std::pair<scanned_string, scanned_string>>& out) {
    out.clear();
    if (current() == 'n') {
      ++at_;
      return true;
    }
    if (current() != '{')
      return false;
    for (bool more = enter('}'); more; more = next_member('}')) {
      auto& entry = out.emplace_back();
      record_string(entry.first);
      at_ += 2; // the key and ':'
      if (current() != '"')
        return false;
      record_string(entry.second);
      ++at_;
    }
    return true;
  }

  bool read_owner_references() {
    out_.owner_references.clear();
    if (current() == 'n') {
      ++at_;
      return true;
    }
    if (current() != '[')
      return false;
    for (bool more = enter(']'); more; more = next_member(']')) {
      if (current() != '{')
        return false;
      auto& ref = out_.owner_references.emplace_back();
      for (bool field = enter('}'); field; field = next_member('}')) {
        const std::string_view key = key_content();
        bool good = true;
        if (key == "apiVersion")
          good = read_string_member(ref.api_version);
        else if (key == "kind")
          good = read_string_member(ref.kind);
        else if (key == "name")
          good = read_string_member(ref.name);
        else if (key == "uid")
          good = read_string_member(ref.uid);
        else if (key == "controller")
          read_flag(ref.controller);
        else if (key == "blockOwnerDeletion")
          read_flag(ref.block_owner_deletion);
        else
          skip_value();
        if (!good)
          return false;
      }
    }
    return true;
  }

  // A boolean read when it is one; any other value is ignored.
  void read_flag(bool& out) {
    out = current() == 't';
    skip_value();
  }

  std::string_view text_;
  structural_positions structurals_;
  object_scan& out_;
  std::size_t at_ = 0;
};

} // namespace

bool read_structural_object(std::string_view padded_text, const validated_object& validated,
                            object_scan& out) {
  out.clear();
  structural_reader reader(padded_text, validated.structurals, out);
  if (!reader.read_object_root(validated.type_and_metadata_members))
    return false;
  // A read that stopped early has not reached the root's closing brace: the last structural
  // (the text's size follows it).
  const structural_positions& structurals = validated.structurals;
  out.object.end = structurals[structurals.size() - 2] + std::size_t{1};
  return true;
}

bool read_structural_watch_line(std::string_view padded_line, structural_positions structurals,
                                watch_line_scan& out) {
  out.type.clear();
  out.object_is_object = false;
  out.object_found = "nothing";
  out.failed_in_object = false;
  out.object.clear();
  if (padded_line[structurals[0]] != '{')
    return false; // the walk says what a watch event must be
  structural_reader reader(padded_line, structurals, out.object);
  return reader.read_watch_line(out);
}

} // namespace kinformer
