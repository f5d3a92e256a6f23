#include "actors/controller/event_recorder.hpp"

#include "protocol/http/api_client.hpp"
#include "protocol/resource_writer.hpp"

#include <caf/all.hpp>

#include <deque>

namespace kinformer {
namespace {

using clock = event_series::clock;

const group_version_resource events_resource{"events.k8s.io", "v1", "events"};

// How a write ended, as the I/O thread reports it to the recorder.
enum write_outcome : std::int32_t { written, may_retry, refused, patch_not_found };

write_outcome classify(const result<http_response>& response, event_write::verb verb,
                       std::string& error) {
  if (!response) {
    error = response.err().message;
    return may_retry;
  }
  int code = response->status_code;
  if (code / 100 == 2)
    return written;
  error = "HTTP " + std::to_string(code) + ": " + response->body.substr(0, 200);
  if (code == 409 && verb == event_write::verb::create)
    return written; // AlreadyExists: client-go does not retry it either
  if (code == 404 && verb == event_write::verb::patch_series)
    return patch_not_found;
  if (code == 429 || code / 100 == 5)
    return may_retry;
  return refused;
}

struct pending_write {
  event_write write;
  int attempts = 0;
};

struct recorder_state {
  recorder_state() = default; // not an aggregate (CAF would construct it from the pointer)

  static inline const char* name = "kinformer.event_recorder";

  std::shared_ptr<api_client> client;
  event_recorder_options options;
  std::unique_ptr<event_series> series;
  std::deque<pending_write> queue; // the front one is in flight when `in_flight`
  bool in_flight = false;
  bool retry_armed = false;
  std::uint64_t write_id = 0;
  event_recorder_stats stats;
  std::vector<caf::typed_response_promise<bool>> idle_waiters; // wait_sync until nothing pends
};

using recorder_pointer = event_recorder_actor::stateful_pointer<recorder_state>;

void send_next(recorder_pointer self);

void enqueue(recorder_pointer self, event_write w) {
  auto& st = self->state;
  if (st.queue.size() >= st.options.max_pending) {
    ++st.stats.dropped;
    return;
  }
  st.queue.push_back({std::move(w), 0});
  send_next(self);
}

// Sends the front write unless one is in flight or waiting for its retry.
void send_next(recorder_pointer self) {
  auto& st = self->state;
  if (st.queue.empty()) {
    for (auto& waiter : st.idle_waiters)
      waiter.deliver(true);
    st.idle_waiters.clear();
  }
  if (st.in_flight || st.retry_armed || st.queue.empty())
    return;
  auto& front = st.queue.front();
  ++front.attempts;
  st.in_flight = true;
  write_request request;
  resource_location where{events_resource, front.write.namespace_};
  if (front.write.kind == event_write::verb::create) {
    request.verb = api_verb::create;
    request.target = resource_writer::object_path(where, {});
  } else {
    request.verb = api_verb::patch;
    request.target = resource_writer::object_path(where, front.write.name);
    request.content_type = content_type_of(patch_type::strategic_merge);
  }
  request.body = front.write.body;
  auto id = ++st.write_id;
  auto verb = front.write.kind;
  event_recorder_actor me = self;
  st.client->write(request, [me, id, verb](result<http_response> response) {
    std::string error;
    auto outcome = classify(response, verb, error);
    caf::anon_send(me, atoms::written_atom::value, id, static_cast<std::int32_t>(outcome),
                   std::move(error));
  });
}

void on_written(recorder_pointer self, std::uint64_t id, std::int32_t outcome, std::string& error) {
  auto& st = self->state;
  if (!st.in_flight || id != st.write_id)
    return;
  st.in_flight = false;
  if (outcome != written)
    st.stats.last_error = std::move(error);
  auto done = std::move(st.queue.front());
  st.queue.pop_front();
  switch (outcome) {
  case written:
    ++(done.write.kind == event_write::verb::create ? st.stats.created : st.stats.series_patched);
    break;
  case patch_not_found:
    // The Event expired on the server: create it again, with its series.
    if (auto again = st.series->recreate(done.write))
      st.queue.push_front({std::move(*again), 0});
    break;
  case may_retry:
    if (done.attempts < st.options.max_attempts) {
      ++st.stats.retried;
      st.queue.push_front(std::move(done));
      st.retry_armed = true;
      self->delayed_send(self, st.options.retry_delay, atoms::start_atom::value);
      return;
    }
    ++st.stats.failed;
    break;
  default:
    ++st.stats.failed;
  }
  send_next(self);
}

event_recorder_actor::behavior_type recorder_behavior(recorder_pointer self,
                                                      std::shared_ptr<api_client> client,
                                                      event_source source,
                                                      event_recorder_options options) {
  auto& st = self->state;
  st.client = std::move(client);
  st.options = options;
  st.series = std::make_unique<event_series>(std::move(source), options.series);
  self->delayed_send(self, options.flush_every, atoms::timer_atom::value);
  return {
      [self](atoms::record_atom, const event_record& e) {
        auto& st = self->state;
        ++st.stats.recorded;
        if (auto w = st.series->record(e, clock::now()))
          enqueue(self, std::move(*w));
      },
      [self](atoms::written_atom, std::uint64_t id, std::int32_t outcome, std::string& error) {
        on_written(self, id, outcome, error);
      },
      // The retry delay is over: send the write again.
      [self](atoms::start_atom) {
        self->state.retry_armed = false;
        send_next(self);
      },
      // The periodic flush of series (every flush_every).
      [self](atoms::timer_atom) {
        auto& st = self->state;
        for (auto& w : st.series->flush(clock::now()))
          enqueue(self, std::move(w));
        self->delayed_send(self, st.options.flush_every, atoms::timer_atom::value);
      },
      [self](atoms::wait_sync_atom) -> caf::result<bool> {
        auto& st = self->state;
        if (st.queue.empty())
          return true;
        st.idle_waiters.push_back(self->make_response_promise<bool>());
        return st.idle_waiters.back();
      },
      [self](atoms::stats_atom) {
        auto& st = self->state;
        auto out = st.stats;
        out.pending = st.queue.size();
        out.tracked = st.series->tracked();
        return out;
      },
  };
}

} // namespace

event_recorder_actor spawn_event_recorder(caf::actor_system& system,
                                          std::shared_ptr<api_client> client, event_source source,
                                          event_recorder_options options) {
  return system.spawn(recorder_behavior, std::move(client), std::move(source), options);
}

void event_recorder::record(event_record e) const {
  caf::anon_send(recorder_, atoms::record_atom::value, std::move(e));
}

void event_recorder::normal(const object& regarding, std::string_view reason,
                            std::string_view action, std::string_view note) const {
  record({object_reference::of(regarding), event_level::normal, std::string(reason),
          std::string(action), std::string(note)});
}

void event_recorder::warning(const object& regarding, std::string_view reason,
                             std::string_view action, std::string_view note) const {
  record({object_reference::of(regarding), event_level::warning, std::string(reason),
          std::string(action), std::string(note)});
}

} // namespace kinformer
