#pragma once

#include <cstddef>
#include <functional>

namespace nnergy {

/// How a long library call says how far it is: `done` of `total` steps, in the unit the call
/// documents (regressor fits, records). Called on the calling thread, first with done = 0 once
/// the total is known, then after each step, with done ≤ total. An empty function is never
/// called. The library never prints: the front end decides whether and how to show progress
/// (report/progress_line.h renders it for a terminal or a log).
using ProgressCallback = std::function<void(std::size_t done, std::size_t total)>;

}  // namespace nnergy
