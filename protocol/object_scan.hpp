#pragma once
// Validates all of an object's JSON text and finds the metadata the store, indexes and selectors
// need, as byte ranges into the text: no tree is built. simdjson's first stage finds the text's
// structural positions and a grammar check over them validates it, then only the metadata is
// read, over the same positions; texts the fast path leaves in doubt (invalid, large, deep, a
// long number or a large exponent, a surrogate escape) are walked whole On-Demand, every value
// checked.
//
// The text must be readable SIMDJSON_PADDING (64) bytes past its end: simdjson reads ahead in
// 64-byte blocks. Whatever those bytes hold does not matter. simdjson stays inside
// object_scan.cpp; this header is light.

#include "protocol/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

// The padding object_scan needs past the end of a text (simdjson's SIMDJSON_PADDING).
inline constexpr std::size_t scan_padding = 64;

// Copies `text` into `buffer` followed by scan_padding spaces and returns the copy, padding left
// out: for scanning bytes that may end anywhere. Each caller keeps its own buffer, so a text
// that lies in one caller's buffer is never copied onto itself by another.
std::string_view padded_copy(std::string& buffer, std::string_view text);

// A string value found in the text: its content between the quotes. `unescaped` holds the
// decoded value when the content has escapes (then the bytes in the text are not the value).
struct scanned_string {
  std::size_t begin = 0; // offset of the first byte after the opening quote
  std::size_t size = 0;  // bytes up to the closing quote
  bool present = false;
  bool escaped = false;
  std::string unescaped; // set only when escaped
};

// A value's whole text, from its first byte to one past its last.
struct scanned_range {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool present = false;
};

struct scanned_owner_reference {
  scanned_string api_version, kind, name, uid;
  bool controller = false;
  bool block_owner_deletion = false;
};

struct object_scan {
  scanned_string kind, api_version;
  scanned_string namespace_, name, uid, resource_version, deletion_timestamp;
  std::int64_t generation = 0;
  std::vector<std::pair<scanned_string, scanned_string>> labels;      // in text order
  std::vector<std::pair<scanned_string, scanned_string>> annotations; // in text order
  std::vector<scanned_owner_reference> owner_references;
  scanned_range object;   // the object's own text (for a watch event: inside the line)
  scanned_range metadata; // the value of "metadata", when it is an object
  // The bytes that remove metadata.managedFields from the text: the member and one comma next to
  // it, so that what is left is the same JSON without it. `managed_fields_members` counts the
  // members so named (more than one: the text cannot simply be cut).
  scanned_range managed_fields;
  int managed_fields_members = 0;
  bool has_members = false;      // the object has at least one member
  bool type_members = false;     // "kind" or "apiVersion" is a member (even if null or "")
  std::size_t escaped_bytes = 0; // total size of every `unescaped` above

  void clear(); // keeps the vectors' capacity: scans reuse one object_scan per thread
};

// Validates `padded_text` as exactly one JSON object (nothing but whitespace around it) and
// fills `out`. errc::invalid_json for text that is not JSON; errc::invalid_object when a
// metadata field has the wrong type ("metadata.name must be a string").
status_result scan_object(std::string_view padded_text, object_scan& out);

// scan_object() without its fast path (simdjson's first stage and a grammar check validate,
// then only the metadata is read): every value walked On-Demand. The same result, slower; for
// tests that compare the two.
status_result scan_object_walking(std::string_view padded_text, object_scan& out);

// A watch event line {"type": "...", "object": {...}}, validated whole.
struct watch_line_scan {
  std::string type; // as sent; checked by the caller
  bool object_is_object = false;
  std::string object_found;      // what "object" was when it is not a JSON object ("nothing", ...)
  bool failed_in_object = false; // the scan failed inside "object" (the error is the object's)
  object_scan object;            // ranges are offsets into the line
};

status_result scan_watch_line(std::string_view padded_line, watch_line_scan& out);

// scan_watch_line() without its fast path, as scan_object_walking() is scan_object()'s.
status_result scan_watch_line_walking(std::string_view padded_line, watch_line_scan& out);

// Looks up a dotted path ("spec.nodeName") in `padded_text` the way field selectors compare
// values: a string's decoded value, a number's or boolean's JSON text; nullopt when absent, null,
// an object or an array.
std::optional<std::string> scan_field(std::string_view padded_text, std::string_view dotted_path);

} // namespace kinformer
