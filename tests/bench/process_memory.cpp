#include "tests/bench/process_memory.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace kinformer::bench {

void release_free_heap() {
  malloc_trim(0);
}

std::size_t current_rss_bytes() {
  // statm: size resident shared text lib data dt, all in pages.
  std::ifstream statm("/proc/self/statm");
  std::size_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages))
    return 0;
  return resident_pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<std::size_t>(usage.ru_maxrss) * 1024; // Linux reports kilobytes
}

bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5"; // 5: reset the peak RSS (proc(5))
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

std::size_t peak_rss_since_reset_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      std::size_t kilobytes = 0;
      status >> kilobytes;
      return kilobytes * 1024;
    }
    status.ignore(4096, '\n');
  }
  return 0;
}

} // namespace kinformer::bench
