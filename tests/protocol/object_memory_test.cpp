// Object memory is freed by the thread that allocates the next object, or by the releasing
// thread once what waits passes max_pending_bytes; every block is freed once.

#include "protocol/object.hpp"
#include "protocol/object_memory.hpp"

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include <malloc.h>

using namespace kinformer;

TEST_CASE("a block released on another thread waits for the next allocation, which frees it") {
  free_released_object_blocks();
  REQUIRE(pending_object_memory().blocks == 0);
  void* block = allocate_object_block(4000);
  std::thread([block] { release_object_block(block); }).join();
  CHECK(pending_object_memory().blocks == 1);
  CHECK(pending_object_memory().bytes >= 4000);

  void* next = allocate_object_block(4000);
  CHECK(pending_object_memory().blocks == 0);
  CHECK(pending_object_memory().bytes == 0);
  release_object_block(next);
  free_released_object_blocks();
  CHECK(pending_object_memory().blocks == 0);
}

TEST_CASE("an object let go of waits as a released block until the next object is made") {
  free_released_object_blocks();
  auto made = object::parse(R"({"kind":"Pod","metadata":{"name":"a","namespace":"n"}})");
  REQUIRE(made);
  object_ptr obj = std::move(made).value();
  std::thread([held = std::move(obj)]() mutable { held.reset(); }).join();
  CHECK(pending_object_memory().blocks == 1);

  auto next = object::parse(R"({"kind":"Pod","metadata":{"name":"b","namespace":"n"}})");
  REQUIRE(next);
  CHECK(pending_object_memory().blocks == 0);
  CHECK((*next)->key() == "n/b");
}

TEST_CASE("the releasing thread frees the blocks itself past max_pending_bytes") {
  free_released_object_blocks();
  const std::size_t block_bytes = std::size_t{256} << 10;
  std::vector<void*> blocks; // allocated first: an allocation would free what waits
  for (std::size_t i = 0; i < max_pending_bytes / block_bytes + 2; ++i)
    blocks.push_back(allocate_object_block(block_bytes));
  std::size_t released = 0;
  bool freed_by_releaser = false;
  while (released < blocks.size() && !freed_by_releaser) {
    const pending_object_blocks before = pending_object_memory();
    // What the release counts: the block's usable size, which malloc may round up.
    const std::size_t counted = ::malloc_usable_size(blocks[released]);
    release_object_block(blocks[released++]);
    const pending_object_blocks after = pending_object_memory();
    if (after.blocks == 0) {
      freed_by_releaser = true;
      CHECK(before.bytes + counted > max_pending_bytes);
      CHECK(after.bytes == 0);
    } else {
      CHECK(after.blocks == before.blocks + 1);
      CHECK(after.bytes <= max_pending_bytes);
    }
  }
  CHECK(freed_by_releaser);
  CHECK(released > 1);
  while (released < blocks.size())
    release_object_block(blocks[released++]);
  free_released_object_blocks();
}

TEST_CASE("blocks released by many threads while one allocates are each freed once") {
  free_released_object_blocks();
  constexpr int threads = 4, per_thread = 2000;
  std::vector<std::vector<void*>> blocks(threads);
  for (auto& mine : blocks)
    for (int i = 0; i < per_thread; ++i)
      mine.push_back(allocate_object_block(64 + static_cast<std::size_t>(i % 7) * 512));
  std::vector<std::thread> releasers;
  for (auto& mine : blocks)
    releasers.emplace_back([&mine] {
      for (void* b : mine)
        release_object_block(b);
    });
  std::vector<void*> allocated;
  for (int i = 0; i < per_thread; ++i)
    allocated.push_back(allocate_object_block(1024));
  for (auto& t : releasers)
    t.join();
  for (void* b : allocated)
    release_object_block(b);
  free_released_object_blocks();
  // A block freed twice or never would show here (and under ASan as a double free or a leak).
  CHECK(pending_object_memory().blocks == 0);
  CHECK(pending_object_memory().bytes == 0);
}
