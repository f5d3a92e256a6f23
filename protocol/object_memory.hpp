#pragma once
// The memory an object lives in: allocated by the thread that decodes it, given back by the
// thread that allocates the next one.
//
// Why: an object is made on the HTTP thread and let go on an actor worker (the store replaced
// it, the last handler dropped its delta). Blocks of a few KB are past glibc's per-thread cache,
// so both threads take the arena's lock, and glibc's lock sleeps in the kernel at the first
// collision: in a watch drained at ~100,000 events/s (kinformer-watch, one arena), 9% of the
// process's samples were malloc and free waking each other (futex), 70% of them object::make's
// malloc against a worker's free of an old object. Here a released block is pushed on a
// lock-free list, and the next allocation frees the whole list first, on its own thread, where
// the next malloc can reuse the chunks it just freed while they are in cache.
//
// A list nobody drains (no object made for a while) holds at most max_pending_bytes: past that,
// the releasing thread frees the list itself.

#include <cstddef>
#include <cstdint>

namespace kinformer {

// What released blocks may hold before the releasing thread frees them itself.
inline constexpr std::size_t max_pending_bytes = std::size_t{8} << 20;

// Frees what was released, then allocates `bytes` with malloc (std::bad_alloc when it fails).
void* allocate_object_block(std::size_t bytes);

// Gives back a block allocate_object_block returned, from any thread: freed later by the next
// allocation, or now when the pending blocks pass max_pending_bytes.
void release_object_block(void* block) noexcept;

// Blocks released and not yet freed, and their bytes: for tests and memory accounting. Two
// separate reads: not one snapshot while another thread releases or frees.
struct pending_object_blocks {
  std::size_t blocks = 0;
  std::size_t bytes = 0;
};
pending_object_blocks pending_object_memory() noexcept;

// Frees every released block now (what the next allocation would do).
void free_released_object_blocks() noexcept;

} // namespace kinformer
