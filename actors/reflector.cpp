#include "actors/reflector.hpp"

#include "protocol/object_check.hpp"
#include "protocol/object_packer.hpp"

#include "protocol/http/api_client.hpp"

#include <caf/all.hpp>

#include <map>

namespace kinformer {

namespace {

// Items a batch of a list carries to the informer (a list page of client-go's 500 goes on whole).
constexpr std::size_t list_batch_size = 256;

using namespace std::chrono;

struct reflector_state {
  // Not an aggregate: CAF would otherwise try to construct the state from the actor pointer
  // (C++20 allows parenthesised aggregate initialisation).
  reflector_state() = default;
  reflector_state(const reflector_state&) = delete;
  reflector_state& operator=(const reflector_state&) = delete;
  // Stops the stream on the I/O thread when the actor ends; late callbacks find the actor gone
  // and drop. (Here rather than in an attached functor: CAF 0.17 destroys the state first.)
  ~reflector_state() {
    if (watch)
      watch.cancel();
  }

  static inline const char* name = "kinformer.reflector";

  std::shared_ptr<api_client> client;
  informer_config config;
  // What the informer holds while it relists (protocol/held_objects.hpp), for every list.
  std::shared_ptr<const held_objects_slot> held;
  // What every object received must be (checked as it is decoded); shared with the requests,
  // which may outlive this state on the I/O thread.
  std::shared_ptr<const object_expectations> expect;
  // The informer's objects' dictionary (config.compress_objects; else null), likewise shared.
  std::shared_ptr<object_packer> packer;
  informer_actor informer;
  watcher_state machine = idle{};
  std::unique_ptr<kinformer::backoff> retry_backoff;

  // The watch that is open now, and what the machine needs to judge how it ended.
  watch_handle watch;
  session_id watch_session = 0;
  steady_clock::time_point watch_started{};
  std::size_t watch_events = 0;

  // Items of the snapshot being received (paged list or streaming list) not yet sent on.
  object_list pending;
  // The list whose requests are running (its items stream in as they are decoded), and the
  // session whose snapshot the informer's replace numbered list_id holds (0: none open).
  session_id list_session = 0;
  session_id replace_session = 0;
  // Items the running list request has streamed in: with what its page still carries, the
  // page's size (for logs).
  std::size_t request_items = 0;
  // Pages asked for ahead of the state machine, by the continue token they were asked with: a
  // page's token comes before its items, so the next page is on its way while this one is still
  // being decoded (client-go asks only once a page is done). The list session's only; at most
  // max_prefetched, so a list is never held whole.
  struct prefetched_page {
    std::optional<list_outcome> outcome; // it came
    bool awaited = false;                // the machine asked for it before it came
  };
  std::map<std::string, prefetched_page> prefetched;
  std::int64_t page_limit = 0; // the limit the machine pages with
  // Counts start_list actions (a first page asked again is another attempt, maybe at another
  // snapshot): pages asked for ahead by an earlier attempt are never used.
  std::uint64_t list_attempt = 0;
  // While a socket read's events are stepped: the events for the informer, sent as one message.
  bool batching_events = false;
  std::vector<informer_event> outgoing_events;
  std::uint64_t list_id = 0; // which (re)list the batches sent to the informer belong to
  // What arrived with the input being stepped: a list page's items, or one watch event.
  object_list page_items;
  std::optional<watch_event> current_event;
  // Whether stepping the current event sent something on to the informer (which then owes the
  // credit back); an event that was not sent on returns its credit at once.
  bool forwarded = false;

  steady_clock::time_point list_started{};
  // Once the first list has synced the informer, later lists replace objects: their memory is no
  // longer fresh (list_request::into_fresh_memory).
  bool synced_once = false;
  // Events (and bookmarks) sent to the informer that it has not acknowledged.
  std::uint64_t in_flight = 0;
};

using reflector_pointer = reflector_actor::stateful_pointer<reflector_state>;

// Pages asked for ahead at once: with two, every page of a paged list is on its way before the
// machine asks for it.
constexpr std::size_t max_prefetched_pages = 2;

failure to_failure(const response_info& info, const error* err) {
  failure f;
  f.http_code = info.http_status;
  f.server_status = info.server_status;
  if (info.retry_after_seconds)
    f.retry_after = seconds(*info.retry_after_seconds);
  if (err)
    f.message = err->describe();
  f.connection_refused = info.transport == transport_failure::refused;
  f.connection_reset = info.transport == transport_failure::reset;
  f.malformed = err && (err->code == errc::invalid_json || err->code == errc::invalid_object ||
                        err->code == errc::too_large);
  return f;
}

void execute(reflector_pointer self, const watcher_action& action);

void feed(reflector_pointer self, const watcher_input& input) {
  auto& st = self->state;
  auto result = step(st.machine, input, st.config.watch, *st.retry_backoff, steady_clock::now());
  st.machine = std::move(result.next);
  for (const auto& action : result.actions)
    execute(self, action);
  st.page_items.clear();
  st.current_event.reset();
}

void report(reflector_pointer self, reflector_report::what what, restart_reason reason,
            milliseconds duration = milliseconds{0}, std::string detail = {}) {
  self->send(self->state.informer, atoms::report_atom::value,
             reflector_report{what, reason, duration, std::move(detail)});
}

// What the informer's objects must be: its kind, in the form asked for, in its scope.
object_expectations expectations_of(const informer_config& config) {
  object_expectations out;
  out.namespaced = config.scope == resource_scope::namespaced;
  if (config.metadata_only) {
    out.kind = "PartialObjectMetadata";
    out.api_version = "meta.k8s.io/v1";
  } else if (!config.kind.empty()) {
    out.kind = config.kind;
    out.api_version = config.resource.gv().api_version();
  }
  return out;
}

void start_list_request(reflector_pointer self, session_id session, std::string resource_version,
                        std::string continue_token, std::optional<std::int64_t> limit,
                        bool prefetch = false) {
  auto& st = self->state;
  list_request request;
  request.path = st.config.collection_path();
  request.label_selector = st.config.labels.to_string();
  request.field_selector = st.config.fields.to_string();
  request.resource_version = std::move(resource_version);
  request.continue_token = std::move(continue_token);
  request.limit = limit.value_or(0);
  request.metadata_only = st.config.metadata_only;
  request.transform = st.config.transform.get();
  request.expect = st.expect.get();
  request.into_fresh_memory = !st.synced_once;
  request.held = st.held;
  request.packer = st.packer;
  // Items go on as they are decoded (on_items_batch at a time), so an unpaged list of a million
  // objects is never held whole; they arrive before the request's final callback, whose page
  // carries the rest.
  // A page asked for ahead is held whole until the machine asks for it (it is one page).
  if (!prefetch)
    request.on_items = [self = reflector_actor(self), session](std::vector<object_ptr>&& items) {
      caf::anon_send(self, atoms::list_items_atom::value, session, object_list(std::move(items)));
    };
  const std::uint64_t attempt = st.list_attempt;
  if (request.limit > 0)
    request.on_continue = [self = reflector_actor(self), session,
                           attempt](const std::string& token) {
      caf::anon_send(self, atoms::list_continue_atom::value, session, attempt, token);
    };
  std::string prefetched_for = prefetch ? request.continue_token : std::string();
  // Keeps the transform and the expectations alive for as long as the request can run.
  auto transform = st.config.transform;
  st.client->list(request, [self = reflector_actor(self), session, transform, expect = st.expect,
                            prefetched_for = std::move(prefetched_for),
                            attempt](result<list_page> page, const response_info& info) mutable {
    list_outcome out;
    out.info = info;
    out.prefetched_for = std::move(prefetched_for);
    out.attempt = attempt;
    if (page)
      out.page = std::move(page).value();
    else
      out.failure = std::move(page).err();
    caf::anon_send(self, atoms::listed_atom::value, session, std::move(out));
  });
}

void start_watch_request(reflector_pointer self, const start_watch& a) {
  auto& st = self->state;
  if (st.watch)
    st.watch.cancel();
  watch_request request;
  request.path = st.config.collection_path();
  request.label_selector = st.config.labels.to_string();
  request.field_selector = st.config.fields.to_string();
  request.resource_version = a.resource_version;
  request.resource_version_match = a.resource_version_match;
  request.allow_watch_bookmarks = a.allow_bookmarks;
  request.send_initial_events = a.send_initial_events;
  request.timeout_seconds = static_cast<int>(a.timeout.count());
  request.metadata_only = st.config.metadata_only;
  request.transform = st.config.transform.get();
  request.expect = st.expect.get();
  request.idle_timeout = a.stall_timeout;
  request.packer = st.packer;
  auto window = st.config.event_window;
  request.initial_credit = st.in_flight >= window ? 1 : window - st.in_flight;
  watch_callbacks callbacks;
  auto session = a.session;
  auto transform = st.config.transform;
  // One message per socket read, not per event: the reflector is woken once for dozens.
  callbacks.on_events = [self = reflector_actor(self), session,
                         transform](std::vector<watch_event>&& events) {
    caf::anon_send(self, atoms::wevents_atom::value, session, std::move(events));
  };
  callbacks.on_closed = [self = reflector_actor(self), session, transform,
                         expect = st.expect](const watch_closed_info& closed) {
    caf::anon_send(self, atoms::wclosed_atom::value, session, closed);
  };
  st.watch = st.client->watch(request, std::move(callbacks));
  st.watch_session = session;
  st.watch_started = steady_clock::now();
  st.watch_events = 0;
  report(self, reflector_report::what::watch_started, a.reason);
}

// Starts the informer's next replace (a new list_id): the batches of an earlier one, finished,
// aborted or broken off, never mix with this one's.
void open_replace(reflector_pointer self, session_id session) {
  auto& st = self->state;
  ++st.list_id;
  st.pending.clear();
  st.replace_session = session;
}

// The pending items of `session`'s snapshot (a new replace when they begin another one).
object_list& pending_of(reflector_pointer self, session_id session) {
  auto& st = self->state;
  if (st.replace_session != session)
    open_replace(self, session);
  return st.pending;
}

// Sends the pending items on once they fill a batch.
void send_full_batch(reflector_pointer self) {
  auto& st = self->state;
  if (st.pending.size() >= list_batch_size) {
    self->send(st.informer, atoms::list_batch_atom::value, st.list_id, std::move(st.pending));
    st.pending = {};
  }
}

// Adds items of `session`'s snapshot; they go on to the informer in batches.
void add_items(reflector_pointer self, session_id session, object_list& items) {
  auto& pending = pending_of(self, session);
  if (pending.empty())
    pending = std::move(items);
  else
    pending.insert(pending.end(), std::make_move_iterator(items.begin()),
                   std::make_move_iterator(items.end()));
  items.clear();
  send_full_batch(self);
}

void prefetch_after(reflector_pointer self, session_id session, const list_outcome& taken);

// The page after `continue_token`: the one asked for ahead when there is one (its outcome goes
// through the mailbox, after this step), else a request now.
void fetch_page(reflector_pointer self, session_id session, const std::string& continue_token,
                std::optional<std::int64_t> limit) {
  auto& st = self->state;
  auto ahead = st.prefetched.find(continue_token);
  if (ahead == st.prefetched.end() || session != st.list_session) {
    start_list_request(self, session, {}, continue_token, limit);
    return;
  }
  if (!ahead->second.outcome) {
    ahead->second.awaited = true;
    return;
  }
  list_outcome out = std::move(*ahead->second.outcome);
  st.prefetched.erase(ahead);
  out.prefetched_for.clear();
  prefetch_after(self, session, out);
  self->send(self, atoms::listed_atom::value, session, std::move(out));
}

// A list request's outcome, for the machine.
void on_listed(reflector_pointer self, session_id session, list_outcome& out) {
  auto& st = self->state;
  if (out.page) {
    auto& page = *out.page;
    list_page_received in{session, page.resource_version, page.continue_token,
                          st.request_items + page.items.size()};
    st.request_items = 0;
    st.page_items = std::move(page.items);
    feed(self, in);
  } else {
    const error* err = out.failure ? &*out.failure : nullptr;
    feed(self, list_failed{session, to_failure(out.info, err)});
  }
}

// A page asked for ahead came: kept until the machine asks for it, or handed to it now when it
// already has. One of an earlier list (ended since) is dropped.
void on_prefetched(reflector_pointer self, session_id session, list_outcome& out) {
  auto& st = self->state;
  auto ahead = st.prefetched.find(out.prefetched_for);
  if (session != st.list_session || out.attempt != st.list_attempt || ahead == st.prefetched.end())
    return;
  if (!ahead->second.awaited) {
    ahead->second.outcome = std::move(out);
    return;
  }
  st.prefetched.erase(ahead);
  out.prefetched_for.clear();
  prefetch_after(self, session, out);
  on_listed(self, session, out);
}

// A page's continue token, before its items: asks for the next page now (see prefetched), while
// this attempt at the list is still running.
void prefetch_page(reflector_pointer self, session_id session, std::uint64_t attempt,
                   const std::string& token) {
  auto& st = self->state;
  if (session != st.list_session || attempt != st.list_attempt ||
      !std::holds_alternative<listing>(st.machine) || st.page_limit <= 0 || token.empty() ||
      st.prefetched.size() >= max_prefetched_pages || st.prefetched.contains(token))
    return;
  st.prefetched.emplace(token, reflector_state::prefetched_page{});
  start_list_request(self, session, {}, token, st.page_limit, true);
}

// A page asked for ahead is taken: its own next page, which the limit may have turned away when
// its token came, is asked for now.
void prefetch_after(reflector_pointer self, session_id session, const list_outcome& taken) {
  if (taken.page)
    prefetch_page(self, session, self->state.list_attempt, taken.page->continue_token);
}

// Sends the events collected from a socket read; anything else for the informer goes after them.
void flush_events(reflector_pointer self) {
  auto& st = self->state;
  if (st.outgoing_events.empty())
    return;
  if (st.outgoing_events.size() == 1)
    self->send(st.informer, atoms::event_atom::value, std::move(st.outgoing_events.front()));
  else
    self->send(st.informer, atoms::events_atom::value, std::move(st.outgoing_events));
  st.outgoing_events = {};
}

void execute(reflector_pointer self, const watcher_action& action) {
  auto& st = self->state;
  if (!std::holds_alternative<apply_event>(action))
    flush_events(self); // keeps the informer's order: events, then whatever followed them
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, start_list>) {
          if (!a.retry) { // a retried first page is the same list
            st.list_started = steady_clock::now();
            report(self, reflector_report::what::list_started, a.reason);
          }
          // Its first items begin a new replace: a first page asked again may be another
          // snapshot, so what an attempt broken off midway streamed in must not count as listed.
          st.list_session = a.session;
          st.replace_session = 0;
          st.request_items = 0;
          st.prefetched.clear();
          ++st.list_attempt;
          st.page_limit = a.limit.value_or(0);
          start_list_request(self, a.session, a.resource_version, {}, a.limit);
        } else if constexpr (std::is_same_v<A, fetch_next_page>) {
          st.request_items = 0;
          st.page_limit = a.limit.value_or(0);
          fetch_page(self, a.session, a.continue_token, a.limit);
        } else if constexpr (std::is_same_v<A, begin_replace>) {
          if (st.replace_session != a.session) // else the list's first items, streamed in, did
            open_replace(self, a.session);
        } else if constexpr (std::is_same_v<A, add_to_replace>) {
          // The informer applies the list while the rest of it is still arriving: a list's
          // items stream in (what a page still carries is added here), a streaming list's
          // initial events go on in batches.
          if (st.current_event && st.current_event->object) {
            pending_of(self, a.session).push_back(st.current_event->object);
            send_full_batch(self);
          } else {
            add_items(self, a.session, st.page_items);
          }
        } else if constexpr (std::is_same_v<A, complete_replace>) {
          auto took = duration_cast<milliseconds>(steady_clock::now() - st.list_started);
          self->send(st.informer, atoms::replace_atom::value, st.list_id, std::move(st.pending),
                     a.resource_version);
          st.pending = {};
          st.replace_session = 0;
          st.prefetched.clear();
          report(self, reflector_report::what::list_completed, restart_reason::initial, took);
        } else if constexpr (std::is_same_v<A, abort_replace>) {
          st.pending.clear();
          st.replace_session = 0;
          st.prefetched.clear();
        } else if constexpr (std::is_same_v<A, start_watch>) {
          start_watch_request(self, a);
        } else if constexpr (std::is_same_v<A, stop_io>) {
          if (st.watch && st.watch_session == a.session) {
            st.watch.cancel();
            st.watch = {};
          }
        } else if constexpr (std::is_same_v<A, apply_event>) {
          if (st.current_event && st.current_event->object) {
            ++st.in_flight;
            st.forwarded = true;
            informer_event ev{st.current_event->type, st.current_event->object};
            if (st.batching_events)
              st.outgoing_events.push_back(std::move(ev));
            else
              self->send(st.informer, atoms::event_atom::value, std::move(ev));
          }
        } else if constexpr (std::is_same_v<A, advance_resource_version>) {
          ++st.in_flight;
          st.forwarded = true;
          self->send(st.informer, atoms::bookmark_atom::value, a.resource_version);
        } else if constexpr (std::is_same_v<A, schedule_retry>) {
          report(self, reflector_report::what::retry_scheduled, a.reason, a.delay);
          self->delayed_send(self, a.delay, atoms::timer_atom::value, a.session);
        } else if constexpr (std::is_same_v<A, mark_synced>) {
          // The informer knows it has synced when the first replace arrives.
          st.synced_once = true;
        }
      },
      action);
}

// One event of the current watch through the machine; the events of a stale watch are dropped.
void on_watch_event(reflector_pointer self, session_id session, watch_event& ev) {
  auto& st = self->state;
  if (session != st.watch_session)
    return;
  ++st.watch_events;
  watch_event_received in;
  in.session = session;
  in.type = ev.type;
  if (ev.object)
    in.resource_version = std::string(ev.object->meta().resource_version);
  in.initial_events_end = ev.is_initial_events_end();
  in.error = ev.error;
  st.current_event = std::move(ev);
  st.forwarded = false;
  feed(self, in);
  if (!st.forwarded && st.watch)
    st.watch.add_credit(1);
}

watch_end to_watch_end(watch_close_reason reason) {
  switch (reason) {
  case watch_close_reason::end_of_stream:
    return watch_end::clean;
  case watch_close_reason::http_error:
    return watch_end::http_error;
  case watch_close_reason::idle_timeout:
    return watch_end::stalled;
  default:
    return watch_end::io_error;
  }
}

} // namespace

reflector_actor spawn_reflector(caf::local_actor* parent, std::shared_ptr<api_client> client,
                                const informer_config& config, informer_actor informer,
                                std::shared_ptr<const held_objects_slot> held) {
  auto behavior =
      [](reflector_pointer self, std::shared_ptr<api_client> client, informer_config config,
         informer_actor informer,
         std::shared_ptr<const held_objects_slot> held) -> reflector_actor::behavior_type {
    auto& st = self->state;
    st.client = std::move(client);
    st.config = std::move(config);
    st.informer = std::move(informer);
    st.held = std::move(held);
    st.retry_backoff = std::make_unique<kinformer::backoff>(st.config.retry);
    st.expect = std::make_shared<const object_expectations>(expectations_of(st.config));
    if (keeps_objects_compressed(st.config))
      st.packer = std::make_shared<object_packer>(st.config.packing);
    return {
        [self](atoms::start_atom) { feed(self, start_requested{}); },
        [self](atoms::listed_atom, session_id session, list_outcome& out) {
          if (out.prefetched_for.empty())
            on_listed(self, session, out);
          else
            on_prefetched(self, session, out);
        },
        // What a request that then fails streamed in stays applied, as the pages before a
        // failed page always did: each object is a state the server had, and the retry or the
        // watch after it moves it on. A page asked again with its continue token sends its
        // first items twice: the second time each is a sync (same resourceVersion).
        [self](atoms::list_items_atom, session_id session, object_list& items) {
          // Items of an earlier list's requests (ended since) are dropped.
          if (session == self->state.list_session && !items.empty()) {
            self->state.request_items += items.size();
            add_items(self, session, items);
          }
        },
        [self](atoms::list_continue_atom, session_id session, std::uint64_t attempt,
               std::string& token) { prefetch_page(self, session, attempt, token); },
        [self](atoms::wevent_atom, session_id session, watch_event& ev) {
          on_watch_event(self, session, ev);
        },
        [self](atoms::wevents_atom, session_id session, std::vector<watch_event>& events) {
          self->state.batching_events = true;
          for (auto& ev : events)
            on_watch_event(self, session, ev);
          self->state.batching_events = false;
          flush_events(self);
        },
        [self](atoms::wclosed_atom, session_id session, watch_closed_info& closed) {
          auto& st = self->state;
          if (closed.reason == watch_close_reason::cancelled || session != st.watch_session)
            return;
          st.watch = {};
          watch_closed in;
          in.session = session;
          in.how = to_watch_end(closed.reason);
          in.cause = to_failure(closed.response, nullptr);
          in.cause.message = closed.message;
          in.cause.malformed = closed.reason == watch_close_reason::decode_error ||
                               closed.reason == watch_close_reason::line_too_large;
          in.lived = duration_cast<milliseconds>(steady_clock::now() - st.watch_started);
          in.events = st.watch_events;
          report(self, reflector_report::what::watch_ended, restart_reason::watch_ended, in.lived,
                 std::string(to_string(closed.reason)) + ": " + closed.message);
          feed(self, in);
        },
        [self](atoms::timer_atom, session_id session) { feed(self, timer_fired{session}); },
        [self](atoms::credit_atom, std::uint64_t n) {
          auto& st = self->state;
          st.in_flight = n > st.in_flight ? 0 : st.in_flight - n;
          if (st.watch)
            st.watch.add_credit(n);
        },
    };
  };
  return parent->spawn<caf::linked>(behavior, std::move(client), config, std::move(informer),
                                    std::move(held));
}

} // namespace kinformer
