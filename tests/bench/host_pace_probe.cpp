#include "tests/bench/host_pace_probe.hpp"

#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
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

// A chain of threads, each blocked on its eventfd until the one before it (or the ticker) adds
// to it, then adding what it read to the next. The last one notes when each tick reached it.
class relay_chain {
public:
  relay_chain(unsigned threads, std::uint64_t ticks) : arrived_(ticks) {
    for (unsigned i = 0; i < threads; ++i) {
      int fd = ::eventfd(0, EFD_CLOEXEC);
      if (fd < 0) {
        failure_ = std::strerror(errno);
        break;
      }
      fds_.push_back(fd);
    }
    if (failure_.empty())
      for (unsigned i = 0; i < threads; ++i)
        threads_.emplace_back([this, i] { relay(i); });
  }
  ~relay_chain() {
    finish();
    for (int fd : fds_)
      ::close(fd);
  }
  relay_chain(const relay_chain&) = delete;
  relay_chain& operator=(const relay_chain&) = delete;

  const std::string& failure() const { return failure_; }
  bool empty() const { return threads_.empty(); }

  // The ticker: one more tick enters the chain.
  void tick() { add(fds_.front(), 1); }

  // Stops the chain behind the ticks already in it, and gives when each of them reached its end.
  std::vector<clock::time_point> finish() {
    if (threads_.empty())
      return {};
    add(fds_.front(), stop_mark);
    for (auto& thread : threads_)
      thread.join();
    threads_.clear();
    arrived_.resize(count_);
    return std::move(arrived_);
  }

private:
  // Added to a count, it stops each thread once it has passed the count on. Ticks stay below it.
  static constexpr std::uint64_t stop_mark = std::uint64_t{1} << 40;

  static void add(int fd, std::uint64_t count) { (void)!::write(fd, &count, sizeof count); }

  void relay(std::size_t index) {
    pthread_setname_np(pthread_self(), "probe-relay"); // tells it apart in perf sched
    for (;;) {
      std::uint64_t count = 0;
      if (::read(fds_[index], &count, sizeof count) != sizeof count)
        return;
      if (index + 1 < fds_.size()) {
        add(fds_[index + 1], count);
      } else {
        const auto now = clock::now(); // ticks that queued up arrive together
        for (std::uint64_t i = 0; i < count % stop_mark && count_ < arrived_.size(); ++i)
          arrived_[count_++] = now;
      }
      if (count >= stop_mark)
        return;
    }
  }

  std::vector<int> fds_;
  std::vector<std::thread> threads_;
  std::vector<clock::time_point> arrived_; // the last thread's alone until finish()
  std::uint64_t count_ = 0;
  std::string failure_;
};

} // namespace

result<host_pace> measure_host_pace(const host_pace_options& options) {
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
  std::vector<clock::time_point> due_at;
  due_at.reserve(options.ticks);
  relay_chain relay(options.relay_threads, options.ticks);
  if (!relay.failure().empty())
    return make_error(errc::io, "cannot make the relay's eventfds: " + relay.failure());
  const auto started = clock::now();
  for (std::uint64_t tick = 0; tick < options.ticks; ++tick) {
    auto due = started + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(
                             double(tick) / options.ticks_per_second));
    std::this_thread::sleep_until(due);
    for (unsigned i = 0; i < options.pages_per_tick; ++i)
      ++memory.data()[any_page(random) * page];
    millis.push_back(std::chrono::duration<double, std::milli>(clock::now() - due).count());
    due_at.push_back(due);
    if (!relay.empty())
      relay.tick();
  }
  auto arrivals = relay.finish();
  std::vector<double> relayed;
  relayed.reserve(arrivals.size());
  for (std::size_t i = 0; i < arrivals.size(); ++i)
    relayed.push_back(std::chrono::duration<double, std::milli>(arrivals[i] - due_at[i]).count());
  host_pace out;
  out.tick = summarize_latencies(std::move(millis));
  out.relayed = summarize_latencies(std::move(relayed));
  return out;
}

} // namespace kinformer::bench
