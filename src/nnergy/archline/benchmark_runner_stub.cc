// The build without CUDA: `nnergy archline run` reports that the kernels are missing.
#include "nnergy/archline/benchmark_runner.h"
#include "nnergy/core/error.h"

namespace nnergy::archline {

bool cuda_kernels_built() { return false; }

BenchmarkRun run_benchmarks(const BenchmarkRunOptions& /*options*/) {
  throw DeviceError(
      "built without CUDA kernels (no CUDA compiler was found); install the CUDA toolkit and "
      "reconfigure (-DNNERGY_WITH_CUDA=ON, see README, Archline) to measure a GPU, or use "
      "`nnergy archline synth` for synthetic points");
}

}  // namespace nnergy::archline
