#pragma once
// The ListOptions (metav1.ListOptions) of a list or watch request, read from its query string and
// checked as the API server checks them (apimachinery's ValidateListOptions): a malformed value
// is 400 BadRequest, an inconsistent combination 422 Invalid, worded as the API server words it.
// The simulator and the read API both read their requests with it.

#include "app/apiserver/request_path.hpp"
#include "protocol/decode.hpp"
#include "protocol/selector.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace kinformer::apiserver {

enum class resource_version_match { unset, not_older_than, exact };

struct list_query {
  bool watch = false;
  label_selector labels;
  field_selector fields;
  std::string resource_version; // "" = most recent, "0" = any, else a number
  resource_version_match match = resource_version_match::unset;
  std::size_t limit = 0; // 0 = none
  std::string continue_token;
  std::optional<std::int64_t> timeout_seconds; // watch; absent or 0: the server's default
  bool allow_bookmarks = false;
  // KEP-3157 streaming lists: true = the current state as ADDED events, then a BOOKMARK.
  std::optional<bool> send_initial_events;
};

// `watch_path`: the path already says watch (the deprecated /watch/ prefix); ?watch=true also
// makes it one. Returns the query, or the Status to answer instead.
std::variant<list_query, status> parse_list_query(const request_target& target, bool watch_path);

} // namespace kinformer::apiserver
