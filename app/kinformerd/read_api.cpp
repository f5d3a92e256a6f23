// The read API: kinformerd's backend of the one API-server front end (app/apiserver/
// api_frontend.hpp). The front end reads every request on the I/O thread; the cache work runs on
// helper actors (a short-lived one per get or list, one handler actor per watch). See
// read_api.hpp for what is served and how resourceVersions are honoured.

#include "app/kinformerd/read_api.hpp"

#include "actors/change_window.hpp"
#include "actors/error_bridge.hpp"
#include "actors/foreign_thread_scope.hpp"
#include "app/apiserver/api_backend.hpp"
#include "app/apiserver/api_frontend.hpp"
#include "app/apiserver/api_status.hpp"
#include "app/apiserver/continue_token.hpp"
#include "app/apiserver/field_labels.hpp"
#include "app/apiserver/resource_answer.hpp"
#include "app/apiserver/watch_event.hpp"
#include "app/apiserver/watch_shaper.hpp"
#include "app/kinformerd/continue_snapshots.hpp"
#include "app/kinformerd/live_event_merge.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>

namespace kinformer::service {

namespace {

// Read API -> its own watch actor: the watch's time is up; time for a periodic bookmark.
using watch_timeout_atom = caf::atom_constant<caf::atom("wtimeout")>;
using watch_bookmark_atom = caf::atom_constant<caf::atom("wbookmark")>;
// ... time to ask the quiet informers how far they are, to release held live events.
using watch_merge_atom = caf::atom_constant<caf::atom("wmerge")>;
// ... time to see whether the client has read enough to be sent more initial events.
using watch_initial_atom = caf::atom_constant<caf::atom("winitial")>;
using watch_actor =
    handler_actor::extend<caf::reacts_to<watch_timeout_atom>, caf::reacts_to<watch_bookmark_atom>,
                          caf::reacts_to<watch_merge_atom>, caf::reacts_to<watch_initial_atom>>;

// How often a watch whose client has not yet read its initial events looks again.
constexpr std::chrono::milliseconds initial_events_poll{2};

apiserver::http_response status_reply(const status& s) {
  return apiserver::failure_response(s);
}

// The oldest of the informers' resourceVersions (integers compared as such).
std::string oldest_revision(const std::vector<std::string>& versions) {
  std::string oldest;
  for (const auto& rv : versions) {
    if (rv.empty())
      continue;
    auto a = parse_revision(rv);
    auto b = parse_revision(oldest);
    if (oldest.empty() || (a && b && *a < *b))
      oldest = rv;
  }
  return oldest;
}

// A GET the front end read and checked, and which of the kind's configured informers answers
// it: the metadata-only one, whose objects are PartialObjectMetadata already.
struct read_request {
  apiserver::resource_request r;
  bool metadata_informer = false;

  const apiserver::resource_info& info() const { return r.info; }
  kind_request kind() const {
    return kind_request{group_version_kind{r.info.gvr.group, r.info.gvr.version, r.info.kind}, "",
                        metadata_informer};
  }
};

// A cache error as the Status a client expects.
status status_of(const error& err, const read_request& req) {
  switch (err.code) {
  case errc::not_found:
    return req.r.name.empty() ? apiserver::resource_not_found()
                              : apiserver::not_found(req.r.info.gvr, req.r.name);
  case errc::invalid_argument:
  case errc::no_index: // a field the cache has no index for: the selector is what to change
    return apiserver::bad_request(err.message);
  // What the API server answers for a resource it does not serve: 404 NotFound.
  case errc::no_match:
  case errc::not_cached:
  case errc::namespace_not_covered:
    return apiserver::make_failure(404, "NotFound", err.message);
  case errc::timeout:
    return apiserver::make_failure(504, "Timeout",
                                   "the cache did not answer in time: " + err.message);
  // The informer's deletion window does not reach back to a resumed watch's resourceVersion:
  // the watch cache's answer, on which clients relist.
  case errc::expired:
    return apiserver::expired(err.message);
  default:
    return apiserver::make_failure(503, "ServiceUnavailable", err.describe());
  }
}

// Orders objects by key, as the API server lists them. The keys are first copied side by side
// into one buffer: comparing them there costs far less than following two pointers per
// comparison into objects spread over the heap.
void sort_by_key(object_list& items) {
  std::size_t total = 0;
  for (const auto& obj : items)
    total += obj->key().size();
  std::string keys;
  keys.reserve(total);
  struct entry {
    std::string_view key;
    std::size_t index;
  };
  std::vector<entry> order;
  order.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string_view key = items[i]->key();
    order.push_back(entry{{keys.data() + keys.size(), key.size()}, i});
    keys.append(key); // never reallocates: reserved above
  }
  std::sort(order.begin(), order.end(),
            [](const entry& a, const entry& b) { return a.key < b.key; });
  object_list sorted;
  sorted.reserve(items.size());
  for (const auto& e : order)
    sorted.push_back(std::move(items[e.index]));
  items = std::move(sorted);
}

} // namespace

struct read_api::state {
  state(caf::actor_system& sys, cache_actor c, read_api_options o)
      : system(sys), cache(std::move(c)), options(std::move(o)) {}

  caf::actor_system& system;
  cache_actor cache;
  read_api_options options;

  continue_snapshots snapshots{options.continue_snapshots, options.continue_max_age};

  std::atomic<std::size_t> open_watches{0};
  std::atomic<std::size_t> unpaged_lists{0};

  // An admission answered late (a review from the API server) serves through the front end,
  // which the read API owns: once it is gone (closed, under the lock), such answers are dropped.
  std::shared_mutex admission_mutex;
  bool closed = false;
  mutable std::mutex counts_mutex;
  std::map<std::pair<std::string, int>, std::uint64_t> requests;

  void count(const std::string& verb, int code) {
    std::lock_guard lock(counts_mutex);
    ++requests[{verb, code}];
  }
};

namespace {

// Counts each answer by verb and code on its way out.
class counting_exchange final : public apiserver::http_exchange {
public:
  counting_exchange(std::shared_ptr<apiserver::http_exchange> inner,
                    std::shared_ptr<read_api::state> st, std::string verb)
      : inner_(std::move(inner)), st_(std::move(st)), verb_(std::move(verb)) {}

  void respond(apiserver::http_response response) override {
    st_->count(verb_, response.status);
    inner_->respond(std::move(response));
  }
  std::shared_ptr<apiserver::http_stream> stream(int status, std::string content_type,
                                                 apiserver::http_headers headers) override {
    st_->count(verb_, status);
    return inner_->stream(status, std::move(content_type), std::move(headers));
  }

private:
  std::shared_ptr<apiserver::http_exchange> inner_;
  std::shared_ptr<read_api::state> st_;
  std::string verb_;
};

// A bound was reached: the API server's 429 with Retry-After.
status too_many_requests(const read_api_options& options, const std::string& what) {
  status s = apiserver::make_failure(429, "TooManyRequests", "too many " + what + "; retry later");
  s.retry_after_seconds = static_cast<int>(options.retry_after_seconds);
  return s;
}

} // namespace

namespace {

using state_ptr = std::shared_ptr<read_api::state>;

// One page of `snapshot` from `offset`, keeping the snapshot (id) when more pages follow.
apiserver::list_answer page_answer(const state_ptr& st, const read_request& req,
                                   std::shared_ptr<const page_snapshot> snapshot, std::uint64_t id,
                                   std::size_t offset) {
  const auto& items = snapshot->items;
  offset = std::min(offset, items.size());
  std::size_t count = items.size() - offset;
  apiserver::list_answer answer;
  const std::size_t limit = req.r.query.limit;
  if (limit > 0 && count > limit) {
    count = limit;
    if (id == 0)
      id = st->snapshots.keep(snapshot, continue_snapshots::clock::now());
    // The API server's token format, naming the kept snapshot; the next page starts after the
    // last key of this one.
    const auto revision =
        std::max<std::uint64_t>(1, parse_revision(snapshot->resource_version).value_or(1));
    answer.continue_token =
        apiserver::continue_token::after(revision, items[offset + count - 1]->key(), id).encode();
    answer.remaining_item_count = static_cast<std::int64_t>(items.size() - offset - count);
  } else if (id != 0) {
    st->snapshots.release(id); // the last page: nothing more to continue from
  }
  answer.items = std::span<const object_ptr>(items).subspan(offset, count);
  answer.resource_version = snapshot->resource_version;
  answer.metadata_only = req.metadata_informer;
  answer.owner = std::move(snapshot);
  return answer;
}

// A list's resourceVersion parameters against the cache's: nullopt when the cache can serve it.
std::optional<status> check_list_version(const read_request& req, const std::string& current) {
  const auto& wanted = req.r.query.resource_version;
  auto wanted_rev = parse_revision(wanted);
  auto current_rev = parse_revision(current);
  if (req.r.query.match == apiserver::resource_version_match::exact) {
    if (wanted_rev && current_rev && *wanted_rev > *current_rev)
      return apiserver::too_large_resource_version(*wanted_rev, *current_rev);
    if (wanted != current)
      return apiserver::expired("too old resource version: " + wanted + " (" + current +
                                "); the cache serves only its current state");
    return std::nullopt;
  }
  if (wanted_rev && current_rev && *wanted_rev > *current_rev)
    return apiserver::too_large_resource_version(*wanted_rev, *current_rev);
  return std::nullopt;
}

// Takes one of `bound` slots (0: unbounded); false when all are taken.
bool take_slot(std::atomic<std::size_t>& taken, std::size_t bound) {
  if (bound == 0) {
    ++taken;
    return true;
  }
  auto now = taken.load();
  do {
    if (now >= bound)
      return false;
  } while (!taken.compare_exchange_weak(now, now + 1));
  return true;
}

// What an answer's bytes are written from, kept together with an unpaged list's slot: the slot is
// released once the list has been written, not when the actor that made it is gone.
std::shared_ptr<const void> held_with_slot(std::shared_ptr<const void> owner,
                                           std::shared_ptr<void> slot) {
  if (!slot)
    return owner;
  struct owner_and_slot {
    std::shared_ptr<const void> owner;
    std::shared_ptr<void> slot;
  };
  return std::make_shared<const owner_and_slot>(owner_and_slot{std::move(owner), std::move(slot)});
}

// One request to the cache: the items and their resourceVersion come from one snapshot of each
// informer, taken once the informers have synced. `slot` (an unpaged list's) goes with the answer:
// held until a list is written, released before a failure is answered, so that a client that
// has its answer finds the slot free.
void serve_list(const state_ptr& st, read_request req, apiserver::list_done done,
                std::shared_ptr<void> slot) {
  // Shared by both handlers; the one that answers takes the slot out.
  auto held_slot = std::make_shared<std::shared_ptr<void>>(std::move(slot));
  foreign_thread_scope any_thread; // called on an I/O thread
  st->system.spawn([st, req = std::move(req), done = std::move(done),
                    held_slot](caf::event_based_actor* self) {
    // Fields are matched here: the cache answers field selectors only from its indexes.
    list_options options;
    if (req.info().scope == resource_scope::namespaced)
      options.namespace_ = req.r.namespace_;
    options.labels = req.r.query.labels;
    self->request(st->cache, st->options.cache_timeout, atoms::list_atom::value,
                  cache_list_request{req.kind(), std::move(options)}, atoms::snapshot_atom::value)
        .then(
            [st, req, done, held_slot](versioned_list& listed) {
              if (auto refused = check_list_version(req, listed.resource_version)) {
                held_slot->reset();
                return done(*refused);
              }
              // The reply is ours alone: its items are moved, not copied.
              auto snapshot = std::make_shared<page_snapshot>();
              snapshot->selection = req.r.selection();
              snapshot->resource_version = std::move(listed.resource_version);
              snapshot->items = std::move(listed.items);
              // The cache chose by namespace and labels; what is left to match is the fields.
              if (const auto& fields = req.r.query.fields; !fields.empty())
                std::erase_if(snapshot->items,
                              [&](const object_ptr& obj) { return !fields.matches(*obj); });
              sort_by_key(snapshot->items);
              auto answer = page_answer(st, req, std::move(snapshot), 0, 0);
              answer.owner = held_with_slot(std::move(answer.owner), std::move(*held_slot));
              done(std::move(answer));
            },
            [req, done, held_slot](const caf::error& err) {
              held_slot->reset();
              done(status_of(from_caf_error(err), req));
            });
  });
}

// A later page: from the snapshot the first page kept, without asking the cache.
apiserver::list_outcome serve_continue(const state_ptr& st, const read_request& req) {
  auto token = apiserver::continue_token::decode(req.r.query.continue_token);
  if (!token || !token->snapshot)
    return apiserver::bad_request(
        "invalid continue token: " +
        (token ? std::string("it names no snapshot of this server") : token.err().message));
  auto snapshot = st->snapshots.find(*token->snapshot, continue_snapshots::clock::now());
  if (!snapshot)
    return apiserver::continue_too_old();
  if (snapshot->selection != req.r.selection())
    return apiserver::bad_request(
        "the continue token belongs to another list (path or selectors differ)");
  // Items are in key order: the page starts at the first key not before the token's start.
  const auto& items = snapshot->items;
  auto start = std::partition_point(items.begin(), items.end(), [&](const object_ptr& item) {
    return item->key() < token->start_key;
  });
  return page_answer(st, req, snapshot, *token->snapshot,
                     static_cast<std::size_t>(start - items.begin()));
}

void serve_get(const state_ptr& st, read_request req, apiserver::get_done done) {
  foreign_thread_scope any_thread; // called on an I/O thread
  st->system.spawn(
      [st, req = std::move(req), done = std::move(done)](caf::event_based_actor* self) {
        // The cache answers once the kind's informers have synced.
        self->request(st->cache, st->options.cache_timeout, atoms::get_atom::value,
                      cache_get_request{req.kind(), req.r.namespace_, req.r.name})
            .then(
                [done, req](const object_ptr& obj) {
                  done(apiserver::object_answer{obj, req.metadata_informer});
                },
                [req, done](const caf::error& err) { done(status_of(from_caf_error(err), req)); });
      });
}

// What one watch knows; shared by its actor's handlers and its exit functor.
struct watch_context {
  state_ptr st;
  read_request req;
  std::optional<apiserver::watch_shaper> shaper;      // over req.r
  std::shared_ptr<apiserver::http_exchange> exchange; // until the stream is opened
  std::shared_ptr<apiserver::http_stream> stream;
  // Resumed from an integer resourceVersion N: the informers replay their changes after N
  // instead of their stores.
  bool resume = false;
  // sendInitialEvents=false from "" or "0": each informer sends only what changes after its
  // subscription, none of its store.
  bool from_now = false;
  struct informer_subscription {
    informer_actor informer;
    subscription_id id = 0;
  };
  std::vector<informer_subscription> informers;
  std::size_t synced_left = 0; // informers whose initial deltas are not all in yet
  bool started = false;        // the initial events are out: deltas are written as they come
  // Until every informer's initial deltas are in: those deltas. They go out in resourceVersion
  // order; the live ones, merged across the informers, as soon as none can precede them.
  std::vector<delta> held_initial;
  // Then those deltas in resourceVersion order, written as the client reads them.
  std::vector<delta> initial_sorted;
  std::size_t initial_sent = 0;
  live_event_merge live;
  bool merge_poll_scheduled = false;
  std::set<live_event_merge::lane_key> asking; // lanes with a progress request outstanding
  std::vector<std::string> listed_versions;    // each informer's, read before it was subscribed
  std::string newest;                          // the newest resourceVersion sent
  std::size_t progress_left = 0;               // progress answers a bookmark waits for
  std::vector<std::string> progress_versions;
  bool done = false;

  void note_version(std::string_view rv) {
    auto a = parse_revision(rv);
    auto b = parse_revision(newest);
    if (newest.empty() || (a && b && *a > *b))
      newest = std::string(rv);
  }

  // The watch event for one delta, if the client is to see one: the selection decides it as
  // the API server's watch cache does (watch_shaper.hpp).
  apiserver::byte_pieces event_for(const delta& d) {
    if (d.type == delta_type::sync)
      return {};
    const event_type type = d.type == delta_type::added     ? event_type::added
                            : d.type == delta_type::updated ? event_type::modified
                                                            : event_type::deleted;
    auto line = shaper->change_line(type, d.object, d.old_object);
    if (!line.empty())
      note_version(d.object->meta().resource_version);
    return line;
  }

  std::string bookmark(const std::string& resource_version, bool initial_events_end) const {
    return shaper->bookmark_line(resource_version, initial_events_end);
  }

  // What the initial events add up to: the newest of the informers' versions read before they
  // were subscribed and of the events sent, so an empty selection still gets one. With several
  // informers, the oldest informer's version (a later one could skip a quiet informer's events).
  std::string snapshot_version() const {
    if (listed_versions.size() > 1)
      return oldest_revision(listed_versions);
    std::string out = newest;
    for (const auto& rv : listed_versions) {
      auto a = parse_revision(rv);
      auto b = parse_revision(out);
      if (out.empty() || (a && b && *a > *b))
        out = rv;
    }
    return out;
  }
};

std::string watch_error_line(const status& s) {
  return apiserver::watch_event_line(event_type::error, apiserver::status_json(s));
}

// Opens the watch's stream on the first sign that the subscription exists, so that a failed
// subscribe can still be answered with a plain Status.
void open_stream(watch_actor::pointer self, const std::shared_ptr<watch_context>& ctx) {
  if (ctx->stream || ctx->done)
    return;
  ctx->stream = ctx->exchange->stream(200, "application/json");
  ctx->exchange.reset();
  ctx->stream->set_overflow_message(
      watch_error_line(apiserver::expired("the watch was dropped: its client read too slowly")));
  ctx->stream->on_end([me = caf::actor_cast<caf::actor>(self)](apiserver::stream_end) {
    caf::anon_send_exit(me, caf::exit_reason::user_shutdown);
  });
}

// Answers a failed subscription: a Status before the stream is open, an ERROR event after.
void fail_watch(watch_actor::pointer self, const std::shared_ptr<watch_context>& ctx,
                const status& s) {
  if (ctx->exchange)
    ctx->exchange->respond(status_reply(s));
  else if (ctx->stream)
    ctx->stream->write(watch_error_line(s));
  self->quit();
}

// Writes `deltas`' events; false when the watch ended (its client is gone or too slow).
bool write_deltas(watch_actor::pointer self, const std::shared_ptr<watch_context>& ctx,
                  const std::vector<delta>& deltas) {
  open_stream(self, ctx);
  apiserver::byte_pieces out; // the stored objects' own bytes, never copied
  for (const auto& d : deltas)
    out.append(ctx->event_for(d));
  if (!out.empty() && !ctx->stream->write(std::move(out))) {
    self->quit();
    return false;
  }
  return true;
}

// Writes the live deltas no informer can precede any more; while some are held, asks the quiet
// informers how far they are every merge_poll_interval.
void write_live(watch_actor::pointer self, const std::shared_ptr<watch_context>& ctx) {
  if (!write_deltas(self, ctx, ctx->live.take_ready()))
    return;
  // An informer that makes no progress (its upstream watch keeps failing) must not make the
  // others' events pile up here: past the bound the watch ends cleanly, and the client watches
  // again from the last event it got, which nothing unsent precedes.
  if (ctx->live.held() > ctx->st->options.merge_hold_limit) {
    ctx->stream->close();
    self->quit();
    return;
  }
  if (ctx->live.holding() && !ctx->merge_poll_scheduled) {
    ctx->merge_poll_scheduled = true;
    self->delayed_send(caf::actor_cast<watch_actor>(self), ctx->st->options.merge_poll_interval,
                       watch_merge_atom::value);
  }
}

// Asks the informers that hold nothing back for their progress (a quiet one moves on by its
// watch's bookmarks), then writes what that releases.
void poll_merge(watch_actor::pointer self, const std::shared_ptr<watch_context>& ctx) {
  ctx->merge_poll_scheduled = false;
  if (!ctx->live.holding())
    return;
  for (auto lane : ctx->live.lanes_to_ask())
    for (const auto& sub : ctx->informers)
      if (sub.informer.id() == lane && ctx->asking.insert(lane).second) // one request at a time
        self->request(sub.informer, ctx->st->options.cache_timeout, atoms::progress_atom::value,
                      sub.id)
            .then(
                [self, ctx, lane](std::string& rv) {
                  ctx->asking.erase(lane);
                  ctx->live.note_progress(lane, rv);
                  if (!ctx->done)
                    write_live(self, ctx);
                },
                [ctx, lane](const caf::error&) { ctx->asking.erase(lane); });
  write_live(self, ctx); // schedules the next poll while anything is held
}

// Writes the initial events while less than half the stream's bound waits to be written, so
// that however many there are, none is dropped for it: they go at the client's pace, as the API
// server writes a watch's initial events as its client reads them (the bound is for live events
// a slow client lets pile up). Then the bookmark that ends them, when asked for, and the live
// deltas that came meanwhile.
void write_initial(watch_actor::pointer self, const std::shared_ptr<watch_context>& ctx) {
  open_stream(self, ctx);
  const std::size_t budget = ctx->stream->buffer_limit() / 2;
  const auto& pending = ctx->initial_sorted;
  while (ctx->initial_sent < pending.size()) {
    if (ctx->stream->buffered_bytes() >= budget) {
      self->delayed_send(caf::actor_cast<watch_actor>(self), initial_events_poll,
                         watch_initial_atom::value);
      return;
    }
    apiserver::byte_pieces out;
    while (ctx->initial_sent < pending.size() && out.size() < budget / 4)
      out.append(ctx->event_for(pending[ctx->initial_sent++]));
    if (!out.empty() && !ctx->stream->write(std::move(out))) {
      self->quit();
      return;
    }
  }
  ctx->initial_sorted = {};
  ctx->started = true;
  if (ctx->req.r.query.allow_bookmarks && ctx->req.r.query.send_initial_events.value_or(false) &&
      !ctx->stream->write(ctx->bookmark(ctx->snapshot_version(), true))) {
    self->quit();
    return;
  }
  write_live(self, ctx);
}

// Every informer's initial deltas are in: they go out in resourceVersion order (a client that
// resumes from any of them has been sent everything below it), then the initial-events-end
// bookmark when asked for, then the live deltas that came meanwhile.
void start_events(watch_actor::pointer self, const std::shared_ptr<watch_context>& ctx) {
  auto initial = std::move(ctx->held_initial);
  // Each version is parsed once; one that is not an integer sorts last.
  std::vector<std::pair<std::uint64_t, std::size_t>> order;
  order.reserve(initial.size());
  for (std::size_t i = 0; i < initial.size(); ++i)
    order.emplace_back(parse_revision(initial[i].object->meta().resource_version)
                           .value_or(std::numeric_limits<std::uint64_t>::max()),
                       i);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  ctx->initial_sorted.reserve(initial.size());
  for (const auto& [rv, i] : order)
    ctx->initial_sorted.push_back(std::move(initial[i]));
  write_initial(self, ctx);
}

// The informers a watch in `ns` needs, as the cache routes a read: across all namespaces every
// one; in one namespace its own informer, else the all-namespaces one. (A watch in one namespace
// then never waits for another namespace's informer to move on.)
informer_set informers_for(const informer_set& all, const std::string& ns) {
  if (ns.empty())
    return all;
  informer_set out;
  for (const auto& handle : all)
    if (handle.namespace_ == ns)
      out.push_back(handle);
  if (out.empty())
    for (const auto& handle : all)
      if (handle.namespace_.empty())
        out.push_back(handle);
  return out;
}

// Subscribes to each of the kind's informers, after its first list: without resume_from they
// send their stores, with it (a watch resumed from N) every change after N, and an N older than
// an informer's change window is refused (410 Expired). Deltas are held until every informer's
// initial deltas are in, so a refusal is a plain Status. An informer that terminates ends the
// watch cleanly, as the API server ends its watches when its watch cache is re-initialised: the
// client watches again from its last resourceVersion, against the replacement.
void subscribe_to_informers(watch_actor::pointer self, std::shared_ptr<watch_context> ctx,
                            subscription_options options) {
  auto timeout = ctx->st->options.cache_timeout;
  if (ctx->resume)
    options.resume_from = ctx->req.r.query.resource_version;
  self->request(ctx->st->cache, timeout, atoms::get_informer_atom::value, ctx->req.kind())
      .then(
          [self, ctx, timeout, options](const informer_set& all) {
            const informer_set informers = informers_for(all, ctx->req.r.namespace_);
            if (informers.empty()) { // nothing cached for the kind yet: nothing to report
              start_events(self, ctx);
              return;
            }
            ctx->synced_left = informers.size();
            auto failed = [self, ctx](const caf::error& err) {
              if (!ctx->done)
                fail_watch(self, ctx, status_of(from_caf_error(err), ctx->req));
            };
            for (const auto& handle : informers) {
              auto informer = handle.informer;
              self->monitor(informer);
              ctx->live.add_lane(informer.id());
              auto subscribe = [self, ctx, timeout, options, informer,
                                failed](const informer_stats& stats) {
                ctx->listed_versions.push_back(stats.resource_version);
                // Its live deltas come after what it had then.
                ctx->live.note_progress(informer.id(), stats.resource_version);
                subscription_options mine = options;
                mine.from_now = ctx->from_now; // changes after the subscribe, not the store
                self->request(informer, timeout, atoms::subscribe_atom::value,
                              caf::actor_cast<handler_actor>(self), std::move(mine))
                    .then(
                        [ctx, informer](subscription_id id) {
                          ctx->informers.push_back({informer, id});
                        },
                        failed);
              };
              // Subscribing after the informer's first list gives it a window to answer from.
              self->request(informer, timeout, atoms::wait_sync_atom::value)
                  .then(
                      [self, informer, timeout, subscribe, failed](bool) {
                        self->request(informer, timeout, atoms::stats_atom::value)
                            .then(subscribe, failed);
                      },
                      failed);
            }
          },
          [self, ctx](const caf::error& err) {
            fail_watch(self, ctx, status_of(from_caf_error(err), ctx->req));
          });
}

// A periodic bookmark (allowWatchBookmarks): each informer is asked for the resourceVersion up
// to which it has delivered everything; when all have one, the oldest goes out, so a quiet
// selection's watch stays resumable.
void request_bookmark(watch_actor::pointer self, const std::shared_ptr<watch_context>& ctx) {
  if (!ctx->started || ctx->progress_left > 0 || ctx->informers.empty())
    return;
  ctx->progress_left = ctx->informers.size();
  ctx->progress_versions.clear();
  for (const auto& sub : ctx->informers)
    self->request(sub.informer, ctx->st->options.cache_timeout, atoms::progress_atom::value, sub.id)
        .then(
            [self, ctx, lane = sub.informer.id()](std::string& rv) {
              ctx->live.note_progress(lane, rv);
              ctx->progress_versions.push_back(std::move(rv));
              if (--ctx->progress_left > 0 || ctx->done)
                return;
              // An informer with deltas still queued has no safe version yet: next time.
              for (const auto& v : ctx->progress_versions)
                if (v.empty())
                  return;
              // Held live deltas at or below the bookmark go out before it.
              write_live(self, ctx);
              if (ctx->done)
                return;
              if (!ctx->stream->write(
                      ctx->bookmark(oldest_revision(ctx->progress_versions), false)))
                self->quit();
            },
            [ctx](const caf::error&) { ctx->progress_left = 0; });
}

// An informer's batch: its initial deltas are held until every informer's are in, its live ones
// go out as soon as no other informer can precede them. Acknowledged at once: held deltas are
// bounded (the initial ones by the store, the live ones by merge_hold_limit) and written ones by
// the stream.
void take_deltas(watch_actor::pointer self, const std::shared_ptr<watch_context>& ctx,
                 subscription_id id, delta_batch& batch) {
  const auto& sender = self->current_sender();
  caf::anon_send(caf::actor_cast<caf::actor>(sender), atoms::ack_atom::value, id,
                 static_cast<std::uint64_t>(batch.size()));
  const live_event_merge::lane_key lane = sender ? sender->id() : 0;
  for (auto& d : batch) {
    if (d.initial_list)
      ctx->held_initial.push_back(std::move(d));
    else
      ctx->live.push(lane, std::move(d));
  }
  if (ctx->started)
    write_live(self, ctx);
}

watch_actor::behavior_type watch_behavior(watch_actor::pointer self,
                                          std::shared_ptr<watch_context> ctx) {
  // Runs after the actor's state is gone: only `ctx` may be used here.
  self->attach_functor([ctx] {
    ctx->done = true;
    --ctx->st->open_watches;
    for (const auto& sub : ctx->informers)
      caf::anon_send(sub.informer, atoms::unsubscribe_atom::value, sub.id);
    if (ctx->stream)
      ctx->stream->close();
  });
  self->set_down_handler([self, ctx](const caf::down_msg&) {
    // Only informers are monitored: end cleanly (see subscribe_to_informers).
    if (ctx->stream)
      ctx->stream->close();
    else if (ctx->exchange)
      ctx->exchange->respond(status_reply(apiserver::make_failure(
          503, "ServiceUnavailable", "the cache restarted the kind's informer; watch again")));
    self->quit();
  });

  subscription_options options;
  options.name = "read-api watch " + ctx->req.r.selection();
  // No coalescing: a merged delta would move a newer resourceVersion ahead of older ones. The
  // stream's own bound drops a client that reads too slowly, and deltas are acknowledged as
  // soon as they are written to it.
  options.queue_bound = std::numeric_limits<std::size_t>::max();
  // The state before a change is read only to send an object that left the selection (its
  // namespace cannot change): without selectors, none is kept while deltas wait.
  if (ctx->req.r.selects_by_content())
    options.old_objects = {old_object_policy::keep::selected, ctx->req.r.query.labels,
                           ctx->req.r.query.fields};
  else
    options.old_objects.which = old_object_policy::keep::none;
  subscribe_to_informers(self, ctx, std::move(options));

  // timeoutSeconds=0 (or none) means the server's default, as the API server reads it.
  const auto& timeout = ctx->req.r.query.timeout_seconds;
  auto seconds = timeout && *timeout > 0 ? std::chrono::seconds(*timeout)
                                         : ctx->st->options.default_watch_timeout;
  self->delayed_send(caf::actor_cast<watch_actor>(self), seconds, watch_timeout_atom::value);
  if (ctx->req.r.query.allow_bookmarks)
    self->delayed_send(caf::actor_cast<watch_actor>(self), ctx->st->options.bookmark_interval,
                       watch_bookmark_atom::value);

  return {
      [self, ctx](atoms::deliver_atom, subscription_id id, delta_batch& batch) {
        take_deltas(self, ctx, id, batch);
      },
      [self, ctx](atoms::synced_atom, subscription_id) {
        if (!ctx->started && ctx->synced_left > 0 && --ctx->synced_left == 0)
          start_events(self, ctx);
      },
      [self, ctx](watch_merge_atom) { poll_merge(self, ctx); },
      [self, ctx](watch_initial_atom) {
        if (!ctx->done && !ctx->started)
          write_initial(self, ctx);
      },
      [self, ctx](watch_bookmark_atom) {
        request_bookmark(self, ctx);
        self->delayed_send(caf::actor_cast<watch_actor>(self), ctx->st->options.bookmark_interval,
                           watch_bookmark_atom::value);
      },
      [self, ctx](watch_timeout_atom) {
        if (ctx->stream)
          ctx->stream->close();
        else if (ctx->exchange)
          ctx->exchange->respond(status_reply(
              apiserver::make_failure(504, "Timeout", "the watch did not start in time")));
        self->quit();
      },
  };
}

void serve_watch(const state_ptr& st, read_request req,
                 std::shared_ptr<apiserver::http_exchange> exchange) {
  auto ctx = std::make_shared<watch_context>();
  ctx->st = st;
  ctx->exchange = std::move(exchange);
  const auto& query = req.r.query;
  const auto& rv = query.resource_version;
  const bool initial_events = query.send_initial_events.value_or(false);
  // From an integer N without initial events: the client holds the state at N. At "" or "0",
  // or a version that is not an integer, it gets the current state first.
  ctx->resume = !initial_events && rv != "0" && parse_revision(rv).has_value();
  // sendInitialEvents=false from "" or "0": it starts now, with no initial state.
  ctx->from_now = query.send_initial_events == false && !ctx->resume;
  ctx->req = std::move(req);
  ctx->shaper.emplace(ctx->req.r, ctx->req.metadata_informer);
  foreign_thread_scope any_thread; // called on an I/O thread
  st->system.spawn(watch_behavior, std::move(ctx));
}

// Which configured informer can answer the shape asked for: a form the configuration did not ask
// for is refused (406), never fetched.
std::optional<status> choose_form(const read_api_options& options, read_request& req) {
  const auto& r = req.r;
  read_api_options::stored_forms forms;
  if (auto it = options.forms.find(r.info.gvr.to_string()); it != options.forms.end())
    forms = it->second;
  const bool needs_full = r.shape == apiserver::response_shape::object ||
                          (r.shape == apiserver::response_shape::table &&
                           r.include == apiserver::include_object::object);
  if (needs_full && !forms.full)
    return apiserver::make_failure(406, "NotAcceptable",
                                   r.info.gvr.resource +
                                       " are cached as metadata only: ask for "
                                       "application/json;as=PartialObjectMetadata" +
                                       (r.verb == apiserver::request_verb::list ? "List" : "") +
                                       ";g=meta.k8s.io;v=v1 (or a Table)");
  // Metadata and tables come from the metadata-only informer when there is one: nothing to cut.
  req.metadata_informer = !needs_full && forms.metadata;
  if (!forms.full && !forms.metadata)
    return apiserver::resource_not_found();
  return std::nullopt;
}

} // namespace

// The read API as the front end's backend: the cache's kinds, admission by api_access, and gets,
// lists and watches answered from the configured informers.
class read_api::backend final : public apiserver::api_backend {
public:
  explicit backend(state_ptr st) : st_(std::move(st)) {}

  std::vector<apiserver::resource_info> resources() const override {
    return st_->options.resources;
  }
  std::string git_version() const override { return st_->options.git_version; }

  // Every answer is counted by verb and code; with api_access, authenticated and authorised
  // first, as the API server does.
  void admit(const apiserver::http_request& request, const apiserver::access_request& wanted,
             std::shared_ptr<apiserver::http_exchange> raw, apiserver::admitted next) override {
    std::shared_ptr<apiserver::http_exchange> exchange = std::make_shared<counting_exchange>(
        std::move(raw), st_, wanted.resource.empty() ? "discovery" : wanted.verb);
    if (!st_->options.access)
      return next(request, std::move(exchange));
    st_->options.access->check(
        request.header("authorization"), wanted,
        [st = st_, request, exchange, next = std::move(next)](const access_decision& decision) {
          if (!decision.allowed())
            return exchange->respond(status_reply(
                apiserver::make_failure(decision.code, decision.reason, decision.message)));
          std::shared_lock lock(st->admission_mutex);
          if (!st->closed)
            next(request, exchange);
        });
  }

  void get(apiserver::resource_request request, apiserver::get_done done) override {
    read_request req{std::move(request)};
    if (auto refused = choose_form(st_->options, req))
      return done(*refused);
    serve_get(st_, std::move(req), std::move(done));
  }

  void list(apiserver::resource_request request, apiserver::list_done done) override {
    read_request req{std::move(request)};
    if (auto refused = choose_form(st_->options, req))
      return done(*refused);
    if (!req.r.query.continue_token.empty())
      return done(serve_continue(st_, req));
    if (req.r.query.limit > 0)
      return serve_list(st_, std::move(req), std::move(done), nullptr);
    // An unpaged list holds the whole selection while it is written: a bounded number at once.
    if (!take_slot(st_->unpaged_lists, st_->options.max_unpaged_lists))
      return done(too_many_requests(st_->options, "lists without a limit at once"));
    auto slot = std::shared_ptr<void>(nullptr, [st = st_](void*) { --st->unpaged_lists; });
    serve_list(st_, std::move(req), std::move(done), std::move(slot));
  }

  void watch(apiserver::resource_request request,
             std::shared_ptr<apiserver::http_exchange> exchange) override {
    read_request req{std::move(request)};
    if (auto refused = choose_form(st_->options, req))
      return exchange->respond(status_reply(*refused));
    // Counted until the watch's actor ends (watch_behavior).
    if (!take_slot(st_->open_watches, st_->options.max_watches))
      return exchange->respond(status_reply(too_many_requests(st_->options, "open watches")));
    serve_watch(st_, std::move(req), std::move(exchange));
  }

private:
  state_ptr st_;
};

apiserver::resource_info served_resource(const group_version_resource& resource, std::string kind,
                                         resource_scope scope) {
  apiserver::resource_info info;
  info.gvr = resource;
  info.singular = kind;
  std::transform(info.singular.begin(), info.singular.end(), info.singular.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  info.kind = std::move(kind);
  info.scope = scope;
  info.verbs = {"get", "list", "watch"};
  apiserver::add_builtin_field_labels(
      info); // a field selector the server would refuse is refused here
  return info;
}

read_api::read_api(caf::actor_system& system, cache_actor cache, read_api_options options)
    : state_(std::make_shared<state>(system, std::move(cache), std::move(options))) {
  // Served read-only, without subresources.
  for (auto& info : state_->options.resources) {
    info.verbs = {"get", "list", "watch"};
    info.status_subresource = false;
  }
  backend_ = std::make_unique<backend>(state_);
  front_ = std::make_unique<apiserver::api_frontend>(*backend_);
}

read_api::~read_api() {
  std::unique_lock lock(state_->admission_mutex);
  state_->closed = true;
}

void read_api::attach(apiserver::http_server& server) {
  for (const char* prefix : {"/api", "/version", "/openapi"})
    server.add_route(prefix, [this](const apiserver::http_request& request,
                                    std::shared_ptr<apiserver::http_exchange> exchange) {
      handle(request, std::move(exchange));
    });
}

read_api_stats read_api::stats() const {
  read_api_stats out;
  out.open_watches = state_->open_watches;
  out.unpaged_lists = state_->unpaged_lists;
  std::lock_guard lock(state_->counts_mutex);
  out.requests = state_->requests;
  return out;
}

void read_api::handle(const apiserver::http_request& request,
                      std::shared_ptr<apiserver::http_exchange> exchange) {
  front_->handle(request, std::move(exchange));
}

} // namespace kinformer::service
