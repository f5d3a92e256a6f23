#include "app/common/heap_trimmer.hpp"

#include <cstdio>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

namespace kinformer {

bool worth_trimming(const heap_usage& usage, std::size_t slack) {
  if (usage.resident_bytes <= usage.in_use_bytes)
    return false;
  const std::size_t unused = usage.resident_bytes - usage.in_use_bytes;
  return unused > slack && unused > usage.in_use_bytes / 4;
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

bool trim_heap() {
  return ::malloc_trim(0) != 0;
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
    const bool trimmed = worth_trimming(current_heap_usage(), options_.slack) && trim_heap();
    lock.lock();
    trims_ += trimmed;
  }
}

} // namespace kinformer
