// The heap trimmer: when trimming is worth it, and that a trim gives freed pages back.

#include "app/common/heap_trimmer.hpp"

#include "tests/support/sanitizers.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

using namespace kinformer;

namespace {
constexpr std::size_t MiB = std::size_t{1} << 20;
}

TEST_CASE("heap trimmer: trims when the unused resident memory has grown past the floor left "
          "by the last trim") {
  const std::size_t slack = 16 * MiB;
  CHECK(unused_bytes({150 * MiB, 100 * MiB}) == 50 * MiB);
  CHECK(unused_bytes({90 * MiB, 100 * MiB}) == 0);               // less resident than in use
  CHECK_FALSE(worth_trimming({100 * MiB, 100 * MiB}, 0, slack)); // nothing unused
  CHECK_FALSE(worth_trimming({90 * MiB, 100 * MiB}, 0, slack));
  CHECK_FALSE(worth_trimming({110 * MiB, 100 * MiB}, 0, slack)); // 10 MiB: under the slack
  CHECK(worth_trimming({120 * MiB, 100 * MiB}, 0, slack));
  // 30 MiB stayed unused after the last trim (code, stacks, reserve): only growth past it counts.
  CHECK_FALSE(worth_trimming({140 * MiB, 100 * MiB}, 30 * MiB, slack));
  CHECK(worth_trimming({150 * MiB, 100 * MiB}, 30 * MiB, slack));
  // The same growth over a large heap is worth the same trim.
  CHECK(worth_trimming({1074 * MiB, 1024 * MiB}, 30 * MiB, slack));
}

#if !defined(KINFORMER_SANITIZED_ALLOCATOR)
// The sanitizers bring their own allocators, which glibc's malloc_trim knows nothing of.
TEST_CASE("heap trimmer: a trim returns the pages of chunks freed between live ones") {
  // 96 MiB in 16 KiB chunks, written so that they are resident; then every other one freed.
  // The freed chunks lie between live ones, so glibc cannot give them back by shrinking the heap.
  constexpr std::size_t chunk = 16 * 1024;
  constexpr std::size_t count = 96 * MiB / chunk;
  std::vector<std::unique_ptr<char[]>> chunks;
  chunks.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    chunks.emplace_back(new char[chunk]);
    std::memset(chunks.back().get(), static_cast<int>(i), chunk);
  }
  const auto full = current_heap_usage();
  CHECK(full.in_use_bytes >= 96 * MiB);
  CHECK(full.resident_bytes >= 96 * MiB);
  for (std::size_t i = 0; i < count; i += 2)
    chunks[i].reset();
  const auto freed = current_heap_usage();
  CHECK(freed.in_use_bytes + 40 * MiB < full.in_use_bytes);
  CHECK(freed.resident_bytes + 8 * MiB > full.resident_bytes); // still resident
  CHECK(worth_trimming(freed, 0, 16 * MiB));

  const auto trims_before = heap_trims_total();
  CHECK(trim_heap());
  CHECK(heap_trims_total() == trims_before + 1);
  const auto trimmed = current_heap_usage();
  // Each freed 16 KiB chunk gives back its whole pages: at least 3 of its 4.
  CHECK(trimmed.resident_bytes + 30 * MiB < freed.resident_bytes);
  CHECK(trimmed.in_use_bytes == freed.in_use_bytes); // nothing live was touched
}
#endif

TEST_CASE("heap trimmer: the thread stops when it is destroyed") {
  // A long interval: destruction must wake the thread rather than wait it out (a trimmer that
  // waited would hold this test until ctest's timeout).
  heap_trimmer trimmer(heap_trimmer::options{std::chrono::hours(1)});
  CHECK(trimmer.trims() == 0);
}
