#include "protocol/prefault.hpp"

#include <atomic>
#include <cstdint>

#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14; glibc 2.36's headers may predate it
#endif

namespace kinformer {

namespace {

std::uintptr_t page_size() noexcept {
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Whether the kernel has the call (Linux 5.14), asked once of a page of its own: a failure on
// the heap cannot tell (EINVAL also means a part of the range that may not be written, such as
// the reserve past a thread arena's end). Without it, the mincore calls that decide when to make
// it would be wasted.
bool kernel_populates() noexcept {
  static const bool supported = [] {
    const std::size_t page = page_size();
    void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe == MAP_FAILED)
      return false;
    const bool ok = madvise(probe, page, MADV_POPULATE_WRITE) == 0;
    munmap(probe, page);
    return ok;
  }();
  return supported;
}

// glibc's thread arenas are heaps of 64 MB (HEAP_MAX_SIZE on 64-bit), each aligned to its size.
constexpr std::uintptr_t heap_alignment = std::uintptr_t{64} << 20;
// Below glibc's mmap threshold (128 KB unless raised): a block from an arena's heap.
constexpr std::size_t max_heap_block = std::size_t{64} << 10;

// How far up a thread's blocks have been looked at in one 64 MB region of the address space: the
// end of the last window mapped in, or of the last block found in memory already mapped. A heap
// grows upwards, so its fresh memory lies above that; below are the windows already mapped and
// the chunks freed between live objects, and neither is worth a system call (in kinformer-watch,
// whose threads share one arena, a draft that asked about every block outside its last window
// made 39,865 mincore calls in a sync of 50,000 pods; this, 987). Per region, because a thread
// arena's next heap is mapped wherever the kernel puts it, often below the last one.
struct region_frontier {
  std::uintptr_t region = 0; // its number: an address over heap_alignment
  std::uintptr_t frontier = 0;
};

// This thread's open scopes, and the frontiers of the regions its blocks were in lately (a
// direct-mapped cache: a region whose entry another took starts again from its beginning).
struct bulk_state {
  int scopes = 0;
  region_frontier regions[16];

  region_frontier& in(std::uintptr_t address) noexcept {
    const std::uintptr_t region = address / heap_alignment;
    region_frontier& entry = regions[region % 16];
    if (entry.region != region)
      entry = {region, region * heap_alignment};
    return entry;
  }
};
thread_local bulk_state bulk;
std::atomic<std::uint64_t> scopes_opened{0};

bool page_resident(std::uintptr_t page) noexcept {
  unsigned char flags = 0;
  // ENOMEM (not mapped at all) counts as resident: there is nothing to populate.
  return mincore(reinterpret_cast<void*>(page), page_size(), &flags) != 0 || (flags & 1) != 0;
}

} // namespace

void prefault_for_write(char* data, std::size_t size) noexcept {
  const std::uintptr_t page = page_size();
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + size) & ~(page - 1);
  if (begin < end) // EINVAL on an older kernel: the writes fault page by page instead
    (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

bulk_allocation_scope::bulk_allocation_scope(bool open) noexcept : open_(open) {
  if (!open_)
    return;
  ++bulk.scopes;
  scopes_opened.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t bulk_allocation_scopes_opened() noexcept {
  return scopes_opened.load(std::memory_order_relaxed);
}

// The frontier outlives the scope: the HTTP client opens one per piece of the body it decodes,
// and the next piece's objects run on through the same window. Memory below it that has since
// been freed and given back costs the blocks made in it their page faults, nothing worse.
bulk_allocation_scope::~bulk_allocation_scope() {
  if (open_)
    --bulk.scopes;
}

void note_bulk_allocation(const void* block, std::size_t size) noexcept {
  // A block this large may be a mapping of its own (glibc maps blocks of 128 KB and more apart),
  // and what lies after it anything.
  if (bulk.scopes == 0 || size == 0 || size > max_heap_block)
    return;
  const auto begin = reinterpret_cast<std::uintptr_t>(block);
  const auto end = begin + size;
  region_frontier& looked_at = bulk.in(begin);
  if (end <= looked_at.frontier)
    return;
  if (!kernel_populates())
    return;
  const std::uintptr_t page = page_size();
  const std::uintptr_t first_page = begin & ~(page - 1);
  // The page after the one the block ends in: glibc has just written the header of what
  // remains of a free chunk at the block's end, mapping that page in, fresh memory or not.
  const std::uintptr_t next_page = ((end - 1) & ~(page - 1)) + page;
  if (page_resident(next_page)) {
    looked_at.frontier = next_page; // memory in use: nothing to map
    return;
  }
  // Part of the window may lie past the main heap's end (unmapped), or in the reserve past a
  // thread arena's (not writable): the call then maps in what comes before and fails there, which
  // is what is wanted. A thread arena's heap is a mapping aligned to its 64 MB size: the window
  // stops at that boundary, so that it never reaches whatever is mapped after the heap.
  const std::uintptr_t boundary = (first_page | (heap_alignment - 1)) + 1;
  const std::uintptr_t window_end =
      first_page + bulk_prefault_bytes < boundary ? first_page + bulk_prefault_bytes : boundary;
  (void)madvise(reinterpret_cast<void*>(first_page), window_end - first_page, MADV_POPULATE_WRITE);
  looked_at.frontier = window_end;
}

} // namespace kinformer
