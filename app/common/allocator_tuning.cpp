#include "app/common/allocator_tuning.hpp"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace kinformer {

namespace {

// No transparent huge pages (glibc.malloc.hugetlb=1): on a VM whose host backs guest memory
// lazily, faulting in 2 MB pages doubled the first sync of 100,000 pods (0.77 to 1.5-1.6 s; it
// only helped, 0.83 to 0.63 s, when the pages had been touched by an earlier process).
constexpr const char* tunables = "glibc.malloc.arena_max=1:"
                                 "glibc.malloc.top_pad=67108864";

} // namespace

void tune_allocator_or_reexec(char** argv) {
  const char* opt_out = std::getenv("KINFORMER_MALLOC_TUNING");
  if (opt_out && std::strcmp(opt_out, "off") == 0)
    return;
  if (std::getenv("GLIBC_TUNABLES") != nullptr)
    return; // set by the user, or by the re-exec below
  // The binary's own path, not /proc/self/exe: the process keeps its name ("exe" otherwise).
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof path - 1)
    return;
  path[n] = '\0';
  if (::setenv("GLIBC_TUNABLES", tunables, 1) != 0)
    return;
  ::execv(path, argv);
  ::unsetenv("GLIBC_TUNABLES"); // the exec failed: carry on untuned
}

} // namespace kinformer
