// gfsl stress on the GPU: what every subject's runner shares (the runner
// itself is the template of stress/gpu_stress.cuh), and run_on_gpu, which
// reaches a subject's runner through the device registry
// (exec/cuda/device_registry.hpp).
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/cuda/device_team.cuh"
#include "exec/cuda/cuda_check.cuh"
#include "stress/gpu_stress.cuh"
#include "stress/runner.hpp"

namespace gfsl::stress {

namespace {

__global__ void read_clock(std::uint64_t* out) { *out = global_timer_ns(); }

}  // namespace

std::uint64_t device_now() {
  cuda_util::device_buffer<std::uint64_t> t(1);
  read_clock<<<1, 1>>>(t.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  std::uint64_t now = 0;
  GFSL_CUDA_CHECK(cudaMemcpy(&now, t.ptr, sizeof now, cudaMemcpyDeviceToHost));
  return now;
}

bool wait_for_slice(cudaEvent_t done, double seconds, const options& o, mapped_flag& stop) {
  using clock_type = std::chrono::steady_clock;
  const auto start = clock_type::now();
  for (;;) {
    const cudaError_t e = cudaEventQuery(done);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) GFSL_CUDA_CHECK(e);
    if (stop_requested(o)) stop.raise();
    if (std::chrono::duration<double>(clock_type::now() - start).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0)) return "no CUDA device";
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  return {};
}

config_result run_on_gpu(const options& o, int chunk, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  // The device registry: one case per subject that runs on the GPU.
  switch (o.subject) {
#define GFSL_DEVICE_SUBJECT(name) \
  case subject_kind::name:        \
    return run_gpu_subject<subject_kind::name>(o, chunk, range, progress, fatal);
#include "device_subjects.inc"
#undef GFSL_DEVICE_SUBJECT
    default:
      break;
  }
  throw std::invalid_argument(std::string("--subject ") + subject_name(o.subject) +
                              " has no device policy: it runs on the CPU backends only (docs/SUBJECTS.md, \"The GPU side\")");
}

}  // namespace gfsl::stress
