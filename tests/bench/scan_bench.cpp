// scan_bench: what the informer does to each list item's bytes, alone and in memory, against
// Boost.JSON parsing the same bytes in the same run (the limit informer_bench compares with).
//
//   scan_bench [--pods N] [--pod-bytes B] [--passes P] [--seed S]
//
// Four rates over the same realistic pods, each the best of P passes:
// - scan:       scan_object(), the validation and metadata read (protocol/object_scan.hpp);
// - watch line: scan_watch_line() of {"type":"MODIFIED","object":<the pod>};
// - object:     object::parse_padded(), the scan plus the stored object (its block and index);
// - limit:      Boost.JSON's DOM parse, each document into its own monotonic_resource.
// The objects of a pass are dropped before the next, so their memory is reused: no I/O and,
// after the first pass, few page faults. informer_bench measures the informer whole; this
// measures the CPU of the per-item code alone, where a change to it shows without the noise of
// sockets, threads and fresh memory.

#include "app/common/allocator_tuning.hpp"
#include "app/kubesim/object_generator.hpp"
#include "protocol/object.hpp"
#include "protocol/object_scan.hpp"
#include "tests/bench/parse_ceiling.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace kinformer;

struct settings {
  std::size_t pods = 20000;
  std::size_t pod_bytes = 3500;
  int passes = 5;
  std::uint64_t seed = 1;
};

bool parse_arguments(int argc, char** argv, settings& out) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc)
      return false;
    const std::string_view text = argv[++i];
    std::uint64_t value = 0;
    auto [end, e] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (e != std::errc() || end != text.data() + text.size() || value == 0)
      return false;
    if (flag == "--pods")
      out.pods = value;
    else if (flag == "--pod-bytes")
      out.pod_bytes = value;
    else if (flag == "--passes")
      out.passes = static_cast<int>(value);
    else if (flag == "--seed")
      out.seed = value;
    else
      return false;
  }
  return true;
}

// Each pod's text, followed by the padding the scan reads ahead (as a list body has the next
// items there), and the same as a watch event line.
std::vector<std::string> padded_pods(const settings& s, bench::json_documents& plain,
                                     std::vector<std::string>& padded_lines) {
  sim::generator_options options;
  options.seed = s.seed;
  options.pod_bytes = s.pod_bytes;
  sim::object_generator generator(options);
  std::vector<std::string> padded;
  for (std::size_t i = 0; i < s.pods; ++i) {
    auto text =
        boost::json::serialize(generator.pod(sim::object_generator::namespace_name(i % 50)));
    plain.push_back(std::make_shared<const std::string>(text));
    padded_lines.push_back(R"({"type":"MODIFIED","object":)" + text + "}" +
                           std::string(scan_padding, ' '));
    text.append(scan_padding, ' ');
    padded.push_back(std::move(text));
  }
  return padded;
}

template <class PerDocument>
double best_seconds(int passes, PerDocument&& run_pass) {
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto started = std::chrono::steady_clock::now();
    run_pass();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (pass == 0 || seconds < best)
      best = seconds;
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  tune_allocator(); // as the informer's programs run
  settings s;
  if (!parse_arguments(argc, argv, s)) {
    std::cerr << "usage: scan_bench [--pods N] [--pod-bytes B] [--passes P] [--seed S]\n";
    return 2;
  }
  bench::json_documents plain;
  std::vector<std::string> padded_lines;
  const auto padded = padded_pods(s, plain, padded_lines);
  std::size_t bytes = 0;
  for (const auto& text : plain)
    bytes += text->size();

  std::size_t failures = 0;
  object_scan scan;
  const double scan_seconds = best_seconds(s.passes, [&] {
    for (const auto& text : padded)
      failures += !scan_object({text.data(), text.size() - scan_padding}, scan).ok();
  });
  watch_line_scan line_scan;
  const double line_seconds = best_seconds(s.passes, [&] {
    for (const auto& line : padded_lines)
      failures += !scan_watch_line({line.data(), line.size() - scan_padding}, line_scan).ok();
  });
  std::vector<object_ptr> objects;
  objects.reserve(padded.size());
  const double object_seconds = best_seconds(s.passes, [&] {
    objects.clear();
    for (const auto& text : padded) {
      auto parsed = object::parse_padded({text.data(), text.size() - scan_padding});
      failures += !parsed.ok();
      if (parsed.ok())
        objects.push_back(std::move(*parsed));
    }
  });
  const auto limit = bench::measure_parse_ceiling(plain, s.passes);
  if (failures > 0 || limit.failures > 0) {
    std::cerr << "scan_bench: " << failures + limit.failures << " documents failed to parse\n";
    return 1;
  }

  auto rate = [&](double seconds) { return bytes / seconds / 1e6; };
  std::printf("scan_bench: %zu pods, %.1f MB, best of %d passes\n", s.pods, bytes / 1e6, s.passes);
  std::printf("  scan_object            %8.1f MB/s  %6.0f ns/pod  %5.2fx the limit\n",
              rate(scan_seconds), scan_seconds / s.pods * 1e9,
              rate(scan_seconds) / rate(limit.seconds));
  std::printf("  scan_watch_line        %8.1f MB/s  %6.0f ns/pod  %5.2fx the limit\n",
              rate(line_seconds), line_seconds / s.pods * 1e9,
              rate(line_seconds) / rate(limit.seconds));
  std::printf("  object::parse_padded   %8.1f MB/s  %6.0f ns/pod  %5.2fx the limit\n",
              rate(object_seconds), object_seconds / s.pods * 1e9,
              rate(object_seconds) / rate(limit.seconds));
  std::printf("  Boost.JSON (the limit) %8.1f MB/s  %6.0f ns/pod\n", rate(limit.seconds),
              limit.seconds / s.pods * 1e9);
  std::printf("{\"pods\":%zu,\"bytes\":%zu,\"scan_mb_per_second\":%.1f,"
              "\"watch_line_mb_per_second\":%.1f,\"object_mb_per_second\":%.1f,"
              "\"limit_mb_per_second\":%.1f}\n",
              s.pods, bytes, rate(scan_seconds), rate(line_seconds), rate(object_seconds),
              rate(limit.seconds));
  return 0;
}
