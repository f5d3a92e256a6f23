#include "protocol/object_memory.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

#include <malloc.h>

namespace kinformer {

namespace {

// Written into a released block's first bytes: the block is dead, its memory is the node.
struct released_block {
  released_block* next;
  std::size_t bytes;
};
static_assert(sizeof(released_block) <= 16);

// Pushed by any thread; taken whole (exchange), never popped one by one, so there is no ABA.
std::atomic<released_block*> released{nullptr};
std::atomic<std::size_t> released_blocks{0};
std::atomic<std::size_t> released_bytes{0};

void free_list(released_block* block) noexcept {
  std::size_t blocks = 0, bytes = 0;
  while (block) {
    released_block* next = block->next;
    bytes += block->bytes;
    ++blocks;
    std::free(block);
    block = next;
  }
  released_blocks.fetch_sub(blocks, std::memory_order_relaxed);
  released_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

} // namespace

void free_released_object_blocks() noexcept {
  // Relaxed first look: the common case, nothing released, costs no write to a shared line.
  if (released.load(std::memory_order_relaxed))
    free_list(released.exchange(nullptr, std::memory_order_acquire));
}

void* allocate_object_block(std::size_t bytes) {
  free_released_object_blocks();
  // malloc, not ::operator new: release_object_block asks malloc what a block's size is.
  void* block = std::malloc(bytes < sizeof(released_block) ? sizeof(released_block) : bytes);
  if (!block)
    throw std::bad_alloc();
  return block;
}

void release_object_block(void* block) noexcept {
  // Read from the chunk's header, next to the block's first line, which the control block's
  // last release just wrote: the block's size needs no place of its own.
  const std::size_t bytes = ::malloc_usable_size(block);
  auto* node = static_cast<released_block*>(block);
  node->bytes = bytes;
  released_blocks.fetch_add(1, std::memory_order_relaxed);
  const std::size_t pending = released_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  node->next = released.load(std::memory_order_relaxed);
  while (!released.compare_exchange_weak(node->next, node, std::memory_order_release,
                                         std::memory_order_relaxed)) {
  }
  if (pending > max_pending_bytes)
    free_released_object_blocks();
}

pending_object_blocks pending_object_memory() noexcept {
  return {released_blocks.load(std::memory_order_relaxed),
          released_bytes.load(std::memory_order_relaxed)};
}

} // namespace kinformer
