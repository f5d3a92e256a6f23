#include "app/kinformerd/process_metrics.hpp"

#include "app/common/heap_trimmer.hpp"

#include <prometheus/metric_family.h>

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kinformer {

namespace {

std::optional<std::string> read_text(const char* path) {
  std::ifstream in(path);
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<double> boot_time_seconds(const std::string& system_stat) {
  std::istringstream lines(system_stat);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("btime ", 0) != 0)
      continue;
    try {
      return std::stod(line.substr(6));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

prometheus::MetricFamily family(std::string name, std::string help, prometheus::MetricType type,
                                double value) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  f.metric.push_back(std::move(m));
  return f;
}

} // namespace

std::optional<process_sample> parse_proc_stat(const std::string& pid_stat,
                                              const std::string& system_stat, long ticks_per_second,
                                              long page_size) {
  if (ticks_per_second <= 0 || page_size <= 0)
    return std::nullopt;
  // The command name (field 2) is in parentheses and may itself contain spaces and ')': the
  // fields that follow start after the last ')'.
  auto close = pid_stat.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  std::istringstream fields(pid_stat.substr(close + 1));
  std::vector<std::string> after_comm; // after_comm[0] is field 3 (state)
  for (std::string f; fields >> f;)
    after_comm.push_back(std::move(f));
  if (after_comm.size() < 22)
    return std::nullopt;
  auto boot = boot_time_seconds(system_stat);
  if (!boot)
    return std::nullopt;
  try {
    auto field = [&](int number) { return std::stoull(after_comm.at(number - 3)); };
    process_sample s;
    s.cpu_seconds = static_cast<double>(field(14) + field(15)) / ticks_per_second;
    s.start_time_seconds = *boot + static_cast<double>(field(22)) / ticks_per_second;
    s.virtual_memory_bytes = field(23);
    s.resident_memory_bytes = field(24) * static_cast<std::uint64_t>(page_size);
    return s;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<process_sample> read_process_sample() {
  auto pid_stat = read_text("/proc/self/stat");
  auto system_stat = read_text("/proc/stat");
  if (!pid_stat || !system_stat)
    return std::nullopt;
  auto sample =
      parse_proc_stat(*pid_stat, *system_stat, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE));
  if (!sample)
    return std::nullopt;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec))
    ++sample->open_fds;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    sample->max_fds = limit.rlim_cur;
  sample->heap_in_use_bytes = current_heap_usage().in_use_bytes;
  sample->heap_trims = heap_trims_total();
  return sample;
}

std::vector<prometheus::MetricFamily> process_metric_families(const process_sample& s) {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  out.push_back(family("process_cpu_seconds_total",
                       "Total user and system CPU time spent in seconds.", MetricType::Counter,
                       s.cpu_seconds));
  out.push_back(family("process_start_time_seconds",
                       "Start time of the process since unix epoch in seconds.", MetricType::Gauge,
                       s.start_time_seconds));
  out.push_back(family("process_resident_memory_bytes", "Resident memory size in bytes.",
                       MetricType::Gauge, static_cast<double>(s.resident_memory_bytes)));
  out.push_back(family("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                       MetricType::Gauge, static_cast<double>(s.virtual_memory_bytes)));
  out.push_back(family("process_open_fds", "Number of open file descriptors.", MetricType::Gauge,
                       static_cast<double>(s.open_fds)));
  if (s.max_fds)
    out.push_back(family("process_max_fds", "Maximum number of open file descriptors.",
                         MetricType::Gauge, static_cast<double>(*s.max_fds)));
  out.push_back(family("kinformer_heap_in_use_bytes",
                       "Heap bytes allocated and not yet freed (glibc mallinfo2); the rest of the "
                       "resident memory is code, stacks and free memory the allocator keeps.",
                       MetricType::Gauge, static_cast<double>(s.heap_in_use_bytes)));
  out.push_back(family("kinformer_heap_trims_total",
                       "Times free heap memory was returned to the system (malloc_trim).",
                       MetricType::Counter, static_cast<double>(s.heap_trims)));
  return out;
}

} // namespace kinformer
