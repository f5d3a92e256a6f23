#include "app/common/heap_trimmer.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

namespace kinformer {

std::size_t unused_bytes(const heap_usage& usage) {
  return usage.resident_bytes > usage.in_use_bytes ? usage.resident_bytes - usage.in_use_bytes : 0;
}

bool worth_trimming(const heap_usage& usage, std::size_t floor, std::size_t slack) {
  return unused_bytes(usage) > floor + slack;
}

heap_usage current_heap_usage() {
  heap_usage usage;
  const struct mallinfo2 info = ::mallinfo2();
  // Chunks in the heap plus the large blocks glibc maps on their own.
  usage.in_use_bytes = info.uordblks + info.hblkhd;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    unsigned long size_pages = 0, resident_pages = 0;
    if (std::fscanf(statm, "%lu %lu", &size_pages, &resident_pages) == 2)
      usage.resident_bytes = resident_pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::fclose(statm);
  }
  return usage;
}

namespace {
std::atomic<std::uint64_t> trims_released{0};
} // namespace

bool trim_heap() {
  const bool released = ::malloc_trim(0) != 0;
  trims_released += released;
  return released;
}

std::uint64_t heap_trims_total() {
  return trims_released;
}

heap_trimmer::heap_trimmer(options o) : options_(o), thread_([this] { run(); }) {}

heap_trimmer::~heap_trimmer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::uint64_t heap_trimmer::trims() const {
  std::lock_guard lock(mutex_);
  return trims_;
}

void heap_trimmer::run() {
  ::pthread_setname_np(::pthread_self(), "kinformer-trim");
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, options_.interval, [this] { return stopping_; })) {
    lock.unlock();
    bool trimmed = false;
    const heap_usage usage = current_heap_usage();
    if (worth_trimming(usage, floor_, options_.slack)) {
      trimmed = trim_heap();
      floor_ = unused_bytes(current_heap_usage());
    } else {
      // The lowest level seen since: a trim that could give little back (freed chunks still
      // between live ones) must not raise the bar for good once they are reused.
      floor_ = std::min(floor_, unused_bytes(usage));
    }
    lock.lock();
    trims_ += trimmed;
  }
}

} // namespace kinformer
