// prefault_for_write maps a buffer's whole pages in at once and leaves what they hold alone.

#include "protocol/http/prefault.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
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
