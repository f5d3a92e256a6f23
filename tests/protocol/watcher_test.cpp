#include "protocol/watcher.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace kinformer;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace Catch {
template <>
struct StringMaker<watcher_action> {
  static std::string convert(const watcher_action& action) { return describe(action); }
};
template <>
struct StringMaker<watcher_state> {
  static std::string convert(const watcher_state& state) {
    const auto& c = context_of(state);
    return std::string(state_name(state)) + "{rv=\"" + c.last_resource_version + "\"" +
           (c.resource_version_unavailable ? " unavailable" : "") +
           (c.server_paginates ? " paginates" : "") + (c.streaming ? " streaming" : "") +
           (c.synced ? " synced" : "") + " last_session=" + std::to_string(c.last_session) + "}";
  }
};
} // namespace Catch

namespace {

// With the random source fixed at 0.5: timeoutSeconds = 300 + floor(0.5 * 301) = 450, and the
// first backoff delay is 1.5 times client-go's first step of 0.8 s (drawn from [d, 2d)).
constexpr auto timeout = 450s;
constexpr auto first_delay = 1200ms;
const watch_clock::time_point t0{};

status make_status(int code, std::string reason, std::vector<std::string> causes = {},
                   std::optional<int> retry_after_seconds = {}) {
  status s;
  s.code = code;
  s.status_ = "Failure";
  s.reason = std::move(reason);
  s.cause_types = std::move(causes);
  s.retry_after_seconds = retry_after_seconds;
  return s;
}
const status expired = make_status(410, "Expired");
const status gone = make_status(410, "Gone");
const status too_large = make_status(504, "Timeout", {"ResourceVersionTooLarge"});
const status internal = make_status(500, "InternalError");

failure http(int code, std::optional<status> body = {}, std::optional<milliseconds> retry = {}) {
  failure f;
  f.http_code = code;
  f.server_status = std::move(body);
  f.retry_after = retry;
  return f;
}
failure refused() {
  failure f;
  f.connection_refused = true;
  return f;
}
failure reset_by_peer() {
  failure f;
  f.connection_reset = true;
  f.message = "connection reset by peer";
  return f;
}

// What the driver reports for a response or stream that did not decode.
failure malformed() {
  failure f;
  f.malformed = true;
  f.message = "invalid JSON";
  return f;
}

start_watch watch_at(session_id session, std::string rv, restart_reason reason) {
  start_watch w;
  w.session = session;
  w.resource_version = std::move(rv);
  w.allow_bookmarks = true;
  w.timeout = timeout;
  w.stall_timeout = 180s;
  w.reason = reason;
  return w;
}
start_watch streaming_watch(session_id session, restart_reason reason) {
  start_watch w = watch_at(session, "", reason);
  w.send_initial_events = true;
  w.resource_version_match = "NotOlderThan";
  return w;
}

watch_event_received event(session_id session, event_type type, std::string rv) {
  return {session, type, std::move(rv), false, std::nullopt};
}
watch_event_received error_event(session_id session, status s) {
  return {session, event_type::error, "", false, std::move(s)};
}
watch_event_received end_bookmark(session_id session, std::string rv) {
  return {session, event_type::bookmark, std::move(rv), true, std::nullopt};
}
watch_closed closed(session_id session, watch_end how, failure cause = {},
                    milliseconds lived = 400s, std::size_t events = 10) {
  return {session, how, std::move(cause), lived, events};
}

// Contexts used across the table.
watcher_context fresh(session_id last_session = 1) {
  watcher_context c;
  c.last_session = last_session;
  return c;
}
watcher_context synced_at(std::string rv, session_id last_session) {
  watcher_context c;
  c.last_resource_version = std::move(rv);
  c.synced = true;
  c.last_session = last_session;
  return c;
}
template <class F>
watcher_context adjusted(watcher_context c, F change) {
  change(c);
  return c;
}

struct row {
  std::string name;
  watcher_state from;
  watcher_input input;
  watcher_state to;
  std::vector<watcher_action> actions;
  watcher_config config = {};
};

void check_rows(const std::vector<row>& rows) {
  for (const auto& r : rows) {
    INFO("row: " << r.name);
    backoff retry({}, [] { return 0.5; });
    auto result = step(r.from, r.input, r.config, retry, t0);
    CHECK(result.next == r.to);
    CHECK(result.actions == r.actions);
  }
}

watcher_config streaming_config() {
  watcher_config config;
  config.streaming_list = true;
  return config;
}

const auto after_list = synced_at("100", 2); // listed at 100, watch session 2 open
const auto unavailable = [](watcher_context& c) { c.resource_version_unavailable = true; };
const auto paginating = [](watcher_context& c) { c.server_paginates = true; };
const auto streaming = [](watcher_context& c) { c.streaming = true; };
const auto retried = [](int n) { return [n](watcher_context& c) { c.request_retries = n; }; };

// A listing state waiting to fetch `continue_token` (or the first page) again.
listing retrying(watcher_context ctx, session_id session, std::string continue_token,
                 bool replace_begun) {
  listing l{std::move(ctx), session, "0", 500, replace_begun, restart_reason::initial};
  l.continue_token = std::move(continue_token);
  l.retry_pending = true;
  return l;
}
listing paging_at(watcher_context ctx, session_id session, std::string continue_token) {
  listing l{std::move(ctx), session, "0", 500, true, restart_reason::initial};
  l.continue_token = std::move(continue_token);
  return l;
}

} // namespace

TEST_CASE("start: the first list reads the watch cache, paged") {
  check_rows({
      {"start lists at RV 0 with limit",
       idle{},
       start_requested{},
       listing{fresh(1), 1, "0", 500, false, restart_reason::initial},
       {start_list{1, "0", 500, restart_reason::initial}}},
      {"a page size of 0 turns paging off",
       idle{},
       start_requested{},
       listing{fresh(1), 1, "0", std::nullopt, false, restart_reason::initial},
       {start_list{1, "0", std::nullopt, restart_reason::initial}},
       [] {
         watcher_config c;
         c.page_size = 0;
         return c;
       }()},
      {"streaming lists start with a sendInitialEvents watch at RV \"\"",
       idle{},
       start_requested{},
       streaming_list{adjusted(fresh(1), streaming), 1, false, restart_reason::initial},
       {streaming_watch(1, restart_reason::initial)},
       streaming_config()},
      {"start is ignored once running",
       watching{after_list, 2},
       start_requested{},
       watching{after_list, 2},
       {}},
  });
}

TEST_CASE("listing: pages build one replace, the last page completes it") {
  const listing first{fresh(1), 1, "0", 500, false, restart_reason::initial};
  const listing paging = paging_at(adjusted(fresh(1), paginating), 1, "tok-1");
  check_rows({
      {"a single page: replace, synced, watch from its RV",
       first,
       list_page_received{1, "100", "", 3},
       watching{after_list, 2},
       {begin_replace{1}, add_to_replace{1, 3}, complete_replace{1, "100"}, mark_synced{},
        watch_at(2, "100", restart_reason::list_complete)}},
      {"a continue token: fetch the next page, remember that the server pages",
       first,
       list_page_received{1, "100", "tok-1", 500},
       paging,
       {begin_replace{1}, add_to_replace{1, 500}, fetch_next_page{1, "tok-1", 500}}},
      {"a middle page adds without beginning again",
       paging,
       list_page_received{1, "100", "tok-2", 500},
       paging_at(adjusted(fresh(1), paginating), 1, "tok-2"),
       {add_to_replace{1, 500}, fetch_next_page{1, "tok-2", 500}}},
      {"the last page completes the replace",
       paging,
       list_page_received{1, "100", "", 20},
       watching{adjusted(after_list, paginating), 2},
       {add_to_replace{1, 20}, complete_replace{1, "100"}, mark_synced{},
        watch_at(2, "100", restart_reason::list_complete)}},
      {"a relist after sync does not mark synced again",
       listing{synced_at("100", 3), 3, "100", std::nullopt, false, restart_reason::watch_expired},
       list_page_received{3, "180", "", 7},
       watching{synced_at("180", 4), 4},
       {begin_replace{3}, add_to_replace{3, 7}, complete_replace{3, "180"},
        watch_at(4, "180", restart_reason::list_complete)}},
      {"a final page without resourceVersion is not watchable: abort and back off",
       first,
       list_page_received{1, "", "", 3},
       backing_off{fresh(2), 2, backing_off::then::relist, restart_reason::server_error},
       {begin_replace{1}, add_to_replace{1, 3}, abort_replace{1},
        schedule_retry{2, first_delay, restart_reason::server_error}}},
      {"a page from a stale session is ignored",
       first,
       list_page_received{7, "100", "", 3},
       first,
       {}},
  });
}

TEST_CASE("listing: Expired and TooLarge relist at once with a consistent read") {
  const listing relist_at_100{synced_at("100", 3), 3,     "100",
                              std::nullopt,        false, restart_reason::watch_expired};
  const auto consistent = adjusted(synced_at("100", 4), unavailable);
  check_rows({
      {"HTTP 410 on a list at an RV",
       relist_at_100,
       list_failed{3, http(410)},
       listing{consistent, 4, "", 500, false, restart_reason::list_expired},
       {start_list{4, "", 500, restart_reason::list_expired}}},
      {"a 410 Status body counts the same",
       relist_at_100,
       list_failed{3, http(410, gone)},
       listing{consistent, 4, "", 500, false, restart_reason::list_expired},
       {start_list{4, "", 500, restart_reason::list_expired}}},
      {"504 ResourceVersionTooLarge from a lagging server is treated as Expired",
       relist_at_100,
       list_failed{3, http(504, too_large)},
       listing{consistent, 4, "", 500, false, restart_reason::resource_version_too_large},
       {start_list{4, "", 500, restart_reason::resource_version_too_large}}},
      {"a plain 504 is a server error, not TooLarge",
       relist_at_100,
       list_failed{3, http(504, make_status(504, "Timeout"))},
       backing_off{synced_at("100", 4), 4, backing_off::then::relist, restart_reason::server_error},
       {schedule_retry{4, first_delay, restart_reason::server_error}}},
      {"continue token expired mid-paging: abort, one unpaged list at the same RV (the pager)",
       paging_at(fresh(1), 1, "tok-3"),
       list_failed{1, http(410, expired)},
       listing{fresh(2), 2, "0", std::nullopt, false, restart_reason::continue_expired},
       {abort_replace{1}, start_list{2, "0", std::nullopt, restart_reason::continue_expired}}},
      {"a consistent read answered with 410 backs off instead of spinning",
       listing{consistent, 4, "", 500, false, restart_reason::list_expired},
       list_failed{4, http(410)},
       backing_off{adjusted(synced_at("100", 5), unavailable), 5, backing_off::then::relist,
                   restart_reason::server_error},
       {schedule_retry{5, first_delay, restart_reason::server_error}}},
  });
}

TEST_CASE("listing: other failures back off, then relist") {
  const listing first{fresh(1), 1, "0", 500, false, restart_reason::initial};
  const auto waiting = [](restart_reason reason) {
    return backing_off{fresh(2), 2, backing_off::then::relist, reason};
  };
  check_rows({
      {"500",
       first,
       list_failed{1, http(500, internal)},
       waiting(restart_reason::server_error),
       {schedule_retry{2, first_delay, restart_reason::server_error}}},
      {"429 without Retry-After backs off",
       first,
       list_failed{1, http(429)},
       waiting(restart_reason::throttled),
       {schedule_retry{2, first_delay, restart_reason::throttled}}},
      {"connection refused",
       first,
       list_failed{1, refused()},
       waiting(restart_reason::connection_refused),
       {schedule_retry{2, first_delay, restart_reason::connection_refused}}},
      {"a reset after ten retries of the request backs off",
       listing{adjusted(fresh(1), retried(10)), 1, "0", 500, false, restart_reason::initial},
       list_failed{1, reset_by_peer()},
       waiting(restart_reason::io_error),
       {schedule_retry{2, first_delay, restart_reason::io_error}}},
      {"a failure after a page aborts the replace",
       listing{fresh(1), 1, "0", 500, true, restart_reason::initial},
       list_failed{1, http(500)},
       waiting(restart_reason::server_error),
       {abort_replace{1}, schedule_retry{2, first_delay, restart_reason::server_error}}},
      {"a page that does not decode backs off, counted as malformed",
       listing{fresh(1), 1, "0", 500, true, restart_reason::initial},
       list_failed{1, malformed()},
       waiting(restart_reason::malformed),
       {abort_replace{1}, schedule_retry{2, first_delay, restart_reason::malformed}}},
  });
}

TEST_CASE("listing: a page is retried as a request, without a relist (client-go's rest retry)") {
  const listing first{fresh(1), 1, "0", 500, false, restart_reason::initial};
  const listing third_page = paging_at(fresh(1), 1, "tok-2");
  check_rows({
      {"429 with Retry-After on the first page: the same request after the delay",
       first,
       list_failed{1, http(429, std::nullopt, 5s)},
       retrying(adjusted(fresh(1), retried(1)), 1, "", false),
       {schedule_retry{1, 5s, restart_reason::throttled}}},
      {"503 with Retry-After on a later page: that page again, the snapshot kept",
       third_page,
       list_failed{1, http(503, std::nullopt, 1s)},
       retrying(adjusted(fresh(1), retried(1)), 1, "tok-2", true),
       {schedule_retry{1, 1s, restart_reason::server_error}}},
      {"a connection reset mid-page: that page again at once",
       third_page,
       list_failed{1, reset_by_peer()},
       retrying(adjusted(fresh(1), retried(1)), 1, "tok-2", true),
       {schedule_retry{1, 0ms, restart_reason::io_error}}},
      {"the timer fetches the same continue token",
       retrying(adjusted(fresh(1), retried(1)), 1, "tok-2", true),
       timer_fired{1},
       paging_at(adjusted(fresh(1), retried(1)), 1, "tok-2"),
       {fetch_next_page{1, "tok-2", 500}}},
      {"the timer repeats the first page, marked as a retry (no new list)",
       retrying(adjusted(fresh(1), retried(1)), 1, "", false),
       timer_fired{1},
       listing{adjusted(fresh(1), retried(1)), 1, "0", 500, false, restart_reason::initial},
       {[] {
         start_list again{1, "0", 500, restart_reason::initial};
         again.retry = true;
         return again;
       }()}},
      {"a page that arrives resets the count",
       paging_at(adjusted(fresh(1), retried(3)), 1, "tok-2"),
       list_page_received{1, "100", "tok-3", 500},
       paging_at(adjusted(fresh(1), paginating), 1, "tok-3"),
       {add_to_replace{1, 500}, fetch_next_page{1, "tok-3", 500}}},
      {"the eleventh failure goes to the state machine: abort, back off, relist",
       paging_at(adjusted(fresh(1), retried(10)), 1, "tok-2"),
       list_failed{1, http(503, std::nullopt, 1s)},
       backing_off{fresh(2), 2, backing_off::then::relist, restart_reason::server_error},
       {abort_replace{1}, schedule_retry{2, first_delay, restart_reason::server_error}}},
      {"a 500 without Retry-After is not retried as a request",
       third_page,
       list_failed{1, http(500, internal)},
       backing_off{fresh(2), 2, backing_off::then::relist, restart_reason::server_error},
       {abort_replace{1}, schedule_retry{2, first_delay, restart_reason::server_error}}},
  });
}

TEST_CASE("backing off: the timer relists or re-watches") {
  check_rows({
      {"relist at the last RV has no limit (client-go turns paging off there)",
       backing_off{synced_at("100", 4), 4, backing_off::then::relist, restart_reason::server_error},
       timer_fired{4},
       listing{synced_at("100", 5), 5, "100", std::nullopt, false, restart_reason::server_error},
       {start_list{5, "100", std::nullopt, restart_reason::server_error}}},
      {"unless the server showed it pages this resource",
       backing_off{adjusted(synced_at("100", 4), paginating), 4, backing_off::then::relist,
                   restart_reason::server_error},
       timer_fired{4},
       listing{adjusted(synced_at("100", 5), paginating), 5, "100", 500, false,
               restart_reason::server_error},
       {start_list{5, "100", 500, restart_reason::server_error}}},
      {"before the first list succeeds the relist is at RV 0",
       backing_off{fresh(2), 2, backing_off::then::relist, restart_reason::io_error},
       timer_fired{2},
       listing{fresh(3), 3, "0", 500, false, restart_reason::io_error},
       {start_list{3, "0", 500, restart_reason::io_error}}},
      {"re-watch from the last RV",
       backing_off{synced_at("100", 4), 4, backing_off::then::rewatch, restart_reason::throttled},
       timer_fired{4},
       watching{synced_at("100", 5), 5},
       {watch_at(5, "100", restart_reason::throttled)}},
      {"with streaming lists, a relist is a streaming watch",
       backing_off{adjusted(fresh(2), streaming), 2, backing_off::then::relist,
                   restart_reason::throttled},
       timer_fired{2},
       streaming_list{adjusted(fresh(3), streaming), 3, false, restart_reason::throttled},
       {streaming_watch(3, restart_reason::throttled)}},
      {"a streaming relist resumes from the last synced RV (NotOlderThan)",
       backing_off{adjusted(synced_at("100", 4), streaming), 4, backing_off::then::relist,
                   restart_reason::watch_expired},
       timer_fired{4},
       streaming_list{adjusted(synced_at("100", 5), streaming), 5, false,
                      restart_reason::watch_expired},
       {[] {
         auto w = streaming_watch(5, restart_reason::watch_expired);
         w.resource_version = "100";
         return w;
       }()}},
      {"...or from \"\" once that RV is unavailable",
       backing_off{adjusted(adjusted(synced_at("100", 4), streaming), unavailable), 4,
                   backing_off::then::relist, restart_reason::resource_version_too_large},
       timer_fired{4},
       streaming_list{adjusted(adjusted(synced_at("100", 5), streaming), unavailable), 5, false,
                      restart_reason::resource_version_too_large},
       {streaming_watch(5, restart_reason::resource_version_too_large)}},
      {"a stale timer is ignored",
       backing_off{synced_at("100", 4), 4, backing_off::then::rewatch, restart_reason::throttled},
       timer_fired{3},
       backing_off{synced_at("100", 4), 4, backing_off::then::rewatch, restart_reason::throttled},
       {}},
  });
}

TEST_CASE("watching: events apply, bookmarks only move the RV") {
  const watching open{after_list, 2};
  check_rows({
      {"opened: nothing to do", open, watch_opened{2}, open, {}},
      {"ADDED",
       open,
       event(2, event_type::added, "101"),
       watching{synced_at("101", 2), 2},
       {apply_event{event_type::added, "101"}}},
      {"MODIFIED",
       open,
       event(2, event_type::modified, "102"),
       watching{synced_at("102", 2), 2},
       {apply_event{event_type::modified, "102"}}},
      {"DELETED",
       open,
       event(2, event_type::deleted, "103"),
       watching{synced_at("103", 2), 2},
       {apply_event{event_type::deleted, "103"}}},
      {"BOOKMARK",
       open,
       event(2, event_type::bookmark, "150"),
       watching{synced_at("150", 2), 2},
       {advance_resource_version{"150"}}},
      {"events from a cancelled stream are dropped",
       open,
       event(1, event_type::added, "999"),
       open,
       {}},
  });
}

TEST_CASE("watching: 410 and TooLarge relist after a backoff (a new ListAndWatch round)") {
  const watching open{after_list, 2};
  const auto relist_later = [](restart_reason reason, watcher_context ctx = synced_at("100", 3)) {
    return backing_off{std::move(ctx), 3, backing_off::then::relist, reason};
  };
  check_rows({
      {"ERROR Expired: back off, then relist at the last RV (served from the watch cache)",
       open,
       error_event(2, expired),
       relist_later(restart_reason::watch_expired),
       {stop_io{2}, schedule_retry{3, first_delay, restart_reason::watch_expired}}},
      {"ERROR Gone (older servers) is the same",
       open,
       error_event(2, gone),
       relist_later(restart_reason::watch_expired),
       {stop_io{2}, schedule_retry{3, first_delay, restart_reason::watch_expired}}},
      {"HTTP 410 on the watch request",
       open,
       closed(2, watch_end::http_error, http(410)),
       relist_later(restart_reason::watch_expired),
       {schedule_retry{3, first_delay, restart_reason::watch_expired}}},
      {"an ERROR event reported as the close is the same",
       open,
       closed(2, watch_end::error_event, http(0, expired)),
       relist_later(restart_reason::watch_expired),
       {schedule_retry{3, first_delay, restart_reason::watch_expired}}},
      {"ERROR ResourceVersionTooLarge: back off, then relist with RV \"\"",
       open,
       error_event(2, too_large),
       relist_later(restart_reason::resource_version_too_large,
                    adjusted(synced_at("100", 3), unavailable)),
       {stop_io{2}, schedule_retry{3, first_delay, restart_reason::resource_version_too_large}}},
      {"the timer then relists at the last RV",
       relist_later(restart_reason::watch_expired),
       timer_fired{3},
       listing{synced_at("100", 4), 4, "100", std::nullopt, false, restart_reason::watch_expired},
       {start_list{4, "100", std::nullopt, restart_reason::watch_expired}}},
      {"with streaming lists the relist after the backoff is a streaming watch",
       watching{adjusted(after_list, streaming), 2},
       error_event(2, expired),
       relist_later(restart_reason::watch_expired, adjusted(synced_at("100", 3), streaming)),
       {stop_io{2}, schedule_retry{3, first_delay, restart_reason::watch_expired}}},
  });
}

TEST_CASE("watching: throttling, refusals and broken streams re-watch, no relist") {
  const watching open{after_list, 2};
  const auto rewatch_later = [](restart_reason reason) {
    return backing_off{synced_at("100", 3), 3, backing_off::then::rewatch, reason};
  };
  check_rows({
      {"HTTP 429 with Retry-After: the same watch after it (a request retry)",
       open,
       closed(2, watch_end::http_error, http(429, std::nullopt, 7s)),
       backing_off{adjusted(synced_at("100", 3), retried(1)), 3, backing_off::then::rewatch,
                   restart_reason::throttled},
       {schedule_retry{3, 7s, restart_reason::throttled}}},
      {"429 Status with details.retryAfterSeconds",
       open,
       closed(2, watch_end::http_error, http(429, make_status(429, "TooManyRequests", {}, 3))),
       backing_off{adjusted(synced_at("100", 3), retried(1)), 3, backing_off::then::rewatch,
                   restart_reason::throttled},
       {schedule_retry{3, 3s, restart_reason::throttled}}},
      {"HTTP 503 with Retry-After: re-watch after it, no relist",
       open,
       closed(2, watch_end::http_error, http(503, std::nullopt, 1s)),
       backing_off{adjusted(synced_at("100", 3), retried(1)), 3, backing_off::then::rewatch,
                   restart_reason::server_error},
       {schedule_retry{3, 1s, restart_reason::server_error}}},
      {"the eleventh 503 with Retry-After: back off, then relist",
       watching{adjusted(after_list, retried(10)), 2},
       closed(2, watch_end::http_error, http(503, std::nullopt, 1s)),
       backing_off{synced_at("100", 3), 3, backing_off::then::relist, restart_reason::server_error},
       {schedule_retry{3, first_delay, restart_reason::server_error}}},
      {"HTTP 429 without Retry-After: back off, re-watch",
       open,
       closed(2, watch_end::http_error, http(429)),
       rewatch_later(restart_reason::throttled),
       {schedule_retry{3, first_delay, restart_reason::throttled}}},
      {"ERROR TooManyRequests asking for a day waits at most an hour",
       open,
       error_event(2, make_status(429, "TooManyRequests", {}, 86400)),
       rewatch_later(restart_reason::throttled),
       {stop_io{2}, schedule_retry{3, 1h, restart_reason::throttled}}},
      {"ERROR TooManyRequests mid-stream",
       open,
       error_event(2, make_status(429, "TooManyRequests")),
       rewatch_later(restart_reason::throttled),
       {stop_io{2}, schedule_retry{3, first_delay, restart_reason::throttled}}},
      {"connection refused",
       open,
       closed(2, watch_end::io_error, refused(), 0ms, 0),
       rewatch_later(restart_reason::connection_refused),
       {schedule_retry{3, first_delay, restart_reason::connection_refused}}},
      {"reset mid-stream after events: re-watch at once, as client-go",
       open,
       closed(2, watch_end::io_error, reset_by_peer()),
       watching{synced_at("100", 3), 3},
       {watch_at(3, "100", restart_reason::io_error)}},
      {"reset before any event: back off first",
       open,
       closed(2, watch_end::io_error, reset_by_peer(), 30s, 0),
       rewatch_later(restart_reason::io_error),
       {schedule_retry{3, first_delay, restart_reason::io_error}}},
      {"a line that does not decode after events: re-watch from the last good version",
       open,
       closed(2, watch_end::io_error, malformed()),
       watching{synced_at("100", 3), 3},
       {watch_at(3, "100", restart_reason::malformed)}},
      {"a line that does not decode before any event: back off, re-watch",
       open,
       closed(2, watch_end::io_error, malformed(), 30s, 0),
       rewatch_later(restart_reason::malformed),
       {schedule_retry{3, first_delay, restart_reason::malformed}}},
  });
}

TEST_CASE("watching: clean ends, short watches, stalls and server errors") {
  const watching open{after_list, 2};
  check_rows({
      {"a clean close re-watches from the last RV at once",
       open,
       closed(2, watch_end::clean, {}, 450s, 10),
       watching{synced_at("100", 3), 3},
       {watch_at(3, "100", restart_reason::watch_ended)}},
      {"closing within 1 s with no events is an error: back off, then relist (client-go)",
       open,
       closed(2, watch_end::clean, {}, 200ms, 0),
       backing_off{synced_at("100", 3), 3, backing_off::then::relist, restart_reason::short_watch},
       {schedule_retry{3, first_delay, restart_reason::short_watch}}},
      {"a fast close that delivered an event is fine",
       open,
       closed(2, watch_end::clean, {}, 200ms, 1),
       watching{synced_at("100", 3), 3},
       {watch_at(3, "100", restart_reason::watch_ended)}},
      {"a slow close with no events is fine",
       open,
       closed(2, watch_end::clean, {}, 5s, 0),
       watching{synced_at("100", 3), 3},
       {watch_at(3, "100", restart_reason::watch_ended)}},
      {"a stall restarts the watch",
       open,
       closed(2, watch_end::stalled, {}, 190s, 4),
       watching{synced_at("100", 3), 3},
       {watch_at(3, "100", restart_reason::stalled)}},
      {"ERROR InternalError: back off, then relist (client-go)",
       open,
       error_event(2, internal),
       backing_off{synced_at("100", 3), 3, backing_off::then::relist, restart_reason::server_error},
       {stop_io{2}, schedule_retry{3, first_delay, restart_reason::server_error}}},
      {"HTTP 403 on the watch: back off, then relist",
       open,
       closed(2, watch_end::http_error, http(403)),
       backing_off{synced_at("100", 3), 3, backing_off::then::relist, restart_reason::server_error},
       {schedule_retry{3, first_delay, restart_reason::server_error}}},
      {"HTTP 503 without Retry-After: back off, then relist (client-go)",
       open,
       closed(2, watch_end::http_error, http(503)),
       backing_off{synced_at("100", 3), 3, backing_off::then::relist, restart_reason::server_error},
       {schedule_retry{3, first_delay, restart_reason::server_error}}},
      {"a close of a superseded stream is ignored", open, closed(1, watch_end::clean), open, {}},
  });
}

TEST_CASE("streaming list: initial events are the snapshot, the end bookmark completes it") {
  const auto ctx = adjusted(fresh(1), streaming);
  const streaming_list opened{ctx, 1, false, restart_reason::initial};
  const streaming_list collecting{ctx, 1, true, restart_reason::initial};
  const auto synced_ctx = adjusted(synced_at("200", 1), streaming);
  check_rows({
      {"the first ADDED begins the replace; the RV does not move",
       opened,
       event(1, event_type::added, "57"),
       collecting,
       {begin_replace{1}, add_to_replace{1, 1}},
       streaming_config()},
      {"later ADDED events join it",
       collecting,
       event(1, event_type::added, "12"),
       collecting,
       {add_to_replace{1, 1}},
       streaming_config()},
      {"a bookmark without the annotation is not the end",
       collecting,
       event(1, event_type::bookmark, "150"),
       collecting,
       {},
       streaming_config()},
      {"the initial-events-end bookmark completes; the stream carries on as the watch",
       collecting,
       end_bookmark(1, "200"),
       watching{synced_ctx, 1},
       {complete_replace{1, "200"}, mark_synced{}},
       streaming_config()},
      {"an empty collection ends at once",
       opened,
       end_bookmark(1, "200"),
       watching{synced_ctx, 1},
       {begin_replace{1}, complete_replace{1, "200"}, mark_synced{}},
       streaming_config()},
  });
}

TEST_CASE("streaming list: refused servers fall back to paged LIST for the round") {
  const auto ctx = adjusted(fresh(1), streaming);
  const streaming_list opened{ctx, 1, false, restart_reason::initial};
  const streaming_list collecting{ctx, 1, true, restart_reason::initial};
  // Still streaming: the next round tries a streaming list again, as client-go does.
  const listing paged{adjusted(fresh(2), streaming),    2, "0", 500, false,
                      restart_reason::streaming_refused};
  check_rows({
      {"HTTP 422 on the watch",
       opened,
       closed(1, watch_end::http_error, http(422)),
       paged,
       {start_list{2, "0", 500, restart_reason::streaming_refused}},
       streaming_config()},
      {"HTTP 400 after some events",
       collecting,
       closed(1, watch_end::http_error, http(400)),
       paged,
       {abort_replace{1}, start_list{2, "0", 500, restart_reason::streaming_refused}},
       streaming_config()},
      {"closed without the end bookmark",
       collecting,
       closed(1, watch_end::clean),
       paged,
       {abort_replace{1}, start_list{2, "0", 500, restart_reason::streaming_refused}},
       streaming_config()},
      {"a MODIFIED before the end: the server ignored sendInitialEvents",
       collecting,
       event(1, event_type::modified, "7"),
       paged,
       {stop_io{1}, abort_replace{1}, start_list{2, "0", 500, restart_reason::streaming_refused}},
       streaming_config()},
  });
}

TEST_CASE("streaming list: transient failures retry streaming after a backoff") {
  const auto ctx = adjusted(fresh(1), streaming);
  const streaming_list collecting{ctx, 1, true, restart_reason::initial};
  const auto later = [&](restart_reason reason) {
    return backing_off{adjusted(fresh(2), streaming), 2, backing_off::then::relist, reason};
  };
  check_rows({
      {"429",
       streaming_list{ctx, 1, false, restart_reason::initial},
       closed(1, watch_end::http_error, http(429, std::nullopt, 2s)),
       later(restart_reason::throttled),
       {schedule_retry{2, 2s, restart_reason::throttled}},
       streaming_config()},
      {"reset mid-snapshot",
       collecting,
       closed(1, watch_end::io_error, reset_by_peer()),
       later(restart_reason::io_error),
       {abort_replace{1}, schedule_retry{2, first_delay, restart_reason::io_error}},
       streaming_config()},
      {"stalled mid-snapshot",
       collecting,
       closed(1, watch_end::stalled),
       later(restart_reason::stalled),
       {abort_replace{1}, schedule_retry{2, first_delay, restart_reason::stalled}},
       streaming_config()},
      {"ERROR InternalError mid-snapshot",
       collecting,
       error_event(1, internal),
       later(restart_reason::server_error),
       {stop_io{1}, abort_replace{1}, schedule_retry{2, first_delay, restart_reason::server_error}},
       streaming_config()},
  });
}

TEST_CASE("watch timeoutSeconds is drawn from the configured range") {
  watcher_config config;
  config.min_watch_timeout = 5min;
  config.max_watch_timeout = 10min;
  auto timeout_for = [&](double fraction) {
    backoff retry({}, [fraction] { return fraction; });
    auto result = step(
        backing_off{synced_at("1", 1), 1, backing_off::then::rewatch, restart_reason::watch_ended},
        timer_fired{1}, config, retry, t0);
    REQUIRE(result.actions.size() == 1);
    return std::get<start_watch>(result.actions[0]).timeout;
  };
  CHECK(timeout_for(0.0) == 300s);
  CHECK(timeout_for(0.5) == 450s);
  CHECK(timeout_for(0.999999) == 600s);
  CHECK(timeout_for(1.0) == 600s); // a source returning its upper bound stays in range

  backoff random_retry; // the real random source
  for (int i = 0; i < 100; ++i) {
    auto result =
        step(watching{synced_at("1", 1), 1}, closed(1, watch_end::clean), config, random_retry, t0);
    auto t = std::get<start_watch>(result.actions.at(0)).timeout;
    CHECK(t >= 300s);
    CHECK(t <= 600s);
  }
}

TEST_CASE("a whole run: paged list, watch, 410, relist, throttled re-watch") {
  watcher_config config;
  config.page_size = 2;
  backoff retry({}, [] { return 0.5; });
  watcher_state state = idle{};
  auto feed = [&](watcher_input input) {
    auto result = step(state, input, config, retry, t0);
    state = result.next;
    return result.actions;
  };

  CHECK(feed(start_requested{}) ==
        std::vector<watcher_action>{start_list{1, "0", 2, restart_reason::initial}});
  feed(list_page_received{1, "10", "c1", 2});
  auto last_page = feed(list_page_received{1, "10", "", 1});
  CHECK(last_page.back() == watcher_action{watch_at(2, "10", restart_reason::list_complete)});
  CHECK(feed(watch_opened{2}).empty());
  feed(event(2, event_type::modified, "11"));
  feed(event(2, event_type::bookmark, "15"));
  CHECK(context_of(state).last_resource_version == "15");

  // The watch cache compacted past 15: after a backoff, relist at 15, and paging stays on
  // because the first list came back paged.
  CHECK(feed(error_event(2, expired)) ==
        std::vector<watcher_action>{stop_io{2},
                                    schedule_retry{3, 1200ms, restart_reason::watch_expired}});
  // Late lines of the stopped stream change nothing.
  CHECK(feed(event(2, event_type::added, "16")).empty());
  CHECK(feed(timer_fired{3}) ==
        std::vector<watcher_action>{start_list{4, "15", 2, restart_reason::watch_expired}});
  CHECK(feed(list_page_received{4, "20", "", 0}) ==
        std::vector<watcher_action>{begin_replace{4}, add_to_replace{4, 0},
                                    complete_replace{4, "20"},
                                    watch_at(5, "20", restart_reason::list_complete)});
  // The second backoff of the sequence: 1.6 s, drawn from [1.6, 3.2).
  CHECK(feed(closed(5, watch_end::http_error, http(429))) ==
        std::vector<watcher_action>{schedule_retry{6, 2400ms, restart_reason::throttled}});
  CHECK(feed(timer_fired{6}) ==
        std::vector<watcher_action>{watch_at(7, "20", restart_reason::throttled)});
  CHECK(std::string(state_name(state)) == "watching");
}
