#include "tests/bench/watch_tap.hpp"

#include <string>

namespace kinformer::bench {

status_result watch_tap::start(sim::storage& store, const group_version_resource& gvr,
                               bool metadata_only, std::uint64_t sample_every) {
  sample_every_ = sample_every == 0 ? 1 : sample_every;
  sim::watch_request request;
  request.gvr = gvr;
  request.resource_version = std::to_string(store.current_resource_version());
  request.metadata_only = metadata_only;
  request.allow_bookmarks = false;
  auto watching = store.watch(request, [this](const sim::watch_message& message) {
    if (message.type == event_type::bookmark || !message.line)
      return;
    if (events_ % sample_every_ == 0)
      samples_.push_back(message.line); // shares the storage's line: no copy
    ++events_;
    bytes_ += message.line->size();
  });
  if (!watching)
    return make_error(errc::status, watching.failure().describe());
  handle_ = std::move(watching).value();
  return ok_v;
}

} // namespace kinformer::bench
