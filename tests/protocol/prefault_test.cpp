// prefault_for_write maps a buffer's whole pages in at once and leaves what they hold alone;
// note_bulk_allocation maps ahead of a bulk of allocations into fresh memory, and only then.

#include "protocol/prefault.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

using namespace kinformer;

namespace {

const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// Fresh anonymous pages, none of them mapped in yet.
struct fresh_pages {
  explicit fresh_pages(std::size_t n) : size(n * page) {
    data = static_cast<char*>(
        mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(data != MAP_FAILED);
  }
  ~fresh_pages() { munmap(data, size); }
  std::vector<bool> resident() const {
    std::vector<unsigned char> flags(size / page);
    REQUIRE(mincore(data, size, flags.data()) == 0);
    std::vector<bool> out;
    for (auto f : flags)
      out.push_back((f & 1) != 0);
    return out;
  }
  std::size_t size;
  char* data;
};

bool kernel_populates() {
  fresh_pages probe(1);
  return madvise(probe.data, page, 23 /* MADV_POPULATE_WRITE */) == 0;
}

} // namespace

TEST_CASE("the whole pages inside the buffer are mapped in, and only those") {
  if (!kernel_populates()) {
    WARN("this kernel has no MADV_POPULATE_WRITE (Linux 5.14): nothing to check");
    return;
  }
  fresh_pages pages(8);
  CHECK(pages.resident() == std::vector<bool>(8, false));
  // From inside page 1 to inside page 6: pages 2 to 5 are whole.
  prefault_for_write(pages.data + page + 10, 5 * page);
  CHECK(pages.resident() == std::vector<bool>{false, false, true, true, true, true, false, false});
}

TEST_CASE("what the buffer holds is kept, whatever its size and alignment") {
  fresh_pages pages(4);
  for (std::size_t i = 0; i < pages.size; ++i)
    pages.data[i] = static_cast<char>(i * 7);
  prefault_for_write(pages.data, pages.size);
  prefault_for_write(pages.data + 3, 2 * page + 5);
  prefault_for_write(pages.data + 1, 10); // less than a page: nothing to do
  prefault_for_write(pages.data, 0);
  bool same = true;
  for (std::size_t i = 0; i < pages.size; ++i)
    same = same && pages.data[i] == static_cast<char>(i * 7);
  CHECK(same);
}

namespace {

// How many of the pages are mapped in.
std::size_t resident_count(const fresh_pages& pages) {
  std::size_t n = 0;
  for (bool r : pages.resident())
    n += r ? 1 : 0;
  return n;
}

// Runs `steps` on a thread of its own, which starts with nothing looked at yet (what
// note_bulk_allocation keeps is the thread's), and returns what it recorded.
template <class Steps>
std::vector<std::size_t> on_new_thread(Steps steps) {
  std::vector<std::size_t> recorded;
  std::thread([&] { steps(recorded); }).join();
  return recorded;
}

} // namespace

TEST_CASE("inside a bulk allocation scope, a block in fresh memory maps in the window after it") {
  if (!kernel_populates()) {
    WARN("this kernel has no MADV_POPULATE_WRITE (Linux 5.14): nothing to check");
    return;
  }
  const std::size_t window_pages = bulk_prefault_bytes / page;
  fresh_pages pages(4 * window_pages);
  const auto counts = on_new_thread([&](std::vector<std::size_t>& out) {
    {
      const bulk_allocation_scope scope;
      note_bulk_allocation(pages.data + 100, 3000);
      out.push_back(resident_count(pages));
      // Blocks inside the window cost nothing more; the first past it maps the next window.
      note_bulk_allocation(pages.data + 5 * page, 4000);
      out.push_back(resident_count(pages));
      note_bulk_allocation(pages.data + bulk_prefault_bytes, 3000);
      out.push_back(resident_count(pages));
      // A block across the window's end maps the window that begins with the block.
      note_bulk_allocation(pages.data + 2 * bulk_prefault_bytes - 100, 3000);
      out.push_back(resident_count(pages));
    }
    // What was looked at outlives the scope: the next scope's blocks run on through the window.
    const bulk_allocation_scope scope;
    note_bulk_allocation(pages.data + (3 * window_pages - 2) * page + 8, 50);
    out.push_back(resident_count(pages));
    note_bulk_allocation(pages.data + (3 * window_pages - 1) * page + 8, 50);
    out.push_back(resident_count(pages));
  });
  CHECK(counts == std::vector<std::size_t>{window_pages, window_pages, 2 * window_pages,
                                           3 * window_pages - 1, 3 * window_pages - 1,
                                           4 * window_pages - 1});
  CHECK_FALSE(pages.resident()[4 * window_pages - 1]);
}

TEST_CASE("a block below what was looked at maps nothing, nor does a block of 128 KiB") {
  if (!kernel_populates()) {
    WARN("this kernel has no MADV_POPULATE_WRITE (Linux 5.14): nothing to check");
    return;
  }
  // In one 64 MiB region of the address space: what was looked at is kept per region.
  std::vector<std::unique_ptr<fresh_pages>> tries;
  auto in_one_region = [](const fresh_pages& p) {
    constexpr std::uintptr_t region = std::uintptr_t{64} << 20;
    const auto first = reinterpret_cast<std::uintptr_t>(p.data);
    return first / region == (first + p.size - 1) / region;
  };
  do
    tries.push_back(std::make_unique<fresh_pages>(256));
  while (!in_one_region(*tries.back()));
  const fresh_pages& pages = *tries.back();
  const auto counts = on_new_thread([&](std::vector<std::size_t>& out) {
    const bulk_allocation_scope scope;
    note_bulk_allocation(pages.data + 200 * page, 100); // maps pages 200 to 255
    out.push_back(resident_count(pages));
    // Below it: a chunk freed between live objects, not fresh memory.
    note_bulk_allocation(pages.data + 10 * page, 3000);
    out.push_back(resident_count(pages));
  });
  CHECK(counts == std::vector<std::size_t>{56, 56});
  // A block this large may be a mapping of its own: what lies after it is not the heap's.
  fresh_pages large(64);
  const auto large_counts = on_new_thread([&](std::vector<std::size_t>& out) {
    const bulk_allocation_scope scope;
    note_bulk_allocation(large.data, 128 * 1024);
    out.push_back(resident_count(large));
  });
  CHECK(large_counts == std::vector<std::size_t>{0});
}

TEST_CASE("outside a bulk allocation scope, nothing is mapped in ahead") {
  fresh_pages pages(16);
  const auto counts = on_new_thread([&](std::vector<std::size_t>& out) {
    note_bulk_allocation(pages.data, 3000);
    out.push_back(resident_count(pages));
    const auto opened_before = bulk_allocation_scopes_opened();
    const bulk_allocation_scope closed(false);
    note_bulk_allocation(pages.data, 3000);
    out.push_back(resident_count(pages));
    out.push_back(bulk_allocation_scopes_opened() - opened_before);
    const bulk_allocation_scope outer;
    {
      const bulk_allocation_scope inner; // scopes nest: the outer one stays open
    }
    note_bulk_allocation(pages.data, 100);
    out.push_back(resident_count(pages));
    out.push_back(bulk_allocation_scopes_opened() - opened_before);
  });
  CHECK(counts[0] == 0);
  CHECK(counts[1] == 0);
  CHECK(counts[2] == 0); // a closed scope is not counted as opened
  CHECK(counts[3] == (kernel_populates() ? 16 : 0));
  CHECK(counts[4] == 2);
}

TEST_CASE("a block in memory already mapped in maps nothing more") {
  fresh_pages pages(16);
  // A freed chunk between live objects: its page and the one after it are mapped in.
  pages.data[2 * page] = 1;
  pages.data[3 * page] = 1;
  const auto counts = on_new_thread([&](std::vector<std::size_t>& out) {
    const bulk_allocation_scope scope;
    note_bulk_allocation(pages.data + 2 * page + 8, 1000);
    out.push_back(resident_count(pages));
  });
  CHECK(counts == std::vector<std::size_t>{2});
}
