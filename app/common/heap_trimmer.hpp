#pragma once
// Gives the heap memory glibc keeps after a burst back to the system, as Go's scavenger does for
// client-go.
//
// A relist holds the old and the new version of every object at once, and the read API's paged
// lists and subscribers' queues hold more for a while. Once they are freed, glibc keeps the
// pages: the freed chunks lie between live ones, where it returns memory only when asked
// (malloc_trim). Measured in the soak (50,000 pods, churn, a fault every 30 s): the RSS stepped
// up to the largest such burst seen and stayed there, 276 -> 476 MB while the live heap was
// flat.
//
// A background thread looks every `interval` at how much of the resident memory the heap does
// not use, and trims when that is worth it (worth_trimming below). Trimming takes the heap's lock
// for a few milliseconds; it runs at most once per interval. With a fixed threshold (64 MB and a
// quarter of the heap) the soak's RSS settled 20-30 MB higher after its first relist-heavy fault
// than before it, and so never looked flat; a floor measured after each trim keeps the level.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

namespace kinformer {

struct heap_usage {
  std::size_t resident_bytes = 0; // the process's RSS
  std::size_t in_use_bytes = 0;   // what the allocator has handed out and not had back
};

// Resident memory the heap does not use (code, stacks, the allocator's reserve, freed chunks).
std::size_t unused_bytes(const heap_usage& usage);

// Trim when the unused resident memory has grown by more than `slack` over `floor`, what was
// left unused right after the last trim (code, stacks and the allocator's own reserve stay
// resident whatever a trim does, and are not worth a trim every interval).
bool worth_trimming(const heap_usage& usage, std::size_t floor, std::size_t slack);

// The process's heap usage now (glibc's mallinfo2 and /proc/self/statm).
heap_usage current_heap_usage();

// Returns free heap pages to the system now; true when glibc released any.
bool trim_heap();

// Trims (by any trimmer or trim_heap call) that released memory, since the process started.
std::uint64_t heap_trims_total();

class heap_trimmer {
public:
  struct options {
    std::chrono::milliseconds interval{10000};
    std::size_t slack = std::size_t{16} << 20;
  };

  explicit heap_trimmer(options o);
  // Stops the thread and waits for it.
  ~heap_trimmer();
  heap_trimmer(const heap_trimmer&) = delete;
  heap_trimmer& operator=(const heap_trimmer&) = delete;

  // Trims done so far.
  std::uint64_t trims() const;

private:
  void run();

  const options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::uint64_t trims_ = 0;
  // Unused resident bytes right after the last trim, or the lowest seen since (the thread's own).
  std::size_t floor_ = 0;
  std::thread thread_;
};

} // namespace kinformer
