#include "protocol/watcher.hpp"

#include "protocol/retry_after.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace kinformer {

using std::chrono::milliseconds;
using std::chrono::seconds;

const char* to_string(restart_reason reason) noexcept {
  switch (reason) {
  case restart_reason::initial:
    return "initial";
  case restart_reason::list_complete:
    return "list_complete";
  case restart_reason::watch_expired:
    return "watch_expired";
  case restart_reason::resource_version_too_large:
    return "resource_version_too_large";
  case restart_reason::list_expired:
    return "list_expired";
  case restart_reason::continue_expired:
    return "continue_expired";
  case restart_reason::throttled:
    return "throttled";
  case restart_reason::connection_refused:
    return "connection_refused";
  case restart_reason::watch_ended:
    return "watch_ended";
  case restart_reason::short_watch:
    return "short_watch";
  case restart_reason::stalled:
    return "stalled";
  case restart_reason::io_error:
    return "io_error";
  case restart_reason::server_error:
    return "server_error";
  case restart_reason::streaming_refused:
    return "streaming_refused";
  case restart_reason::malformed:
    return "malformed";
  }
  return "unknown";
}

namespace {

template <class... Fs>
struct overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
overloaded(Fs...) -> overloaded<Fs...>;

std::string limit_text(const std::optional<std::int64_t>& limit) {
  return limit ? std::to_string(*limit) : "none";
}

} // namespace

std::string describe(const watcher_action& action) {
  auto session = [](session_id id) { return " session=" + std::to_string(id); };
  return std::visit(
      overloaded{
          [&](const start_list& a) {
            return "start_list" + session(a.session) + " rv=\"" + a.resource_version +
                   "\" limit=" + limit_text(a.limit) + " reason=" + to_string(a.reason) +
                   (a.retry ? " retry" : "");
          },
          [&](const fetch_next_page& a) {
            return "fetch_next_page" + session(a.session) + " continue=\"" + a.continue_token +
                   "\" limit=" + limit_text(a.limit);
          },
          [&](const begin_replace& a) { return "begin_replace" + session(a.session); },
          [&](const add_to_replace& a) {
            return "add_to_replace" + session(a.session) + " items=" + std::to_string(a.item_count);
          },
          [&](const complete_replace& a) {
            return "complete_replace" + session(a.session) + " rv=\"" + a.resource_version + "\"";
          },
          [&](const abort_replace& a) { return "abort_replace" + session(a.session); },
          [&](const start_watch& a) {
            return "start_watch" + session(a.session) + " rv=\"" + a.resource_version +
                   "\" bookmarks=" + (a.allow_bookmarks ? "true" : "false") +
                   " timeout=" + std::to_string(a.timeout.count()) + "s" +
                   (a.send_initial_events ? " sendInitialEvents=true" : "") +
                   (a.resource_version_match.empty()
                        ? ""
                        : " resourceVersionMatch=" + a.resource_version_match) +
                   " stall=" + std::to_string(a.stall_timeout.count()) + "ms" +
                   " reason=" + to_string(a.reason);
          },
          [&](const stop_io& a) { return "stop_io" + session(a.session); },
          [&](const apply_event& a) {
            return std::string("apply_event ") + to_string(a.type) + " rv=\"" + a.resource_version +
                   "\"";
          },
          [&](const advance_resource_version& a) {
            return "advance_resource_version rv=\"" + a.resource_version + "\"";
          },
          [&](const schedule_retry& a) {
            return "schedule_retry" + session(a.session) +
                   " delay=" + std::to_string(a.delay.count()) + "ms reason=" + to_string(a.reason);
          },
          [&](const mark_synced&) { return std::string("mark_synced"); },
      },
      action);
}

const watcher_context& context_of(const watcher_state& state) {
  return std::visit([](const auto& s) -> const watcher_context& { return s; }, state);
}

const char* state_name(const watcher_state& state) {
  return std::visit(overloaded{
                        [](const idle&) { return "idle"; },
                        [](const listing&) { return "listing"; },
                        [](const streaming_list&) { return "streaming_list"; },
                        [](const watching&) { return "watching"; },
                        [](const backing_off&) { return "backing_off"; },
                    },
                    state);
}

namespace {

// How a failure is handled, whatever request it ended.
enum class failure_kind {
  expired,      // 410: the resourceVersion is compacted away
  too_large,    // 504 ResourceVersionTooLarge: the server is behind us; treated as expired
  throttled,    // 429
  refused,      // connection refused
  client_error, // any other 4xx: the request itself is unacceptable
  other,        // 5xx, I/O errors, anything else
};

failure_kind classify(const failure& cause) {
  if (cause.connection_refused)
    return failure_kind::refused;
  int code = cause.http_code;
  if (const auto& s = cause.server_status) {
    if (s->is_too_large_resource_version())
      return failure_kind::too_large;
    if (s->is_expired())
      return failure_kind::expired;
    if (s->reason == "TooManyRequests")
      return failure_kind::throttled;
    if (s->code != 0)
      code = s->code;
  }
  if (code == 410)
    return failure_kind::expired;
  if (code == 429)
    return failure_kind::throttled;
  if (code >= 400 && code < 500)
    return failure_kind::client_error;
  return failure_kind::other;
}

// The larger of the Retry-After header and the Status's details.retryAfterSeconds, at most
// max_retry_after: a Status can also arrive in a watch ERROR event, which the client does not cap.
std::optional<milliseconds> retry_after(const failure& cause) {
  std::optional<milliseconds> result = cause.retry_after;
  if (cause.server_status && cause.server_status->retry_after_seconds) {
    milliseconds from_status = seconds(*cause.server_status->retry_after_seconds);
    if (!result || from_status > *result)
      result = from_status;
  }
  if (result)
    result = std::min(*result, duration_cast<milliseconds>(max_retry_after));
  return result;
}

// client-go's rest.Request retries a request itself, without the reflector knowing: a 429 or 5xx
// that carries Retry-After (after that delay), and a GET whose connection was reset or closed
// early (at once). Expired and TooLarge keep their own handling: they need a new list.
bool retryable_request(const failure& cause) {
  if (cause.connection_reset)
    return true;
  auto kind = classify(cause);
  if (kind == failure_kind::expired || kind == failure_kind::too_large)
    return false;
  int code = cause.http_code;
  if (cause.server_status && cause.server_status->code != 0)
    code = cause.server_status->code;
  return (code == 429 || code >= 500) && retry_after(cause).has_value();
}

// Builds one step's result. The context is copied out of the current state, updated, and moved
// into whichever state comes next.
class transition {
public:
  transition(const watcher_state& from, const watcher_config& config, backoff& retry_backoff,
             watch_clock::time_point now)
      : ctx_(context_of(from)), config_(config), backoff_(retry_backoff), now_(now) {}

  watcher_context& ctx() { return ctx_; }
  const watcher_config& config() const { return config_; }
  void emit(watcher_action action) { actions_.push_back(std::move(action)); }

  // Whether the request that failed with `cause` is tried again as it was.
  bool may_retry_request(const failure& cause) const {
    return retryable_request(cause) && ctx_.request_retries < config_.max_request_retries;
  }

  // client-go relistResourceVersion(): "" after Expired/TooLarge, "0" (the watch cache) before
  // anything was listed, else the last resourceVersion seen.
  std::string relist_resource_version() const {
    if (ctx_.resource_version_unavailable)
      return "";
    if (ctx_.last_resource_version.empty())
      return "0";
    return ctx_.last_resource_version;
  }

  // Paging only where it cannot force an etcd read: at "" or "0", or once the server showed it
  // pages this resource. client-go turns paging off for relists at a specific resourceVersion.
  std::optional<std::int64_t> limit_for(const std::string& resource_version) const {
    if (config_.page_size <= 0)
      return std::nullopt;
    if (resource_version.empty() || resource_version == "0" || ctx_.server_paginates)
      return config_.page_size;
    return std::nullopt;
  }

  step_result relist(restart_reason reason) {
    return ctx_.streaming ? begin_streaming_list(reason) : begin_list(reason);
  }

  step_result begin_list(restart_reason reason) {
    auto resource_version = relist_resource_version();
    auto limit = limit_for(resource_version);
    return begin_list_at(std::move(resource_version), limit, reason);
  }

  // client-go's pager, when a continue token expired: one unpaged list at the resourceVersion
  // the paged one asked for, so paging cannot fall behind compaction again.
  step_result begin_unpaged_list(std::string resource_version, restart_reason reason) {
    return begin_list_at(std::move(resource_version), std::nullopt, reason);
  }

  step_result begin_streaming_list(restart_reason reason) {
    ctx_.request_retries = 0;
    streaming_list next = with_context<streaming_list>();
    next.session = new_session();
    next.reason = reason;
    // client-go's watchList: from the last synced resourceVersion (NotOlderThan), or a
    // consistent read ("") at the start and after Expired/TooLarge.
    start_watch request = watch_request(
        next.session, ctx_.resource_version_unavailable ? "" : ctx_.last_resource_version, reason);
    request.send_initial_events = true;
    request.resource_version_match = "NotOlderThan";
    emit(std::move(request));
    return finish(std::move(next));
  }

  step_result rewatch(restart_reason reason) {
    watching next = with_context<watching>();
    next.session = new_session();
    emit(watch_request(next.session, ctx_.last_resource_version, reason));
    return finish(std::move(next));
  }

  // A new round after a backoff delay (client-go's BackoffUntil around ListAndWatch, and its
  // retries of a refused or throttled watch).
  step_result retry_later(backing_off::then next_move, restart_reason reason,
                          std::optional<milliseconds> lower_bound = {}) {
    ctx_.request_retries = 0;
    backing_off next = with_context<backing_off>();
    next.session = new_session();
    next.next = next_move;
    next.reason = reason;
    emit(schedule_retry{next.session, backoff_.next_delay(now_, lower_bound), reason});
    return finish(std::move(next));
  }

  // The same watch again after the server's Retry-After, counted against max_request_retries;
  // the backoff sequence is not touched (client-go's request-level retry).
  step_result retry_watch_request(restart_reason reason, milliseconds delay) {
    ++ctx_.request_retries;
    backing_off next = with_context<backing_off>();
    next.session = new_session();
    next.next = backing_off::then::rewatch;
    next.reason = reason;
    emit(schedule_retry{next.session, delay, reason});
    return finish(std::move(next));
  }

  // The snapshot is whole: hand it over, move the RV, and watch from it.
  void complete_snapshot(session_id session, const std::string& resource_version) {
    emit(complete_replace{session, resource_version});
    ctx_.last_resource_version = resource_version;
    ctx_.resource_version_unavailable = false;
    if (!ctx_.synced) {
      ctx_.synced = true;
      emit(mark_synced{});
    }
  }

  template <class State>
  State with_context() const {
    State next;
    static_cast<watcher_context&>(next) = ctx_;
    return next;
  }

  template <class State>
  step_result finish(State next) {
    static_cast<watcher_context&>(next) = ctx_;
    return {watcher_state(std::move(next)), std::move(actions_)};
  }

private:
  session_id new_session() { return ++ctx_.last_session; }

  step_result begin_list_at(std::string resource_version, std::optional<std::int64_t> limit,
                            restart_reason reason) {
    ctx_.request_retries = 0;
    listing next = with_context<listing>();
    next.session = new_session();
    next.resource_version = std::move(resource_version);
    next.limit = limit;
    next.reason = reason;
    emit(start_list{next.session, next.resource_version, next.limit, reason});
    return finish(std::move(next));
  }

  start_watch watch_request(session_id session, std::string resource_version,
                            restart_reason reason) const {
    start_watch request;
    request.session = session;
    request.resource_version = std::move(resource_version);
    request.allow_bookmarks = true;
    request.timeout = watch_timeout();
    request.stall_timeout = config_.stall_timeout;
    request.reason = reason;
    return request;
  }

  // Uniform in [min, max] whole seconds, so that many informers do not time out together.
  seconds watch_timeout() const {
    auto low = config_.min_watch_timeout.count();
    auto high = std::max(config_.max_watch_timeout.count(), low);
    auto span = static_cast<double>(high - low + 1);
    auto offset = static_cast<seconds::rep>(std::floor(backoff_.draw() * span));
    return seconds(std::clamp(low + offset, low, high));
  }

  watcher_context ctx_;
  const watcher_config& config_;
  backoff& backoff_;
  watch_clock::time_point now_;
  std::vector<watcher_action> actions_;
};

session_id session_of(const watcher_input& input) {
  return std::visit(
      [](const auto& in) -> session_id {
        if constexpr (std::is_same_v<std::decay_t<decltype(in)>, start_requested>)
          return 0;
        else
          return in.session;
      },
      input);
}

session_id session_of(const watcher_state& state) {
  return std::visit(
      [](const auto& s) -> session_id {
        if constexpr (std::is_same_v<std::decay_t<decltype(s)>, idle>)
          return 0;
        else
          return s.session;
      },
      state);
}

step_result unchanged(const watcher_state& state) {
  return {state, {}};
}

// ---- listing ----

step_result on_page(const listing& state, const list_page_received& page, transition& t) {
  t.ctx().request_retries = 0;
  if (!state.replace_begun)
    t.emit(begin_replace{state.session});
  t.emit(add_to_replace{state.session, page.item_count});

  if (!page.continue_token.empty()) {
    // A paged answer to the first list: the server pages this resource, so relists page too.
    if (state.resource_version == "0")
      t.ctx().server_paginates = true;
    listing next = state;
    next.replace_begun = true;
    next.continue_token = page.continue_token;
    t.emit(fetch_next_page{state.session, page.continue_token, state.limit});
    return t.finish(std::move(next));
  }

  if (page.resource_version.empty()) {
    // Watching from "" would silently skip everything between the list and the watch.
    t.emit(abort_replace{state.session});
    return t.retry_later(backing_off::then::relist, restart_reason::server_error);
  }
  t.complete_snapshot(state.session, page.resource_version);
  return t.rewatch(restart_reason::list_complete);
}

// Why a failed request is being retried, for logs and metrics.
restart_reason retry_reason(const failure& cause) {
  if (cause.malformed)
    return restart_reason::malformed;
  if (cause.connection_reset)
    return restart_reason::io_error;
  return classify(cause) == failure_kind::throttled ? restart_reason::throttled
                                                    : restart_reason::server_error;
}

step_result on_list_failed(const listing& state, const list_failed& in, transition& t) {
  if (t.may_retry_request(in.cause)) {
    // The same page again, after the server's Retry-After (at once after a reset): the snapshot
    // collected so far stays.
    ++t.ctx().request_retries;
    listing next = state;
    next.retry_pending = true;
    t.emit(schedule_retry{state.session, retry_after(in.cause).value_or(milliseconds{0}),
                          retry_reason(in.cause)});
    return t.finish(std::move(next));
  }
  if (state.replace_begun)
    t.emit(abort_replace{state.session});

  auto kind = classify(in.cause);
  if (kind == failure_kind::expired && !state.continue_token.empty())
    return t.begin_unpaged_list(state.resource_version, restart_reason::continue_expired);
  if (kind == failure_kind::expired || kind == failure_kind::too_large) {
    // A consistent read ("") failing this way again is not going to heal by relisting at once.
    if (state.resource_version.empty())
      return t.retry_later(backing_off::then::relist, restart_reason::server_error,
                           retry_after(in.cause));
    // client-go retries at once with resourceVersion="" so the reflector makes progress even
    // against a lagging server.
    t.ctx().resource_version_unavailable = true;
    auto reason = kind == failure_kind::too_large ? restart_reason::resource_version_too_large
                                                  : restart_reason::list_expired;
    return t.begin_list(reason);
  }
  auto reason = in.cause.malformed                ? restart_reason::malformed
                : kind == failure_kind::throttled ? restart_reason::throttled
                : kind == failure_kind::refused   ? restart_reason::connection_refused
                : in.cause.http_code == 0 && !in.cause.server_status ? restart_reason::io_error
                                                                     : restart_reason::server_error;
  return t.retry_later(backing_off::then::relist, reason, retry_after(in.cause));
}

// The timer of a page retry: fetch the same page again.
step_result on_list_retry(const listing& state, transition& t) {
  if (!state.retry_pending)
    return t.finish(state);
  listing next = state;
  next.retry_pending = false;
  if (state.continue_token.empty()) {
    start_list again{state.session, state.resource_version, state.limit, state.reason};
    again.retry = true;
    t.emit(std::move(again));
  } else {
    t.emit(fetch_next_page{state.session, state.continue_token, state.limit});
  }
  return t.finish(std::move(next));
}

// ---- a watch that failed, in watching state ----

step_result on_watch_failure(const failure& cause, bool io_error, transition& t) {
  switch (classify(cause)) {
  case failure_kind::expired:
    // Not marking the RV unavailable: a LIST at that RV is served from the watch cache and
    // returns data at least that fresh (client-go does the same). The relist waits a backoff
    // delay, as client-go's next ListAndWatch round does: a server answering every watch with
    // 410 sees one LIST per delay, not back-to-back LIST+WATCH.
    return t.retry_later(backing_off::then::relist, restart_reason::watch_expired);
  case failure_kind::too_large:
    t.ctx().resource_version_unavailable = true;
    return t.retry_later(backing_off::then::relist, restart_reason::resource_version_too_large);
  case failure_kind::throttled:
    // The server is overloaded, not out of date: wait and re-watch, no relist.
    return t.retry_later(backing_off::then::rewatch, restart_reason::throttled, retry_after(cause));
  case failure_kind::refused:
    return t.retry_later(backing_off::then::rewatch, restart_reason::connection_refused,
                         retry_after(cause));
  case failure_kind::client_error:
  case failure_kind::other:
    break;
  }
  if (io_error)
    return t.retry_later(backing_off::then::rewatch,
                         cause.malformed ? restart_reason::malformed : restart_reason::io_error);
  // Any other failure status: client-go gives up on the watch and relists after a backoff.
  return t.retry_later(backing_off::then::relist, restart_reason::server_error, retry_after(cause));
}

step_result on_watch_closed(const watching&, const watch_closed& in, const watcher_config& config,
                            transition& t) {
  switch (in.how) {
  case watch_end::clean:
    t.ctx().request_retries = 0;
    // client-go's VeryShortWatchError ends the ListAndWatch round: back off, then relist.
    if (in.events == 0 && in.lived < config.short_watch)
      return t.retry_later(backing_off::then::relist, restart_reason::short_watch);
    return t.rewatch(restart_reason::watch_ended);
  case watch_end::stalled:
    return t.rewatch(restart_reason::stalled);
  case watch_end::io_error:
    // A stream that broke after it had delivered events ends like a clean close, as in
    // client-go: re-watch at once. One that never delivered anything backs off first.
    if (in.events > 0 && !in.cause.connection_refused)
      return t.rewatch(in.cause.malformed ? restart_reason::malformed : restart_reason::io_error);
    return on_watch_failure(in.cause, true, t);
  case watch_end::http_error:
    // A 429 or 5xx with Retry-After: the same watch again after that delay, no relist.
    if (t.may_retry_request(in.cause))
      return t.retry_watch_request(retry_reason(in.cause),
                                   retry_after(in.cause).value_or(milliseconds{0}));
    break;
  case watch_end::error_event:
    break;
  }
  return on_watch_failure(in.cause, false, t);
}

step_result on_watch_event(const watching& state, const watch_event_received& in, transition& t) {
  t.ctx().request_retries = 0;
  switch (in.type) {
  case event_type::added:
  case event_type::modified:
  case event_type::deleted:
    t.emit(apply_event{in.type, in.resource_version});
    if (!in.resource_version.empty())
      t.ctx().last_resource_version = in.resource_version;
    return t.finish(state);
  case event_type::bookmark:
    t.emit(advance_resource_version{in.resource_version});
    if (!in.resource_version.empty())
      t.ctx().last_resource_version = in.resource_version;
    return t.finish(state);
  case event_type::error:
    break;
  }
  // The stream is still open; the machine moves on without it.
  t.emit(stop_io{state.session});
  failure cause;
  cause.server_status = in.error;
  return on_watch_failure(cause, false, t);
}

// ---- streaming list ----

// For this round only: the next relist tries a streaming list again, as client-go's
// ListAndWatch does each round.
step_result fall_back_to_paged_list(const streaming_list& state, transition& t) {
  if (state.replace_begun)
    t.emit(abort_replace{state.session});
  return t.begin_list(restart_reason::streaming_refused);
}

step_result on_streaming_failure(const streaming_list& state, const failure& cause,
                                 restart_reason reason, transition& t) {
  auto kind = classify(cause);
  // A 4xx other than 429/410 means this server does not accept the streaming parameters.
  if (kind == failure_kind::client_error)
    return fall_back_to_paged_list(state, t);
  if (state.replace_begun)
    t.emit(abort_replace{state.session});
  if (kind == failure_kind::throttled)
    reason = restart_reason::throttled;
  else if (kind == failure_kind::refused)
    reason = restart_reason::connection_refused;
  return t.retry_later(backing_off::then::relist, reason, retry_after(cause));
}

step_result on_streaming_event(const streaming_list& state, const watch_event_received& in,
                               transition& t) {
  auto begin_once = [&] {
    if (!state.replace_begun)
      t.emit(begin_replace{state.session});
  };
  switch (in.type) {
  case event_type::added: {
    // Initial events are the snapshot; their resourceVersions are not a watch position.
    begin_once();
    t.emit(add_to_replace{state.session, 1});
    streaming_list next = state;
    next.replace_begun = true;
    return t.finish(std::move(next));
  }
  case event_type::bookmark: {
    if (!in.initial_events_end || in.resource_version.empty())
      return t.finish(state); // only the annotated bookmark ends the snapshot
    begin_once();
    t.complete_snapshot(state.session, in.resource_version);
    // The same stream carries on as an ordinary watch.
    watching next = t.with_context<watching>();
    next.session = state.session;
    return t.finish(std::move(next));
  }
  case event_type::modified:
  case event_type::deleted:
    // Not the streaming protocol: this server ignored sendInitialEvents.
    t.emit(stop_io{state.session});
    return fall_back_to_paged_list(state, t);
  case event_type::error:
    break;
  }
  t.emit(stop_io{state.session});
  failure cause;
  cause.server_status = in.error;
  return on_streaming_failure(state, cause, restart_reason::server_error, t);
}

step_result on_streaming_closed(const streaming_list& state, const watch_closed& in,
                                transition& t) {
  switch (in.how) {
  case watch_end::clean:
    // Ended before the initial-events-end bookmark: the server does not stream lists.
    return fall_back_to_paged_list(state, t);
  case watch_end::stalled:
    return on_streaming_failure(state, in.cause, restart_reason::stalled, t);
  case watch_end::io_error:
    return on_streaming_failure(
        state, in.cause, in.cause.malformed ? restart_reason::malformed : restart_reason::io_error,
        t);
  case watch_end::error_event:
  case watch_end::http_error:
    break;
  }
  return on_streaming_failure(state, in.cause, restart_reason::server_error, t);
}

} // namespace

step_result step(const watcher_state& state, const watcher_input& input,
                 const watcher_config& config, backoff& retry_backoff,
                 watch_clock::time_point now) {
  if (std::holds_alternative<start_requested>(input)) {
    if (!std::holds_alternative<idle>(state))
      return unchanged(state);
    transition t(state, config, retry_backoff, now);
    t.ctx().streaming = config.streaming_list;
    return t.relist(restart_reason::initial);
  }
  // Late news from a request, stream or timer that is no longer current.
  if (std::holds_alternative<idle>(state) || session_of(input) != session_of(state))
    return unchanged(state);

  transition t(state, config, retry_backoff, now);
  return std::visit(
      overloaded{
          [&](const listing& s, const list_page_received& in) { return on_page(s, in, t); },
          [&](const listing& s, const list_failed& in) { return on_list_failed(s, in, t); },
          [&](const watching& s, const watch_event_received& in) {
            return on_watch_event(s, in, t);
          },
          [&](const watching& s, const watch_closed& in) {
            return on_watch_closed(s, in, config, t);
          },
          [&](const streaming_list& s, const watch_event_received& in) {
            return on_streaming_event(s, in, t);
          },
          [&](const streaming_list& s, const watch_closed& in) {
            return on_streaming_closed(s, in, t);
          },
          [&](const listing& s, const timer_fired&) { return on_list_retry(s, t); },
          [&](const backing_off& s, const timer_fired&) {
            return s.next == backing_off::then::relist ? t.relist(s.reason) : t.rewatch(s.reason);
          },
          // watch_opened needs no decision; anything else does not belong to this state.
          [&](const auto&, const auto&) { return unchanged(state); },
      },
      state, input);
}

} // namespace kinformer
