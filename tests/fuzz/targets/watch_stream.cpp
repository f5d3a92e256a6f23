// The watch stream: arbitrary bytes, cut into arbitrary chunks, through the line splitter and the
// watch event decoder, as the API client reads a watch.
// Properties: no crash or unbounded allocation; the lines delivered do not depend on where the
// stream was cut; every decoded event has what its type promises; the line scan's fast path (a
// DOM parse, then only what is recorded read) finds what the full walk finds.

#include "protocol/decode.hpp"
#include "protocol/line_splitter.hpp"
#include "protocol/object_scan.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tests/protocol/support/scan_description.hpp"

#include <string>
#include <vector>

using namespace kinformer;
using kinformer::fuzz::require;

namespace {

// scan_watch_line() against scan_watch_line_walking() on the same line.
void check_fast_path(std::string_view line) {
  std::string fast_buffer, walk_buffer;
  watch_line_scan fast, walked;
  auto fast_result = scan_watch_line(padded_copy(fast_buffer, line), fast);
  auto walk_result = scan_watch_line_walking(padded_copy(walk_buffer, line), walked);
  require(fast_result.ok() == walk_result.ok(), "the fast path and the walk disagree on validity");
  if (fast_result.ok())
    require(testing::describe_watch_line(line, fast) == testing::describe_watch_line(line, walked),
            "the fast path reads another line than the walk");
  else
    require(fast_result.err().describe() == walk_result.err().describe() &&
                fast.failed_in_object == walked.failed_in_object,
            "the fast path fails otherwise than the walk");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::fuzz_input input(data, size);
  constexpr std::size_t max_line = 4096; // small, so that oversized lines are explored too

  line_splitter whole(max_line);
  std::vector<std::string> whole_lines;
  (void)whole.feed(input.text(), whole_lines);
  const bool whole_truncated = !whole.finish();

  line_splitter cut(max_line);
  std::vector<std::string> cut_lines;
  for (auto chunk : input.chunks())
    (void)cut.feed(chunk, cut_lines);
  const bool cut_truncated = !cut.finish();

  require(whole_lines == cut_lines, "the lines depend on where the stream was cut");
  require(whole_truncated == cut_truncated, "truncation depends on where the stream was cut");
  require(whole.buffered() == 0 && cut.capacity() <= max_line, "the splitter holds too much");

  for (const auto& line : cut_lines) {
    require(line.size() <= max_line, "a line over the limit was delivered");
    check_fast_path(line);
    auto event = decode_watch_event(line);
    if (!event)
      continue;
    if (event->type == event_type::error) {
      require(event->error.has_value(), "an ERROR event without its Status");
    } else {
      require(event->object != nullptr, "an event without its object");
      const auto& obj = *event->object;
      require(obj.json_text().size() <= line.size(), "an object larger than its line");
      (void)obj.key();
      (void)event->is_initial_events_end();
    }
  }
  return 0;
}
