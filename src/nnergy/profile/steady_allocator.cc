#include "nnergy/profile/steady_allocator.h"

#include <cstddef>
#include <limits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace nnergy::profile {

std::string use_steady_allocator() {
#if defined(__GLIBC__)
  // glibc rejects an mmap threshold above half its heap size limit (64 MiB on 64-bit systems).
  constexpr int kMmapThresholdBytes = 32 << 20;
  if (mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) != 1) return "";
  if (mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max()) != 1) return "";
  return "glibc malloc: mmap threshold 32 MiB, heap never trimmed";
#else
  return "";
#endif
}

}  // namespace nnergy::profile
