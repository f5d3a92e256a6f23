#pragma once
// Everything an object_scan found, as one comparable string: for tests and fuzz targets that
// check that two scans of a text agree.

#include "protocol/object_scan.hpp"

#include <string>
#include <string_view>

namespace kinformer::testing {

// A string's value and where it was found (which of two equal repeated values, say).
inline void describe_string(std::string& out, std::string_view text, const scanned_string& s) {
  if (!s.present) {
    out += "-|";
    return;
  }
  out += s.escaped ? "e@" : "p@";
  out += std::to_string(s.begin) + "+" + std::to_string(s.size) + ":";
  out += s.escaped ? std::string_view(s.unescaped) : text.substr(s.begin, s.size);
  out += '|';
}

inline void describe_range(std::string& out, const scanned_range& r) {
  out += r.present ? std::to_string(r.begin) + ".." + std::to_string(r.end) : "-";
  out += '|';
}

inline std::string describe_scan(std::string_view text, const object_scan& scan) {
  std::string out;
  for (const auto* s : {&scan.kind, &scan.api_version, &scan.namespace_, &scan.name, &scan.uid,
                        &scan.resource_version, &scan.deletion_timestamp})
    describe_string(out, text, *s);
  out += std::to_string(scan.generation) + '|';
  for (const auto* map : {&scan.labels, &scan.annotations}) {
    for (const auto& [key, value] : *map) {
      describe_string(out, text, key);
      describe_string(out, text, value);
    }
    out += '#';
  }
  for (const auto& ref : scan.owner_references) {
    for (const auto* s : {&ref.api_version, &ref.kind, &ref.name, &ref.uid})
      describe_string(out, text, *s);
    out += ref.controller ? 'c' : '-';
    out += ref.block_owner_deletion ? 'b' : '-';
  }
  out += '#';
  describe_range(out, scan.object);
  describe_range(out, scan.metadata);
  describe_range(out, scan.managed_fields);
  out += std::to_string(scan.managed_fields_members) + '|';
  out += scan.has_members ? 'm' : '-';
  out += scan.type_members ? 't' : '-';
  out += std::to_string(scan.escaped_bytes);
  return out;
}

inline std::string describe_watch_line(std::string_view line, const watch_line_scan& scan) {
  return scan.type + "|" + (scan.object_is_object ? "object" : "not:" + scan.object_found) +
         (scan.failed_in_object ? "|failed in object|" : "|") + describe_scan(line, scan.object);
}

// Runs `fast` and `walk` (a scan with its fast path, and the same without it) on `text` and says
// how they differ; "" when they agree.
template <class Scan, class Describe>
std::string scans_differ(std::string_view text, status_result (*fast)(std::string_view, Scan&),
                         status_result (*walk)(std::string_view, Scan&), Describe describe) {
  std::string fast_buffer, walk_buffer;
  Scan fast_scan, walk_scan;
  auto fast_result = fast(padded_copy(fast_buffer, text), fast_scan);
  auto walk_result = walk(padded_copy(walk_buffer, text), walk_scan);
  if (fast_result.ok() != walk_result.ok())
    return "the fast path and the walk disagree on validity";
  if (!fast_result.ok() && fast_result.err().describe() != walk_result.err().describe())
    return "the fast path fails with " + fast_result.err().describe() + ", the walk with " +
           walk_result.err().describe();
  // A failed fast path is walked again, so even what a failed scan recorded must agree.
  const std::string a = describe(text, fast_scan), b = describe(text, walk_scan);
  return a == b ? std::string() : "the fast path reads " + a + ", the walk " + b;
}

// scan_object() against scan_object_walking(); "" when they agree.
inline std::string object_scans_differ(std::string_view text) {
  return scans_differ<object_scan>(text, scan_object, scan_object_walking, describe_scan);
}

// scan_watch_line() against scan_watch_line_walking(); "" when they agree.
inline std::string watch_line_scans_differ(std::string_view line) {
  return scans_differ<watch_line_scan>(line, scan_watch_line, scan_watch_line_walking,
                                       describe_watch_line);
}

} // namespace kinformer::testing
