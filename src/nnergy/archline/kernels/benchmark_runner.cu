// The archline microbenchmarks (seed 003 §3.3, Algs. 1–4) and the measurement loop (§4.2.3,
// Alg. 5). Built only with NNERGY_WITH_CUDA=ON.
//
// W and Q per element are fixed at compile time: the flop and roofline kernels are templates on
// the number N of multiply-adds, which the compiler unrolls completely, so one binary covers the
// whole intensity sweep (the seed recompiles per intensity). One multiply-add x = x + x·t is one
// FFMA/DFMA instruction = 2 flop (Eq. 12); the copy and roofline kernels load and store one word
// per element (Eq. 11). The seed validates W and Q from the assembly. Here the PTX is checked by
// a test wherever nvcc is found (tests/archline/check_kernel_ptx.py: exactly N fma and no other
// floating-point arithmetic per element, one global load and one store), which caught an
// initial value that the compiler turned into an extra add or fma. The SASS (`cuobjdump -sass`)
// has not been checked: ptxas could still change the count, which should be confirmed once per
// architecture on a machine with the full toolkit.
//
// Occupancy is swept by the number of resident threads (blocks of 256), never by the amount of
// work: every kernel walks its buffers with a grid-stride loop, and the buffers (64 Mi elements,
// 256 MiB in FP32 and 512 MiB in FP64 each) are far larger than any L2 (40–60 MB), so the memory
// kernels stream from DRAM at every occupancy.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nnergy/archline/benchmark_runner.h"
#include "nnergy/core/error.h"
#include "nnergy/measure/cuda_device_mapping.h"
#include "nnergy/measure/measurement_window.h"
#include "nnergy/measure/nvml_library.h"
#include "nnergy/measure/sampler.h"
#include "nnergy/measure/source_factories.h"

namespace nnergy::archline {

namespace {

constexpr int kBlockThreads = 256;
constexpr std::size_t kElements = std::size_t{64} << 20;  // per buffer, ≫ L2

// ------------------------------------------------------------------------------------ kernels

// Alg. 1: index computation and a store under a condition the compiler cannot decide (`secret`
// is 0 at run time), so nothing is removed.
template <typename T>
__global__ void baseline_kernel(T* out, std::size_t elements, int secret) {
  __shared__ T scratch[kBlockThreads];
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < elements; i += stride) {
    if (secret) {
      scratch[threadIdx.x] = static_cast<T>(i);
      out[i] = scratch[(threadIdx.x + 1) % kBlockThreads];
    }
  }
}

// Alg. 2: one load and one store per element, Q = 2·sizeof(T) (Eq. 11).
template <typename T>
__global__ void copy_kernel(T* __restrict__ out, const T* __restrict__ in, std::size_t elements) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < elements; i += stride) {
    out[i] = in[i];
  }
}

// Alg. 3: N multiply-adds per element on registers, W = 2N (Eq. 12). The operands stay bounded:
// x starts in [1024, 2047] (an integer converted, so no flop) and t is ~1e-7, so x·(1 + t)^N
// grows by less than 0.02 % for N ≤ 1024 — no inf, no denormals. x depends on the element index
// and the store on x (x is never −1), so the compiler can neither compute x once per thread nor
// skip the loop: an earlier version stored under a kernel argument that was always 0, and the
// H100's machine code (cuobjdump -sass) tested it before the loop and exited, so the kernel did
// no arithmetic at all (data/measured/h100/README.md).
template <typename T, int N>
__global__ void flop_kernel(T* out, std::size_t elements, T t) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < elements; i += stride) {
    T x = static_cast<T>(1024u + (static_cast<unsigned>(i) & 1023u));
#pragma unroll
    for (int n = 0; n < N; ++n) x = x + x * t;
    if (x == static_cast<T>(-1)) out[i] = x;
  }
}

// Alg. 4: load t, N multiply-adds, store x: W = 2N, Q = 2·sizeof(T) per element, I = N/sizeof(T).
template <typename T, int N>
__global__ void roofline_kernel(T* __restrict__ out, const T* __restrict__ in,
                                std::size_t elements) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < elements; i += stride) {
    // x starts at t, not at a constant: 1 + 1·t would compile to an add, not a multiply-add.
    const T t = in[i];
    T x = t;
#pragma unroll
    for (int n = 0; n < N; ++n) x = x + x * t;
    out[i] = x;
  }
}

// Small positive operands for the roofline kernel: 1e-7·(1 + i mod 1024 / 1024).
template <typename T>
__global__ void init_kernel(T* data, std::size_t elements) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < elements; i += stride) {
    data[i] = static_cast<T>(1e-7) * (static_cast<T>(1) + static_cast<T>(i % 1024) / 1024);
  }
}

// ---------------------------------------------------------------------------------- helpers

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw DeviceError(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                      cudaGetErrorString(status) + ")");
  }
}

struct DeviceBuffer {
  void* data = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { check(cudaMalloc(&data, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Event {
  cudaEvent_t event = nullptr;
  Event() { check(cudaEventCreate(&event), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// A launcher enqueues one kernel launch with `blocks` blocks.
using Launch = void (*)(int blocks, void* out, const void* in, std::size_t elements, double t);

template <typename T, int N>
void launch_roofline(int blocks, void* out, const void* in, std::size_t elements, double) {
  roofline_kernel<T, N>
      <<<blocks, kBlockThreads>>>(static_cast<T*>(out), static_cast<const T*>(in), elements);
}

template <typename T, int N>
void launch_flop(int blocks, void* out, const void*, std::size_t elements, double t) {
  flop_kernel<T, N><<<blocks, kBlockThreads>>>(static_cast<T*>(out), elements, static_cast<T>(t));
}

template <typename T>
void launch_copy(int blocks, void* out, const void* in, std::size_t elements, double) {
  copy_kernel<T>
      <<<blocks, kBlockThreads>>>(static_cast<T*>(out), static_cast<const T*>(in), elements);
}

template <typename T>
void launch_baseline(int blocks, void* out, const void*, std::size_t elements, double) {
  baseline_kernel<T><<<blocks, kBlockThreads>>>(static_cast<T*>(out), elements, 0);
}

template <typename T, int... Ns>
std::vector<std::pair<int, Launch>> roofline_table(std::integer_sequence<int, Ns...>) {
  return {{1 << Ns, &launch_roofline<T, (1 << Ns)>}...};
}

template <typename T, int... Ns>
std::vector<std::pair<int, Launch>> flop_table(std::integer_sequence<int, Ns...>) {
  return {{1 << Ns, &launch_flop<T, (1 << Ns)>}...};
}

// N = 1, 2, 4, ..., 1024.
using Exponents = std::make_integer_sequence<int, 11>;

Launch find_launch(const std::vector<std::pair<int, Launch>>& table, int n) {
  for (const auto& [count, launch] : table) {
    if (count == n) return launch;
  }
  throw InvalidInput("flop per thread N = " + std::to_string(n) +
                     ": not compiled; accepted: powers of two from 1 to 1024");
}

struct Kernel {
  BenchmarkKind kind;
  int fma_per_element;
  Launch launch;
  double flop_per_element;
  double bytes_per_element;
};

// ------------------------------------------------------------------------ measurement loop

class Runner {
 public:
  explicit Runner(const BenchmarkRunOptions& o) : options_(o) {
    // CUDA's default ordinal order (fastest first) differs from NVML's (PCI bus); asking CUDA for
    // PCI order makes both indices name the same GPU. A user's own setting is kept.
    measure::use_pci_bus_order_for_cuda();
    int count = 0;
    const cudaError_t counted = cudaGetDeviceCount(&count);
    if (counted == cudaErrorInsufficientDriver || counted == cudaErrorNoDevice) {
      throw DeviceError("GPU cuda:" + std::to_string(o.gpu_index) + ": no usable GPU (" +
                        cudaGetErrorName(counted) + ": " + cudaGetErrorString(counted) +
                        "): this machine has no NVIDIA driver, or one older than the CUDA " +
                        "runtime nnergy was built with (" + std::to_string(CUDART_VERSION / 1000) +
                        "." + std::to_string(CUDART_VERSION % 1000 / 10) + ")");
    }
    check(counted, "cudaGetDeviceCount");
    if (o.gpu_index >= count) {
      throw DeviceError("GPU cuda:" + std::to_string(o.gpu_index) + ": this machine has " +
                        std::to_string(count) + " CUDA device(s)");
    }
    check(cudaSetDevice(o.gpu_index), "cudaSetDevice");
    check(cudaGetDeviceProperties(&props_, o.gpu_index), "cudaGetDeviceProperties");
    capacity_threads_ = props_.multiProcessorCount * props_.maxThreadsPerMultiProcessor;

    // The GPU whose power is measured: the same device under CUDA_VISIBLE_DEVICES too.
    const measure::NvmlLoadResult loaded = measure::NvmlLibrary::load();
    const unsigned int nvml_gpu =
        loaded.library ? measure::nvml_index_of_cuda_device(*loaded.library, o.gpu_index)
                       : static_cast<unsigned int>(o.gpu_index);
    measure::Detection nvml = measure::open_nvml_sources(std::to_string(nvml_gpu));
    if (nvml.sources.empty()) {
      std::string why = "NVML GPU " + std::to_string(nvml_gpu) + " is not available";
      for (const auto& u : nvml.unavailable) why += "; " + u.source + ": " + u.reason;
      throw DeviceError(why);
    }
    info_ = nvml.sources.front()->info();
    sampler_ =
        std::make_unique<measure::Sampler>(std::move(nvml.sources), measure::SamplerOptions{});
    sampler_->start();
    meter_ = std::make_unique<measure::Meter>(*sampler_);
  }

  BenchmarkRun run() {
    BenchmarkRun result;
    std::mt19937_64 rng(12345);
    for (device::Precision p : options_.precisions) {
      if (p == device::Precision::kFp32) {
        run_precision<float>(p, rng, result);
      } else if (p == device::Precision::kFp64) {
        run_precision<double>(p, rng, result);
      } else {
        throw InvalidInput("--precision: the archline kernels support fp32 and fp64");
      }
    }
    result.context = {{"device_name", info_.name},
                      {"device_uuid", info_.uuid},
                      {"driver_version", info_.driver_version},
                      {"cuda_device", std::to_string(options_.gpu_index)},
                      {"sm_count", std::to_string(props_.multiProcessorCount)},
                      {"resident_threads", std::to_string(capacity_threads_)},
                      {"reference_sm_clock_mhz", std::to_string(reference_clock_mhz_)},
                      {"power_limit_w", info_.power_limit_w ? std::to_string(*info_.power_limit_w)
                                                            : std::string("unknown")},
                      {"energy_method", info_.has_energy_counter ? "counter" : "power-mean"},
                      {"elements_per_buffer", std::to_string(kElements)},
                      {"sass_validated",
                       "no (PTX checked: N fma, 1 load + 1 store per element; SASS not checked)"}};
    sampler_->stop();
    return result;
  }

 private:
  template <typename T>
  void run_precision(device::Precision p, std::mt19937_64& rng, BenchmarkRun& result) {
    DeviceBuffer in(kElements * sizeof(T));
    DeviceBuffer out(kElements * sizeof(T));
    init_kernel<T><<<1024, kBlockThreads>>>(static_cast<T*>(in.data), kElements);
    check(cudaGetLastError(), "init_kernel launch");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    const auto rooflines = roofline_table<T>(Exponents{});
    const auto flops = flop_table<T>(Exponents{});
    std::vector<Kernel> kernels;
    const double word = sizeof(T);
    for (int n : options_.fma_per_thread) {
      kernels.push_back(
          {BenchmarkKind::kRoofline, n, find_launch(rooflines, n), 2.0 * n, 2 * word});
    }
    if (options_.reference_benchmarks) {
      kernels.push_back({BenchmarkKind::kBaseline, 0, &launch_baseline<T>, 0, 0});
      kernels.push_back({BenchmarkKind::kCopy, 0, &launch_copy<T>, 0, 2 * word});
      const int n_max =
          *std::max_element(options_.fma_per_thread.begin(), options_.fma_per_thread.end());
      kernels.push_back({BenchmarkKind::kFlop, n_max, find_launch(flops, n_max), 2.0 * n_max, 0});
    }

    if (reference_clock_mhz_ == 0) warm_up(rooflines.back().second, in.data, out.data);

    for (double occupancy : options_.occupancies) {
      if (!(occupancy > 0 && occupancy <= 1)) {
        throw InvalidInput("occupancy " + std::to_string(occupancy) + ": expected (0, 1]");
      }
      const int blocks =
          std::max(1, static_cast<int>(std::lround(occupancy * capacity_threads_ / kBlockThreads)));
      const double achieved_occupancy =
          std::min(1.0, static_cast<double>(blocks) * kBlockThreads / capacity_threads_);
      for (const Kernel& k : kernels) {
        random_workload(rng, in.data, out.data);
        ArchlinePoint point = measure_point<T>(k, blocks, in.data, out.data);
        point.precision = p;
        point.occupancy = achieved_occupancy;
        result.points.push_back(point);
        if (options_.progress) {
          options_.progress(
              std::string(to_string(k.kind)) + " " + std::string(device::to_string(p)) +
              " N=" + std::to_string(k.fma_per_element) + " occupancy " +
              std::to_string(achieved_occupancy) + ": " + std::to_string(point.time_s) + " s, " +
              std::to_string(point.power_mean_w) + " W" +
              (point.admitted ? "" : " (not admitted: other clock)"));
        }
      }
    }
  }

  // Raises the clocks (the seed's initialization kernel) and takes the highest SM clock seen as
  // the reference clock of §3.1.2, unless the user gave one.
  void warm_up(Launch launch, void* in, void* out) {
    const double begin = sampler_->now_s();
    const int blocks = capacity_threads_ / kBlockThreads;
    while (sampler_->now_s() - begin < 2.0) {
      for (int i = 0; i < 20; ++i) launch(blocks, out, in, kElements, 1e-7);
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (warm-up)");
    }
    double highest = 0;
    for (const measure::PowerSample& s : sampler_->samples(0, begin, sampler_->now_s())) {
      if (s.sm_clock_mhz) highest = std::max(highest, *s.sm_clock_mhz);
    }
    reference_clock_mhz_ = options_.reference_sm_clock_mhz.value_or(highest);
  }

  // §3.3: "a random workload is submitted between benchmark runs" so that one point's thermal
  // and clock state does not carry into the next: 50–200 ms of copies at a random occupancy.
  void random_workload(std::mt19937_64& rng, void* in, void* out) {
    std::uniform_int_distribution<int> blocks(1, std::max(1, capacity_threads_ / kBlockThreads));
    std::uniform_real_distribution<double> seconds(0.05, 0.2);
    const double until = sampler_->now_s() + seconds(rng);
    const int b = blocks(rng);
    while (sampler_->now_s() < until) {
      launch_copy<float>(b, out, in, kElements, 0);
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (random workload)");
    }
  }

  // Alg. 5: time one launch, then record start, launch a batch lasting batch_time_s, record
  // end; synchronize to the start event, open the power window, poll until the end event
  // completes, close the window.
  template <typename T>
  ArchlinePoint measure_point(const Kernel& k, int blocks, void* in, void* out) {
    Event calibrate_start;
    Event calibrate_end;
    k.launch(blocks, out, in, kElements, 1e-7);  // untimed first launch
    check(cudaEventRecord(calibrate_start.event), "cudaEventRecord");
    k.launch(blocks, out, in, kElements, 1e-7);
    check(cudaEventRecord(calibrate_end.event), "cudaEventRecord");
    check(cudaEventSynchronize(calibrate_end.event), "cudaEventSynchronize");
    float one_ms = 0;
    check(cudaEventElapsedTime(&one_ms, calibrate_start.event, calibrate_end.event),
          "cudaEventElapsedTime");
    const long launches = std::max(
        1L, static_cast<long>(std::ceil(options_.batch_time_s / std::max(1e-6, one_ms * 1e-3))));

    Event start;
    Event end;
    check(cudaEventRecord(start.event), "cudaEventRecord");
    k.launch(blocks, out, in, kElements, 1e-7);
    check(cudaEventSynchronize(start.event), "cudaEventSynchronize");
    const std::size_t window = meter_->begin();
    for (long i = 1; i < launches; ++i) k.launch(blocks, out, in, kElements, 1e-7);
    check(cudaGetLastError(), "kernel launch");
    check(cudaEventRecord(end.event), "cudaEventRecord");
    while (true) {
      const cudaError_t status = cudaEventQuery(end.event);
      if (status == cudaSuccess) break;
      if (status != cudaErrorNotReady) check(status, "cudaEventQuery");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    measure::WindowOptions window_options;
    window_options.sigma_filter = 0;  // keep every sample; off-clock points are judged whole
    const measure::Measurement m = meter_->end(window, window_options);
    float elapsed_ms = 0;
    check(cudaEventElapsedTime(&elapsed_ms, start.event, end.event), "cudaEventElapsedTime");

    // The result must be finite (bounded operands); read a few elements back.
    T probe[64];
    check(cudaMemcpy(probe, out, sizeof(probe), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (k.kind == BenchmarkKind::kRoofline) {
      for (T v : probe) {
        if (!std::isfinite(static_cast<double>(v))) {
          throw InternalError("roofline kernel produced a non-finite value");
        }
      }
    }

    const measure::SourceMeasurement& s = m.sources.front();
    if (!s.energy_j || s.time_s <= 0) {
      throw DeviceError("NVML gave no energy or power for GPU " +
                        std::to_string(options_.gpu_index) +
                        (s.source_failed ? ": " + s.source_error : std::string()));
    }
    ArchlinePoint p;
    p.benchmark = k.kind;
    p.time_s = elapsed_ms * 1e-3;
    // The window is the host's view of [start, end] (a few ms wider); its mean power times the
    // event time is the batch's energy.
    p.power_mean_w = *s.energy_j / s.time_s;
    p.energy_j = p.power_mean_w * p.time_s;
    const double elements = static_cast<double>(kElements) * static_cast<double>(launches);
    p.flop_count = k.flop_per_element * elements;
    p.byte_count = k.bytes_per_element * elements;
    p.sm_clock_mhz = s.dominant_sm_clock_mhz;
    std::size_t most = 0;
    for (const auto& [clock, count] : s.memory_clocks_seen) {
      if (count > most) {
        most = count;
        p.memory_clock_mhz = clock;
      }
    }
    p.throttle_reasons = s.throttle_reasons_seen;
    // §3.1.2: only points at the reference clock enter the fit.
    p.admitted =
        !s.dominant_sm_clock_mhz ||
        std::fabs(*s.dominant_sm_clock_mhz - reference_clock_mhz_) <= options_.clock_tolerance_mhz;
    return p;
  }

  BenchmarkRunOptions options_;
  cudaDeviceProp props_{};
  int capacity_threads_ = 0;
  measure::SourceInfo info_;
  std::unique_ptr<measure::Sampler> sampler_;
  std::unique_ptr<measure::Meter> meter_;
  double reference_clock_mhz_ = 0;
};

}  // namespace

bool cuda_kernels_built() { return true; }

BenchmarkRun run_benchmarks(const BenchmarkRunOptions& options) {
  if (options.precisions.empty() || options.fma_per_thread.empty() || options.occupancies.empty() ||
      !(options.batch_time_s > 0)) {
    throw InvalidInput(
        "archline run: expected precisions, intensities, occupancies and a "
        "positive batch time");
  }
  Runner runner(options);
  return runner.run();
}

}  // namespace nnergy::archline
