#pragma once
// An Event recorder (events.k8s.io/v1), as client-go's tools/events: a reconciler records what
// it did to an object; an actor writes the Events in the background, one write at a time, so a
// reconcile never waits on them.
//
// Repeats of an Event become a series (event_series.hpp). A write that may pass later (transport
// failure, 429, 5xx) is sent again after `retry_delay`, up to `max_attempts` times; a refused
// one (other 4xx) is given up and counted; AlreadyExists counts as written. At most
// `max_pending` writes wait: beyond that, occurrences are dropped and counted (client-go drops
// beyond 1000 queued).

#include "actors/controller/event_series.hpp"
#include "actors/interfaces.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string_view>

namespace kinformer {

class api_client;

struct event_recorder_options {
  event_series::timings series;
  std::chrono::milliseconds flush_every{std::chrono::seconds(60)}; // how often series are checked
  std::chrono::milliseconds retry_delay{std::chrono::seconds(10)};
  int max_attempts = 12;
  std::size_t max_pending = 1000;
};

event_recorder_actor spawn_event_recorder(caf::actor_system& system,
                                          std::shared_ptr<api_client> client, event_source source,
                                          event_recorder_options options = {});

// What a reconciler holds: records Events without waiting (a message to the recorder actor).
class event_recorder {
public:
  explicit event_recorder(event_recorder_actor recorder) : recorder_(std::move(recorder)) {}

  void record(event_record e) const;
  void normal(const object& regarding, std::string_view reason, std::string_view action,
              std::string_view note) const;
  void warning(const object& regarding, std::string_view reason, std::string_view action,
               std::string_view note) const;

  // The recorder actor: ask it for stats_atom, or wait_sync_atom (replies once nothing pends).
  const event_recorder_actor& actor() const { return recorder_; }

private:
  event_recorder_actor recorder_;
};

} // namespace kinformer
