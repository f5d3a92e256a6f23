#include "tests/bench/host_pace_probe.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace kinformer::bench {

namespace {

using clock = std::chrono::steady_clock;

// An anonymous mapping, unmapped when it goes: the probe's memory never stays in the heap the
// informer's figures come from. Populated at once, then written once a page from user space, as
// the informer's memory was: a VM may charge the first user access to a page the kernel mapped
// (8-14 us a page on session 28's), and the ticks would measure that instead.
class working_set {
public:
  working_set(std::size_t bytes, std::size_t page) : bytes_(bytes) {
    void* mapped = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mapped == MAP_FAILED)
      return;
    data_ = static_cast<char*>(mapped);
    for (std::size_t offset = 0; offset < bytes_; offset += page)
      data_[offset] = 1;
  }
  ~working_set() {
    if (data_)
      ::munmap(data_, bytes_);
  }
  working_set(const working_set&) = delete;
  working_set& operator=(const working_set&) = delete;

  char* data() const { return data_; }

private:
  std::size_t bytes_;
  char* data_ = nullptr;
};

} // namespace

result<latency_percentiles> measure_host_pace(const host_pace_options& options) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t pages = std::max<std::size_t>(1, options.working_set_bytes / page);
  working_set memory(pages * page, page);
  if (!memory.data())
    return make_error(errc::io, "cannot map a working set of " + std::to_string(pages * page) +
                                    " bytes: " + std::strerror(errno));
  std::minstd_rand random(1);
  std::uniform_int_distribution<std::size_t> any_page(0, pages - 1);
  std::vector<double> millis;
  millis.reserve(options.ticks);
  const auto started = clock::now();
  for (std::uint64_t tick = 0; tick < options.ticks; ++tick) {
    auto due = started + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(
                             double(tick) / options.ticks_per_second));
    std::this_thread::sleep_until(due);
    for (unsigned i = 0; i < options.pages_per_tick; ++i)
      ++memory.data()[any_page(random) * page];
    millis.push_back(std::chrono::duration<double, std::milli>(clock::now() - due).count());
  }
  return summarize_latencies(std::move(millis));
}

} // namespace kinformer::bench
