#pragma once
// A built-in handler that writes one structured line per delta, as JSON or logfmt, to a sink:
//
//   {"ts":"2024-05-01T12:00:00.123Z","handler":"log","event":"delta","type":"updated",
//    "kind":"ConfigMap","namespace":"default","name":"cm-1","resourceVersion":"42",
//    "oldResourceVersion":"41"}
//   ts=2024-05-01T12:00:00.123Z handler=log event=delta type=updated kind=ConfigMap ...
//
// Flags appear only when set (initialList, finalStateUnknown); "object" only with
// include_object. The subscription's synced marker is one line with event "synced". Built on
// spawn_handler's callbacks: acknowledged after the line is written, so a slow sink slows this
// subscription only.

#include "actors/cache_messages.hpp"
#include "actors/interfaces.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace kinformer {

enum class log_format { json, logfmt };

// Receives one line without its newline. Called on the handler's actor thread.
using line_sink = std::function<void(std::string_view line)>;

// Writes each line and a newline to `out`, serialised by a mutex shared by every sink on the
// same stream, so lines of several handlers never interleave.
line_sink stream_sink(std::ostream& out);

struct log_handler_options {
  std::string name = "log";
  log_format format = log_format::json;
  bool include_object = false; // the whole object (JSON format only: logfmt has no nesting)
  line_sink sink;              // empty: stdout
};

// One delta as a line; `now` is the line's timestamp.
std::string format_delta(const delta& d, const log_handler_options& options,
                         std::chrono::system_clock::time_point now);
// The synced marker as a line.
std::string format_synced(const log_handler_options& options,
                          std::chrono::system_clock::time_point now);

handler_actor spawn_log_handler(caf::actor_system& system, informer_actor informer,
                                log_handler_options options,
                                subscription_options subscription = {});
handler_actor spawn_log_handler(caf::actor_system& system, cache_actor cache, kind_request kind,
                                log_handler_options options,
                                subscription_options subscription = {});

} // namespace kinformer
