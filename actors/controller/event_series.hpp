#pragma once
// What client-go's events/v1 broadcaster (tools/events) decides for each recorded Event, as a
// plain class with the time passed in (its owner, the event recorder actor, serialises calls):
// - the first occurrence of an Event is created;
// - the second isomorphic one (same regarding object, action, reason and reporting controller)
//   turns it into a series (count 2), written as a patch;
// - later ones only count, in memory: the series is written every `refresh_every` and once more
//   when it has been quiet for `finish_after`, after which the next occurrence starts afresh.
// Events.k8s.io/v1 names, namespaces and MicroTime stamps are made as client-go makes them.

#include "protocol/object.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace kinformer {

enum class event_level { normal, warning }; // the Event's type: "Normal" or "Warning"

// The object an Event is about (an ObjectReference).
struct object_reference {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;

  static object_reference of(const object& o);
  auto tie() const { return std::tie(api_version, kind, namespace_, name, uid, resource_version); }
};

struct event_record {
  object_reference regarding;
  event_level level = event_level::normal;
  std::string reason; // UpperCamelCase, why: "ConfigMapCreated"
  std::string action; // UpperCamelCase, what was done: "Create"
  std::string note;   // for people; cut to the API's 1 KiB
};

// Who reports: the reportingController ("example.com/config-map-controller") and this process'
// reportingInstance (a pod name), both at most 128 bytes in the API.
struct event_source {
  std::string controller;
  std::string instance;
};

// One write to the API server: create the Event, or patch its series.
struct event_write {
  enum class verb { create, patch_series };
  verb kind = verb::create;
  std::string namespace_;
  std::string name;
  std::string body; // the Event (create) or a strategic-merge patch of .series
};

class event_series {
public:
  using clock = std::chrono::system_clock;
  using time_point = clock::time_point;

  struct timings {
    std::chrono::seconds finish_after{6 * 60};   // a quiet series is written and forgotten
    std::chrono::seconds refresh_every{30 * 60}; // every series is written again
  };

  explicit event_series(event_source source) : event_series(std::move(source), timings{}) {}
  event_series(event_source source, timings t);

  // An occurrence at `now`: the write it needs now, if any.
  std::optional<event_write> record(const event_record& e, time_point now);
  // What is due at `now`: quiet series written one last time and forgotten, single events past
  // `finish_after` forgotten, and (every `refresh_every`) every live series written again.
  std::vector<event_write> flush(time_point now);
  // A series patch the server answered with NotFound (the Event expired): create it whole.
  std::optional<event_write> recreate(const event_write& failed_patch) const;

  std::size_t tracked() const { return events_.size(); }

private:
  struct tracked_event {
    std::string namespace_;
    std::string name;
    event_record record;
    time_point event_time;
    std::int64_t count = 1; // > 1: a series
    time_point last_observed;
  };
  using key = std::tuple<std::string, std::string, std::string, std::string, std::string,
                         std::string, std::string, std::string, std::string>;
  static key key_of(const event_record& e, const std::string& controller);

  std::string event_json(const tracked_event& e) const;
  static event_write series_patch(const tracked_event& e);

  event_source source_;
  timings timings_;
  time_point last_refresh_{};
  std::map<key, tracked_event> events_;
};

} // namespace kinformer
