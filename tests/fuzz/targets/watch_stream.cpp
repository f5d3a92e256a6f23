// The watch stream: arbitrary bytes, cut into arbitrary chunks, through the line splitter and the
// watch event decoder, as the API client reads a watch.
// Properties: no crash or unbounded allocation; the lines delivered do not depend on where the
// stream was cut; every decoded event has what its type promises; the line scan's fast path
// (simdjson's first stage and a grammar check, then only what is recorded read) finds what the
// full walk finds.

#include "protocol/decode.hpp"
#include "protocol/line_splitter.hpp"
#include "protocol/object_scan.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tests/protocol/support/scan_description.hpp"

#include <string>
#include <vector>

using namespace kinformer;
using kinformer::fuzz::require;

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
    if (auto differ = testing::watch_line_scans_differ(line); !differ.empty())
      fuzz::violated(differ.c_str());
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
