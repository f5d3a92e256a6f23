#include "app/apiserver/list_query.hpp"

#include "app/apiserver/api_status.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace kinformer::apiserver {
namespace {

// 422 `ListOptions.meta.k8s.io "" is invalid: <field>: Forbidden: <detail>`
status forbidden(std::string_view field, std::string_view detail) {
  return make_failure(422, "Invalid",
                      "ListOptions.meta.k8s.io \"\" is invalid: " + std::string(field) +
                          ": Forbidden: " + std::string(detail));
}

// 422 `... resourceVersionMatch: Unsupported value: "X": supported values: ...`
status unsupported_match(std::string_view value, std::string_view supported) {
  return make_failure(422, "Invalid",
                      "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "
                      "Unsupported value: \"" +
                          std::string(value) + "\": supported values: " + std::string(supported));
}

// Go's strconv error for `text` read as an integer: the wording the real server answers with.
std::string go_parse_error(std::string_view function, std::string_view text, std::errc ec) {
  return "strconv." + std::string(function) + ": parsing \"" + std::string(text) +
         "\": " + (ec == std::errc::result_out_of_range ? "value out of range" : "invalid syntax");
}

// limit: an integer; zero or negative asks for no paging (the real server's 200 for limit=-1).
std::variant<std::size_t, status> parse_limit(const request_target& target) {
  auto text = target.param("limit").value_or("");
  if (text.empty())
    return std::size_t{0};
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc() && end != text.data() + text.size())
    ec = std::errc::invalid_argument;
  if (ec != std::errc())
    return bad_request(go_parse_error("ParseInt", text, ec));
  return static_cast<std::size_t>(std::max<std::int64_t>(n, 0));
}

// A resourceVersion that is not an unsigned integer: the real server's list answers 400, its
// watch 500 (the storage layer's error, passed on as it is).
std::optional<status> check_version_syntax(const list_query& q) {
  const auto& rv = q.resource_version;
  if (rv.empty())
    return std::nullopt;
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), n);
  if (ec == std::errc() && end == rv.data() + rv.size())
    return std::nullopt;
  if (ec == std::errc())
    ec = std::errc::invalid_argument;
  const std::string invalid =
      "resourceVersion: Invalid value: \"" + rv + "\": " + go_parse_error("ParseUint", rv, ec);
  if (q.watch)
    return make_failure(500, "", invalid);
  return bad_request("invalid resource version: " + invalid);
}

// The checks of ValidateListOptions for a list.
std::optional<status> check_list(const list_query& q, std::string_view match_text) {
  if (q.match != resource_version_match::unset || !match_text.empty()) {
    if (q.resource_version.empty())
      return forbidden("resourceVersionMatch",
                       "resourceVersionMatch is forbidden unless resourceVersion is provided");
    if (!q.continue_token.empty())
      return forbidden("resourceVersionMatch",
                       "resourceVersionMatch is forbidden when continue is provided");
    if (q.match == resource_version_match::unset)
      return unsupported_match(match_text, "\"Exact\", \"NotOlderThan\", \"\"");
    if (q.match == resource_version_match::exact && q.resource_version == "0")
      return forbidden("resourceVersionMatch",
                       "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
  }
  if (q.send_initial_events)
    return forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list");
  return std::nullopt;
}

// The checks of validateWatchOptions (the WatchList feature on, as the simulator serves it).
std::optional<status> check_watch(const list_query& q, std::string_view match_text) {
  if (q.send_initial_events) {
    if (q.match != resource_version_match::not_older_than)
      return forbidden("resourceVersionMatch",
                       "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
  }
  if (!match_text.empty()) {
    if (!q.send_initial_events)
      return forbidden("resourceVersionMatch",
                       "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                       "provided");
    if (q.match != resource_version_match::not_older_than)
      return unsupported_match(match_text, "\"NotOlderThan\"");
    if (!q.continue_token.empty())
      return forbidden("resourceVersionMatch",
                       "resourceVersionMatch is forbidden when continue is provided");
  }
  return std::nullopt;
}

} // namespace

std::variant<list_query, status> parse_list_query(const request_target& target, bool watch_path) {
  list_query q;
  if (auto text = target.param("labelSelector")) {
    auto parsed = label_selector::parse(*text);
    if (!parsed)
      return bad_request("unable to parse requirement: " + parsed.err().message);
    q.labels = std::move(parsed).value();
  }
  if (auto text = target.param("fieldSelector")) {
    auto parsed = field_selector::parse(*text);
    if (!parsed)
      return bad_request("invalid field selector: " + parsed.err().message);
    q.fields = std::move(parsed).value();
  }
  auto watch = target.flag("watch");
  if (!watch)
    return bad_request(watch.err().message);
  q.watch = watch_path || *watch;
  auto bookmarks = target.flag("allowWatchBookmarks");
  if (!bookmarks)
    return bad_request(bookmarks.err().message);
  q.allow_bookmarks = *bookmarks;
  if (target.param("sendInitialEvents")) {
    auto initial = target.flag("sendInitialEvents");
    if (!initial)
      return bad_request(initial.err().message);
    q.send_initial_events = *initial;
  }
  auto limit = parse_limit(target);
  if (auto* failure = std::get_if<status>(&limit))
    return *failure;
  q.limit = std::get<std::size_t>(limit);
  auto timeout = target.integer("timeoutSeconds");
  if (!timeout)
    return bad_request(timeout.err().message);
  q.timeout_seconds = *timeout;
  q.continue_token = std::string(target.param("continue").value_or(""));
  q.resource_version = std::string(target.param("resourceVersion").value_or(""));
  auto match_text = target.param("resourceVersionMatch").value_or("");
  if (match_text == "NotOlderThan")
    q.match = resource_version_match::not_older_than;
  else if (match_text == "Exact")
    q.match = resource_version_match::exact;
  auto failure = q.watch ? check_watch(q, match_text) : check_list(q, match_text);
  if (!failure)
    failure = check_version_syntax(q);
  if (failure)
    return *failure;
  return q;
}

} // namespace kinformer::apiserver
