// The body of object_scan.cpp's scans, compiled once per simdjson kernel: simdjson 3.0's
// On-Demand front end uses the kernel chosen when its header is compiled, so each
// object_scan_<kernel>.cpp includes this file with its own compiler flags and namespace
// (KINFORMER_SCAN_KERNEL), and object_scan.cpp picks one at run time.

#include "protocol/object_scan.hpp"
#include "protocol/object_scan_cut.hpp"

#include <simdjson.h>

#include <cstring>

#ifndef KINFORMER_SCAN_KERNEL
#error "define KINFORMER_SCAN_KERNEL before including object_scan_kernel.ipp"
#endif

namespace kinformer::KINFORMER_SCAN_KERNEL {

namespace od = simdjson::ondemand;

namespace {

// Deep enough for CRD schemas; shallow enough that the recursion below stays small.
constexpr int max_depth = 256;

// One parser per thread: it keeps its buffers between documents, so a scan allocates nothing.
od::parser& thread_parser() {
  thread_local od::parser parser;
  return parser;
}

const char* type_name(od::json_type type) {
  switch (type) {
  case od::json_type::array:
    return "an array";
  case od::json_type::object:
    return "an object";
  case od::json_type::number:
    return "a number";
  case od::json_type::string:
    return "a string";
  case od::json_type::boolean:
    return "a boolean";
  case od::json_type::null:
    return "null";
  }
  return "unknown";
}

// Walks one document. Every value is visited and validated: simdjson's On-Demand front end
// checks only what it is asked for, and asking for everything makes it a validating parser.
class walker {
public:
  walker(std::string_view text, object_scan& out)
      : base_(text.data()), end_(text.data() + text.size()), out_(out) {}

  // The first error, ready to return.
  error failure() const { return make_error(code_, message_); }

  bool object_root(od::object root, const char* first_byte) {
    out_.object.begin = static_cast<std::size_t>(first_byte - base_);
    out_.object.present = true;
    for (auto member : root) {
      od::field field;
      if (!ok(std::move(member).get(field)))
        return false;
      out_.has_members = true;
      const od::raw_json_string key = field.key();
      if (!check_key(field))
        return false;
      od::value& value = field.value();
      if (key == "kind") {
        out_.type_members = true;
        if (!string_member(value, "object", "kind", out_.kind))
          return false;
      } else if (key == "apiVersion") {
        out_.type_members = true;
        if (!string_member(value, "object", "apiVersion", out_.api_version))
          return false;
      } else if (key == "metadata") {
        // A repeated key: the last value wins, whole (as Boost.JSON's tree has it).
        clear_metadata();
        if (!metadata(value))
          return false;
      } else if (!any(value, 2)) {
        return false;
      }
    }
    return true;
  }

  // Whether a number's exponent is beyond what Boost.JSON reads (a 32-bit int): simdjson takes
  // 4e-99999999999 as 0, Boost.JSON refuses it, and object::tree() must be able to parse every
  // object the scanner accepted.
  static bool exponent_overflows(std::string_view token) {
    std::size_t at = token.find_first_of("eE");
    if (at == std::string_view::npos)
      return false;
    ++at;
    if (at < token.size() && (token[at] == '+' || token[at] == '-'))
      ++at;
    std::int64_t exponent = 0;
    for (; at < token.size() && token[at] >= '0' && token[at] <= '9'; ++at) {
      exponent = exponent * 10 + (token[at] - '0');
      if (exponent > 2147483647)
        return true;
    }
    return false;
  }

  // Validates any value and whatever it contains.
  bool any(od::value& value, int depth) {
    if (depth > max_depth)
      return invalid_json("nesting deeper than " + std::to_string(max_depth));
    od::json_type type;
    if (!ok(value.type().get(type)))
      return false;
    switch (type) {
    case od::json_type::object: {
      od::object object;
      if (!ok(value.get_object().get(object)))
        return false;
      for (auto member : object) {
        od::field field;
        if (!ok(std::move(member).get(field)) || !check_key(field) ||
            !any(field.value(), depth + 1))
          return false;
      }
      return true;
    }
    case od::json_type::array: {
      od::array array;
      if (!ok(value.get_array().get(array)))
        return false;
      for (auto element : array) {
        od::value item;
        if (!ok(element.get(item)) || !any(item, depth + 1))
          return false;
      }
      return true;
    }
    case od::json_type::string:
      return check_string(value);
    case od::json_type::number: {
      if (exponent_overflows(value.raw_json_token()))
        return invalid_json("a number's exponent is out of range");
      od::number number;
      auto e = value.get_number().get(number);
      if (e == simdjson::NUMBER_ERROR) {
        // Integers beyond 64 bits are valid JSON: read them as a double instead.
        double d;
        e = value.get_double().get(d);
      }
      return ok(e);
    }
    case od::json_type::boolean: {
      bool b;
      return ok(value.get_bool().get(b));
    }
    case od::json_type::null: {
      bool is_null = false;
      if (!ok(value.is_null().get(is_null)))
        return false;
      return is_null || invalid_json("invalid literal");
    }
    }
    return invalid_json("unknown value");
  }

  bool ok(simdjson::error_code e) {
    if (e == simdjson::SUCCESS)
      return true;
    if (code_ == errc::invalid_json && message_.empty())
      message_ = simdjson::error_message(e);
    return false;
  }

  bool invalid_json(std::string message) {
    code_ = errc::invalid_json;
    message_ = std::move(message);
    return false;
  }

  bool invalid_object(std::string message) {
    code_ = errc::invalid_object;
    message_ = std::move(message);
    return false;
  }

  // A string member (or null, or absent) whose place in the text is recorded.
  bool string_member(od::value& value, std::string_view where, std::string_view name,
                     scanned_string& out) {
    out = scanned_string{}; // a repeated key: the last value wins
    od::json_type type;
    if (!ok(value.type().get(type)))
      return false;
    if (type == od::json_type::null)
      return any(value, 0);
    if (type != od::json_type::string)
      return invalid_object(std::string(where) + "." + std::string(name) +
                            " must be a string, found " + type_name(type));
    return record_string(value, out);
  }

  // Decoding a key consumes it in the field, so callers read field.key() before this.
  bool check_key(od::field& field) { return check_key(field, nullptr); }

private:
  // The bytes between a string token's quotes. raw_json_token() runs to the next token, so
  // trailing whitespace is trimmed first.
  static std::string_view string_content(std::string_view token) {
    while (!token.empty() && token.back() != '"')
      token.remove_suffix(1);
    if (token.size() < 2)
      return {};
    return token.substr(1, token.size() - 2);
  }

  bool check_string(od::value& value) {
    std::string_view content = string_content(value.raw_json_token());
    if (std::memchr(content.data(), '\\', content.size()) == nullptr)
      return consume_plain(value); // stage 1 already checked UTF-8 and control characters
    std::string_view decoded;
    return ok(value.get_string().get(decoded));
  }

  // Steps over a string without unescaping it. A value that is never consumed is skipped by
  // simdjson without checking the structure after it ('{"a":"b":}}' would pass): every value
  // must be consumed.
  bool consume_plain(od::value& value) {
    od::raw_json_string raw;
    return ok(value.get_raw_json_string().get(raw));
  }

  bool record_string(od::value& value, scanned_string& out) {
    out.escaped = false;
    out.unescaped.clear();
    std::string_view content = string_content(value.raw_json_token());
    out.begin = static_cast<std::size_t>(content.data() - base_);
    out.size = content.size();
    out.present = true;
    if (std::memchr(content.data(), '\\', content.size()) == nullptr)
      return consume_plain(value);
    std::string_view decoded;
    if (!ok(value.get_string().get(decoded)))
      return false;
    out.escaped = true;
    out.unescaped.assign(decoded);
    out_.escaped_bytes += decoded.size();
    return true;
  }

  // Keys are validated like strings. A key is recorded only in labels and annotations.
  bool check_key(od::field& field, scanned_string* record) {
    const char* raw = field.key().raw();
    const char* quote =
        static_cast<const char*>(std::memchr(raw, '"', static_cast<std::size_t>(end_ - raw)));
    const bool plain = std::memchr(raw, '\\', static_cast<std::size_t>(quote - raw)) == nullptr;
    if (plain) {
      if (record) {
        record->begin = static_cast<std::size_t>(raw - base_);
        record->size = static_cast<std::size_t>(quote - raw);
        record->present = true;
      }
      return true;
    }
    std::string_view decoded;
    if (!ok(field.unescaped_key().get(decoded)))
      return false;
    if (record) {
      const char* end = raw; // the closing quote: the first one no backslash escapes
      while (*end != '"')
        end += *end == '\\' ? 2 : 1;
      record->begin = static_cast<std::size_t>(raw - base_);
      record->size = static_cast<std::size_t>(end - raw);
      record->present = true;
      record->escaped = true;
      record->unescaped.assign(decoded);
      out_.escaped_bytes += decoded.size();
    }
    return true;
  }

  bool metadata(od::value& value) {
    od::json_type type;
    if (!ok(value.type().get(type)))
      return false;
    if (type == od::json_type::null)
      return any(value, 2);
    if (type != od::json_type::object)
      return invalid_object(std::string("metadata must be an object, found ") + type_name(type));
    const char* first = value.raw_json_token().data();
    od::object meta;
    if (!ok(value.get_object().get(meta)))
      return false;
    out_.metadata.begin = static_cast<std::size_t>(first - base_);
    out_.metadata.present = true;
    const char* managed_fields_key = nullptr; // its opening quote, until the next member's
    for (auto member : meta) {
      od::field field;
      if (!ok(std::move(member).get(field)))
        return false;
      const od::raw_json_string key = field.key();
      if (!check_key(field))
        return false;
      const char* quote = key.raw() - 1;
      if (managed_fields_key != nullptr) {
        out_.managed_fields = member_cut(base_, managed_fields_key, quote);
        managed_fields_key = nullptr;
      }
      if (key == "managedFields") {
        managed_fields_key = quote;
        ++out_.managed_fields_members;
      }
      od::value& v = field.value();
      bool good = true;
      if (key == "namespace")
        good = string_member(v, "metadata", "namespace", out_.namespace_);
      else if (key == "name")
        good = string_member(v, "metadata", "name", out_.name);
      else if (key == "uid")
        good = string_member(v, "metadata", "uid", out_.uid);
      else if (key == "resourceVersion")
        good = string_member(v, "metadata", "resourceVersion", out_.resource_version);
      else if (key == "deletionTimestamp")
        good = string_member(v, "metadata", "deletionTimestamp", out_.deletion_timestamp);
      else if (key == "generation")
        good = generation(v);
      else if (key == "labels")
        good = string_map(v, "labels", out_.labels);
      else if (key == "annotations")
        good = string_map(v, "annotations", out_.annotations);
      else if (key == "ownerReferences")
        good = owner_references(v);
      else
        good = any(v, 3);
      if (!good)
        return false;
    }
    if (!end_of(out_.metadata))
      return false;
    if (managed_fields_key != nullptr) // the last member: it ends before the closing brace
      out_.managed_fields = member_cut(base_, managed_fields_key, base_ + out_.metadata.end - 1);
    return true;
  }

  // Records one past the closing brace of the value just iterated: the parser now stands on the
  // token after it, so the brace is the last non-space byte before that token.
  bool end_of(scanned_range& range) {
    const char* next = nullptr;
    if (parent_ == nullptr || !ok(parent_->current_location().get(next)))
      return false;
    while (next > base_ && next[-1] != '}')
      --next;
    range.end = static_cast<std::size_t>(next - base_);
    return true;
  }

public:
  od::document* parent_ = nullptr; // for current_location()

private:
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

  bool generation(od::value& value) {
    out_.generation = 0;
    od::json_type type;
    if (!ok(value.type().get(type)))
      return false;
    if (type == od::json_type::null)
      return any(value, 3);
    std::int64_t g = 0;
    if (type != od::json_type::number || value.get_int64().get(g) != simdjson::SUCCESS)
      return invalid_object("metadata.generation must be an integer");
    out_.generation = g;
    return true;
  }

  bool string_map(od::value& value, std::string_view name,
                  std::vector<std::pair<scanned_string, scanned_string>>& out) {
    out.clear();
    od::json_type type;
    if (!ok(value.type().get(type)))
      return false;
    if (type == od::json_type::null)
      return any(value, 3);
    if (type != od::json_type::object)
      return invalid_object("metadata." + std::string(name) + " must be an object");
    od::object map;
    if (!ok(value.get_object().get(map)))
      return false;
    for (auto member : map) {
      od::field field;
      if (!ok(std::move(member).get(field)))
        return false;
      auto& entry = out.emplace_back();
      if (!check_key(field, &entry.first))
        return false;
      od::value& v = field.value();
      od::json_type vt;
      if (!ok(v.type().get(vt)))
        return false;
      if (vt != od::json_type::string) {
        std::string key = entry.first.escaped
                              ? entry.first.unescaped
                              : std::string(base_ + entry.first.begin, entry.first.size);
        return invalid_object("metadata." + std::string(name) + "." + key + " must be a string");
      }
      if (!record_string(v, entry.second))
        return false;
    }
    return true;
  }

  bool owner_references(od::value& value) {
    out_.owner_references.clear();
    od::json_type type;
    if (!ok(value.type().get(type)))
      return false;
    if (type == od::json_type::null)
      return any(value, 3);
    if (type != od::json_type::array)
      return invalid_object("metadata.ownerReferences must be an array");
    od::array refs;
    if (!ok(value.get_array().get(refs)))
      return false;
    for (auto element : refs) {
      od::value item;
      if (!ok(element.get(item)))
        return false;
      od::json_type it;
      if (!ok(item.type().get(it)))
        return false;
      if (it != od::json_type::object)
        return invalid_object("metadata.ownerReferences[] must be objects");
      od::object ref;
      if (!ok(item.get_object().get(ref)))
        return false;
      auto& out = out_.owner_references.emplace_back();
      for (auto member : ref) {
        od::field field;
        if (!ok(std::move(member).get(field)))
          return false;
        const od::raw_json_string key = field.key();
        if (!check_key(field))
          return false;
        od::value& v = field.value();
        const std::string_view where = "metadata.ownerReferences[]";
        bool good = true;
        if (key == "apiVersion")
          good = string_member(v, where, "apiVersion", out.api_version);
        else if (key == "kind")
          good = string_member(v, where, "kind", out.kind);
        else if (key == "name")
          good = string_member(v, where, "name", out.name);
        else if (key == "uid")
          good = string_member(v, where, "uid", out.uid);
        else if (key == "controller")
          good = flag(v, out.controller);
        else if (key == "blockOwnerDeletion")
          good = flag(v, out.block_owner_deletion);
        else
          good = any(v, 5);
        if (!good)
          return false;
      }
    }
    return true;
  }

  // A boolean read when it is one; any other valid value is ignored, as before.
  bool flag(od::value& value, bool& out) {
    out = false;
    od::json_type type;
    if (!ok(value.type().get(type)))
      return false;
    if (type != od::json_type::boolean)
      return any(value, 5);
    return ok(value.get_bool().get(out));
  }

  const char* base_;
  const char* end_; // the end of the text (stage 1 guarantees a closing quote before it)
  object_scan& out_;
  errc code_ = errc::invalid_json;
  std::string message_;
};

// Nothing but whitespace may follow the document.
bool at_end(od::document& doc, walker& w) {
  const char* next = nullptr;
  if (doc.current_location().get(next) == simdjson::OUT_OF_BOUNDS)
    return true;
  return w.invalid_json("trailing characters after the JSON value");
}

simdjson::error_code start(std::string_view padded, od::document& doc) {
  return thread_parser()
      .iterate(padded.data(), padded.size(), padded.size() + simdjson::SIMDJSON_PADDING)
      .get(doc);
}

} // namespace

status_result walk_object(std::string_view padded_text, object_scan& out) {
  out.clear();
  walker w(padded_text, out);
  od::document doc;
  if (!w.ok(start(padded_text, doc)))
    return w.failure();
  w.parent_ = &doc;
  od::json_type type;
  if (!w.ok(doc.type().get(type)))
    return w.failure();
  if (type != od::json_type::object)
    return make_error(errc::invalid_object,
                      std::string("a Kubernetes object must be a JSON object, found ") +
                          type_name(type));
  std::string_view token;
  if (!w.ok(doc.raw_json_token().get(token)))
    return w.failure();
  od::object root;
  if (!w.ok(doc.get_object().get(root)) || !w.object_root(root, token.data()) || !at_end(doc, w))
    return w.failure();
  out.object.end = padded_text.size();
  while (out.object.end > 0 && padded_text[out.object.end - 1] != '}')
    --out.object.end;
  return ok_v;
}

status_result walk_watch_line(std::string_view padded_line, watch_line_scan& out) {
  out.type.clear();
  out.object_is_object = false;
  out.object_found = "nothing";
  out.failed_in_object = false;
  out.object.clear();
  walker w(padded_line, out.object);
  od::document doc;
  if (!w.ok(start(padded_line, doc)))
    return w.failure();
  w.parent_ = &doc;
  od::object root;
  od::json_type root_type;
  if (!w.ok(doc.type().get(root_type)))
    return w.failure();
  if (root_type != od::json_type::object)
    return make_error(errc::invalid_object,
                      std::string("a watch event must be a JSON object, found ") +
                          type_name(root_type));
  if (!w.ok(doc.get_object().get(root)))
    return w.failure();
  bool type_seen = false;
  for (auto member : root) {
    od::field field;
    if (!w.ok(std::move(member).get(field)))
      return w.failure();
    const od::raw_json_string key = field.key();
    if (!w.check_key(field))
      return w.failure();
    od::value& value = field.value();
    if (key == "type") {
      scanned_string type;
      od::json_type t;
      if (!w.ok(value.type().get(t)))
        return w.failure();
      if (t != od::json_type::string) {
        type_seen = false; // a repeated key: the last value wins
        if (!w.any(value, 1))
          return w.failure();
        continue;
      }
      std::string_view decoded;
      if (!w.ok(value.get_string().get(decoded)))
        return w.failure();
      out.type.assign(decoded);
      type_seen = true;
    } else if (key == "object") {
      od::json_type t;
      if (!w.ok(value.type().get(t)))
        return w.failure();
      if (t != od::json_type::object) {
        out.object_is_object = false; // a repeated key: the last value wins
        out.object_found = type_name(t);
        if (!w.any(value, 1))
          return w.failure();
        continue;
      }
      const char* first = value.raw_json_token().data();
      od::object object;
      if (!w.ok(value.get_object().get(object)))
        return w.failure();
      out.object.clear();
      if (!w.object_root(object, first)) {
        out.failed_in_object = true;
        return w.failure();
      }
      // The object ends at the last '}' before the parser's next token.
      const char* next = nullptr;
      if (!w.ok(doc.current_location().get(next)))
        return w.failure();
      while (next > padded_line.data() && next[-1] != '}')
        --next;
      out.object.object.end = static_cast<std::size_t>(next - padded_line.data());
      out.object_is_object = true;
    } else if (!w.any(value, 1)) {
      return w.failure();
    }
  }
  if (!at_end(doc, w))
    return w.failure();
  if (!type_seen)
    out.type.clear();
  return ok_v;
}

std::optional<std::string> scan_field(std::string_view padded_text, std::string_view dotted_path) {
  od::document doc;
  if (start(padded_text, doc) != simdjson::SUCCESS)
    return std::nullopt;
  od::value current;
  bool at_root = true;
  while (true) {
    auto dot = dotted_path.find('.');
    std::string_view part = dotted_path.substr(0, dot);
    od::object object;
    auto e = at_root ? doc.get_object().get(object) : current.get_object().get(object);
    if (e != simdjson::SUCCESS)
      return std::nullopt;
    // find_field_unordered compares raw keys, so escaped keys in the text never match: the
    // paths field selectors and indexes use have none.
    if (object.find_field_unordered(part).get(current) != simdjson::SUCCESS)
      return std::nullopt;
    at_root = false;
    if (dot == std::string_view::npos)
      break;
    dotted_path.remove_prefix(dot + 1);
  }
  od::json_type type;
  if (current.type().get(type) != simdjson::SUCCESS)
    return std::nullopt;
  switch (type) {
  case od::json_type::string: {
    std::string_view s;
    if (current.get_string().get(s) != simdjson::SUCCESS)
      return std::nullopt;
    return std::string(s);
  }
  case od::json_type::number:
  case od::json_type::boolean: {
    std::string_view token = current.raw_json_token();
    while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                              token.back() == '\t'))
      token.remove_suffix(1);
    return std::string(token);
  }
  default:
    return std::nullopt;
  }
}

} // namespace kinformer::KINFORMER_SCAN_KERNEL
