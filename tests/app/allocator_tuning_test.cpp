// The allocator tuning: heaps grow 64 MB at a time, blocks under 32 MB come from them, one arena
// when asked, nothing when the user opted out. Each test case runs in a process of its own (ctest
// runs them one by one), so what one sets does not reach another.

#include "app/common/allocator_tuning.hpp"

#include "tests/support/sanitizers.hpp"

#include <catch2/catch.hpp>

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace kinformer;

#if !defined(KINFORMER_SANITIZED_ALLOCATOR)
// The sanitizers bring their own allocators, which mallopt does not reach.

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

// How far the main heap's end (the program break) moves the next time this thread's heap must
// grow: blocks of 64 KiB (below glibc's mmap threshold, so they come from the heap) are taken
// until it moves, then given back.
std::size_t next_heap_growth() {
  std::vector<void*> blocks;
  char* const before = static_cast<char*>(::sbrk(0));
  char* after = before;
  while (after == before && blocks.size() < 4096) { // 256 MiB of address space at most
    blocks.push_back(std::malloc(64 * 1024));
    after = static_cast<char*>(::sbrk(0));
  }
  for (void* block : blocks)
    std::free(block);
  return static_cast<std::size_t>(after - before);
}

// The arenas glibc has made so far, as malloc_info() lists them.
int arena_count() {
  char* text = nullptr;
  std::size_t size = 0;
  FILE* out = ::open_memstream(&text, &size);
  REQUIRE(out != nullptr);
  ::malloc_info(0, out);
  std::fclose(out);
  const std::string info(text, size);
  std::free(text);
  int count = 0;
  for (auto at = info.find("<heap nr="); at != std::string::npos;
       at = info.find("<heap nr=", at + 1))
    ++count;
  return count;
}

// Whether a block of `size` bytes gets a mapping of its own when the main heap's free top cannot
// hold it (glibc takes any block that fits from the top, whatever its size): the top is first
// filled, all but 64 KiB of it.
bool mapped_on_its_own(std::size_t size) {
  const std::size_t top = ::mallinfo2().keepcost;
  void* filler = top > 128 * 1024 ? std::malloc(top - 64 * 1024) : nullptr;
  const std::size_t before = ::mallinfo2().hblks;
  void* block = std::malloc(size);
  REQUIRE(block != nullptr);
  const bool mapped = ::mallinfo2().hblks > before;
  std::free(block);
  std::free(filler);
  return mapped;
}

// Starts a thread that allocates (and so gets an arena), and waits for it.
void allocate_on_another_thread() {
  std::thread([] {
    void* block = std::malloc(100);
    REQUIRE(block != nullptr);
    std::free(block);
  }).join();
}

} // namespace

TEST_CASE("allocator tuning: the heap grows 64 MiB at a time, blocks under 32 MiB come from it, "
          "and threads share one arena when asked") {
  ::unsetenv("GLIBC_TUNABLES");
  ::unsetenv("KINFORMER_MALLOC_TUNING");
  REQUIRE(tune_allocator({.max_arenas = 1}));
  CHECK(next_heap_growth() >= 64 * MiB);
  allocate_on_another_thread();
  CHECK(arena_count() == 1);
  // Blocks under 32 MiB come from the heap, to be reused; larger ones are mapped apart.
  CHECK_FALSE(mapped_on_its_own(4 * MiB));
  CHECK(mapped_on_its_own(40 * MiB));
}

TEST_CASE("allocator tuning: KINFORMER_MALLOC_TUNING=off leaves glibc's defaults") {
  ::unsetenv("GLIBC_TUNABLES");
  ::setenv("KINFORMER_MALLOC_TUNING", "off", 1);
  CHECK_FALSE(tune_allocator({.max_arenas = 1}));
  CHECK(next_heap_growth() < 64 * MiB);
  allocate_on_another_thread();
  CHECK(arena_count() == 2);         // the thread got an arena of its own
  CHECK(mapped_on_its_own(4 * MiB)); // glibc's threshold starts at 128 KiB
}

TEST_CASE("allocator tuning: a GLIBC_TUNABLES of the user's own is left to decide") {
  ::unsetenv("KINFORMER_MALLOC_TUNING");
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.check=0", 1); // read at start-up only: no effect now
  CHECK_FALSE(tune_allocator());
  CHECK(next_heap_growth() < 64 * MiB);
}

#endif
