#include "app/common/allocator_tuning.hpp"

#include <malloc.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace kinformer {

namespace {

// No transparent huge pages (GLIBC_TUNABLES' glibc.malloc.hugetlb=1, which mallopt cannot set
// anyway): on a VM whose host backs guest memory lazily, faulting in 2 MB pages doubled the first
// sync of 100,000 pods (0.77 to 1.5-1.6 s; it only helped, 0.83 to 0.63 s, when the pages had
// been touched by an earlier process).
bool tuning_wanted() {
  const char* opt_out = std::getenv("KINFORMER_MALLOC_TUNING");
  if (opt_out && std::strcmp(opt_out, "off") == 0)
    return false;
  return std::getenv("GLIBC_TUNABLES") == nullptr;
}

} // namespace

bool tune_allocator(const allocator_tuning& tuning) {
  if (!tuning_wanted())
    return false;
  const std::size_t growth =
      tuning.heap_growth_bytes < INT_MAX ? tuning.heap_growth_bytes : std::size_t{INT_MAX};
  ::mallopt(M_TOP_PAD, static_cast<int>(growth));
  const std::size_t threshold =
      tuning.mmap_threshold_bytes < INT_MAX ? tuning.mmap_threshold_bytes : std::size_t{INT_MAX};
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(threshold));
  if (tuning.max_arenas > 0)
    ::mallopt(M_ARENA_MAX, tuning.max_arenas);
  return true;
}

} // namespace kinformer
