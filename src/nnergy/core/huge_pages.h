#pragma once

#include <cstddef>

namespace nnergy {

/// Asks the kernel to back the whole 2 MiB pages inside [data, data + bytes) with transparent
/// huge pages, for a large array about to be filled (a trace's events, a sweep's boundaries).
/// Where Linux's THP is in "madvise" mode (the default of many distributions), such an array is
/// then faulted in with 512 times fewer page faults, each of which costs microseconds on a
/// virtual machine. Advice only: nothing changes where the kernel or the platform declines, and
/// nothing happens for memory already touched.
void advise_huge_pages(const void* data, std::size_t bytes);

}  // namespace nnergy
