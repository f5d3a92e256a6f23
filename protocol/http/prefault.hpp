#pragma once
// Maps in a fresh buffer's pages in one system call before it is written.
//
// Why: a list is read into new 256 KB buffers, most of them from heap memory the process never
// touched, and the first write to each 4 KB page traps into the kernel. A sync of 100,000 pods
// takes about 100,000 such faults (the memory it keeps); populating a buffer's pages at once
// (MADV_POPULATE_WRITE, Linux 5.14) costs the kernel the same page clearing without a trap per
// page. Pages already mapped are left as they are; where the kernel lacks the call, nothing
// happens and the writes fault as before.

#include <cstddef>

namespace kinformer {

// Populates the whole pages inside [data, data + size) for writing. Best effort: never fails.
void prefault_for_write(char* data, std::size_t size) noexcept;

} // namespace kinformer
