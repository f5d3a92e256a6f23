#include "actors/controller/event_series.hpp"

#include "protocol/micro_time.hpp"

#include <boost/json.hpp>

namespace json = boost::json;

namespace kinformer {
namespace {

constexpr std::size_t max_note_bytes = 1024; // events.k8s.io/v1 validation

// Cut to at most `limit` bytes without splitting a UTF-8 sequence.
std::string cut_utf8(const std::string& text, std::size_t limit) {
  if (text.size() <= limit)
    return text;
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;
  return text.substr(0, end);
}

const char* level_name(event_level level) {
  return level == event_level::warning ? "Warning" : "Normal";
}

json::object reference_json(const object_reference& r) {
  json::object out;
  auto put = [&](const char* field, const std::string& value) {
    if (!value.empty())
      out[field] = value;
  };
  put("apiVersion", r.api_version);
  put("kind", r.kind);
  put("namespace", r.namespace_);
  put("name", r.name);
  put("uid", r.uid);
  put("resourceVersion", r.resource_version);
  return out;
}

char hex_digit(unsigned v) {
  return static_cast<char>(v < 10 ? '0' + v : 'a' + (v - 10));
}

// client-go names an Event "<regarding name>.<unix nanoseconds in hex>".
std::string event_name(const std::string& regarding_name, event_series::time_point t) {
  auto nanos = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  std::string hex;
  do {
    hex.insert(hex.begin(), hex_digit(static_cast<unsigned>(nanos & 0xF)));
    nanos >>= 4;
  } while (nanos != 0);
  return regarding_name + "." + hex;
}

} // namespace

object_reference object_reference::of(const object& o) {
  const auto& m = o.meta();
  return {std::string(o.api_version()), std::string(o.kind()), std::string(m.namespace_),
          std::string(m.name),          std::string(m.uid),    std::string(m.resource_version)};
}

event_series::event_series(event_source source, timings t)
    : source_(std::move(source)), timings_(t) {}

event_series::key event_series::key_of(const event_record& e, const std::string& controller) {
  const auto& r = e.regarding;
  return {e.action,     e.reason, controller, r.api_version,     r.kind,
          r.namespace_, r.name,   r.uid,      r.resource_version};
}

std::optional<event_write> event_series::record(const event_record& e, time_point now) {
  if (last_refresh_ == time_point{})
    last_refresh_ = now;
  auto k = key_of(e, source_.controller);
  if (auto found = events_.find(k); found != events_.end()) {
    auto& tracked = found->second;
    tracked.last_observed = now;
    if (++tracked.count > 2)
      return std::nullopt; // counted; written when the series is refreshed or finished
    return series_patch(tracked);
  }
  tracked_event tracked;
  tracked.namespace_ = e.regarding.namespace_.empty() ? "default" : e.regarding.namespace_;
  tracked.name = event_name(e.regarding.name, now);
  tracked.record = e;
  tracked.record.note = cut_utf8(e.note, max_note_bytes);
  tracked.event_time = now;
  tracked.last_observed = now;
  event_write out{event_write::verb::create, tracked.namespace_, tracked.name, event_json(tracked)};
  events_.emplace(std::move(k), std::move(tracked));
  return out;
}

std::vector<event_write> event_series::flush(time_point now) {
  std::vector<event_write> out;
  bool refresh = now - last_refresh_ >= timings_.refresh_every;
  if (refresh)
    last_refresh_ = now;
  for (auto it = events_.begin(); it != events_.end();) {
    const auto& e = it->second;
    bool quiet = now - e.last_observed >= timings_.finish_after;
    if (e.count > 1 && (quiet || refresh))
      out.push_back(series_patch(e));
    it = quiet ? events_.erase(it) : std::next(it);
  }
  return out;
}

std::optional<event_write> event_series::recreate(const event_write& failed_patch) const {
  for (const auto& [k, e] : events_)
    if (e.namespace_ == failed_patch.namespace_ && e.name == failed_patch.name)
      return event_write{event_write::verb::create, e.namespace_, e.name, event_json(e)};
  return std::nullopt;
}

std::string event_series::event_json(const tracked_event& e) const {
  json::object event{{"apiVersion", "events.k8s.io/v1"},
                     {"kind", "Event"},
                     {"metadata", {{"name", e.name}, {"namespace", e.namespace_}}},
                     {"eventTime", micro_time(e.event_time)},
                     {"reportingController", source_.controller},
                     {"reportingInstance", source_.instance},
                     {"action", e.record.action},
                     {"reason", e.record.reason},
                     {"regarding", reference_json(e.record.regarding)},
                     {"note", e.record.note},
                     {"type", level_name(e.record.level)}};
  if (e.count > 1)
    event["series"] = {{"count", e.count}, {"lastObservedTime", micro_time(e.last_observed)}};
  return json::serialize(event);
}

event_write event_series::series_patch(const tracked_event& e) {
  json::object patch{
      {"series", {{"count", e.count}, {"lastObservedTime", micro_time(e.last_observed)}}}};
  return {event_write::verb::patch_series, e.namespace_, e.name, json::serialize(patch)};
}

} // namespace kinformer
