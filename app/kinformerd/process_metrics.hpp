#pragma once
// The standard process metrics (the names every Prometheus client library exports), read from
// /proc on each scrape.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prometheus {
struct MetricFamily;
} // namespace prometheus

namespace kinformer {

struct process_sample {
  double cpu_seconds = 0;        // user + system
  double start_time_seconds = 0; // since the Unix epoch
  std::uint64_t resident_memory_bytes = 0;
  std::uint64_t virtual_memory_bytes = 0;
  std::uint64_t open_fds = 0;
  std::optional<std::uint64_t> max_fds; // absent when unlimited
  // The allocator's view, to tell live heap from memory kept resident (heap_trimmer.hpp).
  std::uint64_t heap_in_use_bytes = 0;
  std::uint64_t heap_trims = 0;
};

// This process, from /proc/self; nullopt when /proc cannot be read (not Linux, no procfs).
std::optional<process_sample> read_process_sample();

// Parses the text of /proc/<pid>/stat and /proc/stat (for btime) into a sample without the fd
// counts; nullopt when either is malformed. Split out so the parsing is testable.
std::optional<process_sample> parse_proc_stat(const std::string& pid_stat,
                                              const std::string& system_stat, long ticks_per_second,
                                              long page_size);

// process_cpu_seconds_total, process_start_time_seconds, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds; and, as Go's go_memstats_*
// beside them, kinformer_heap_in_use_bytes and kinformer_heap_trims_total.
std::vector<prometheus::MetricFamily> process_metric_families(const process_sample& sample);

} // namespace kinformer
