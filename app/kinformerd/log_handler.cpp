#include "app/kinformerd/log_handler.hpp"

#include "app/kinformerd/service_log.hpp"

#include "actors/handler.hpp"

#include <boost/json.hpp>

#include <ctime>
#include <iostream>
#include <map>
#include <mutex>

namespace kinformer {

namespace {

// The fields of a line, in order.
using fields = std::vector<std::pair<std::string_view, std::string>>;

fields delta_fields(const delta& d, const log_handler_options& options,
                    std::chrono::system_clock::time_point now) {
  const auto& meta = d.object->meta();
  fields f{{"ts", service::utc_timestamp(now)},
           {"handler", options.name},
           {"event", "delta"},
           {"type", to_string(d.type)},
           {"kind", std::string(d.object->kind())},
           {"namespace", std::string(meta.namespace_)},
           {"name", std::string(meta.name)},
           {"resourceVersion", std::string(meta.resource_version)}};
  if (d.old_object && d.type != delta_type::deleted)
    f.emplace_back("oldResourceVersion", std::string(d.old_object->meta().resource_version));
  if (d.initial_list)
    f.emplace_back("initialList", "true");
  if (d.final_state_unknown)
    f.emplace_back("finalStateUnknown", "true");
  return f;
}

bool is_flag(std::string_view key) {
  return key == "initialList" || key == "finalStateUnknown";
}

std::string to_json_line(const fields& f, const object* whole) {
  boost::json::object line;
  for (const auto& [key, value] : f) {
    if (is_flag(key))
      line[key] = true;
    else
      line[key] = value;
  }
  auto text = boost::json::serialize(line);
  if (whole) {
    // The object's stored text, spliced in as it is.
    text.pop_back();
    text.append(",\"object\":").append(whole->json_text()).append("}");
  }
  return text;
}

// logfmt: key=value, values quoted as service_log quotes them.
std::string to_logfmt_line(const fields& f) {
  std::string out;
  for (const auto& [key, value] : f) {
    if (!out.empty())
      out += ' ';
    out.append(key).push_back('=');
    out += service::logfmt_value(value);
  }
  return out;
}

std::string to_line(const fields& f, const log_handler_options& options, const object* whole) {
  return options.format == log_format::json ? to_json_line(f, whole) : to_logfmt_line(f);
}

handler_callbacks log_callbacks(log_handler_options options) {
  if (!options.sink)
    options.sink = stream_sink(std::cout);
  auto shared = std::make_shared<const log_handler_options>(std::move(options));
  handler_callbacks cb;
  cb.on_delta = [shared](const delta& d) {
    shared->sink(format_delta(d, *shared, std::chrono::system_clock::now()));
  };
  cb.on_synced = [shared] {
    shared->sink(format_synced(*shared, std::chrono::system_clock::now()));
  };
  return cb;
}

} // namespace

line_sink stream_sink(std::ostream& out) {
  // One mutex per stream, for as long as the process runs (streams such as std::cout do).
  static std::mutex registry_mutex;
  static std::map<const std::ostream*, std::shared_ptr<std::mutex>> stream_mutexes;
  std::shared_ptr<std::mutex> mutex;
  {
    std::lock_guard lock(registry_mutex);
    auto& m = stream_mutexes[&out];
    if (!m)
      m = std::make_shared<std::mutex>();
    mutex = m;
  }
  return [&out, mutex](std::string_view line) {
    std::lock_guard lock(*mutex);
    out << line << '\n';
    out.flush();
  };
}

std::string format_delta(const delta& d, const log_handler_options& options,
                         std::chrono::system_clock::time_point now) {
  const object* whole = options.include_object ? d.object.get() : nullptr;
  return to_line(delta_fields(d, options, now), options, whole);
}

std::string format_synced(const log_handler_options& options,
                          std::chrono::system_clock::time_point now) {
  fields f{{"ts", service::utc_timestamp(now)}, {"handler", options.name}, {"event", "synced"}};
  return to_line(f, options, nullptr);
}

handler_actor spawn_log_handler(caf::actor_system& system, informer_actor informer,
                                log_handler_options options, subscription_options subscription) {
  if (subscription.name.empty())
    subscription.name = options.name;
  return spawn_handler(system, std::move(informer), log_callbacks(std::move(options)),
                       std::move(subscription));
}

handler_actor spawn_log_handler(caf::actor_system& system, cache_actor cache, kind_request kind,
                                log_handler_options options, subscription_options subscription) {
  if (subscription.name.empty())
    subscription.name = options.name;
  return spawn_handler(system, std::move(cache), std::move(kind), log_callbacks(std::move(options)),
                       std::move(subscription));
}

} // namespace kinformer
