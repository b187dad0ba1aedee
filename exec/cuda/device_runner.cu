// What the device runners of every subject share (the runner itself is the
// template of exec/cuda/device_runner.cuh): the history grouped by key on the
// device, the device's clock, and run_on_device, which reaches a subject's
// runner through the device registry (exec/cuda/device_registry.hpp).
#include <algorithm>
#include <stdexcept>
#include <string>

#include <cub/device/device_radix_sort.cuh>

#include "../../core/cuda/device_team.cuh"
#include "../../core/subject.hpp"
#include "cuda_check.cuh"
#include "device_registry.hpp"
#include "device_runner.hpp"

namespace gfsl {

namespace {

using cuda_util::device_buffer;

__global__ void read_timer(std::uint64_t* out) { *out = global_timer_ns(); }

__global__ void gather_keys(const model::op_record* records, const std::uint32_t* index, std::uint64_t n, std::uint32_t* keys) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    keys[i] = records[index[i]].op.key;
  }
}

__global__ void sort_keys_of(const model::op_record* records, std::uint64_t n, std::uint64_t* calls, std::uint32_t* keys,
                             std::uint32_t* index) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    calls[i] = records[i].call;
    keys[i] = records[i].op.key;
    index[i] = static_cast<std::uint32_t>(i);
  }
}

__global__ void gather_records(const model::op_record* from, const std::uint32_t* index, std::uint64_t n,
                               model::op_record* to) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    to[i] = from[index[i]];
  }
}

// Groups the records by key, each key's records by call stamp: a stable
// radix sort by call, then a stable one by key. Returns device milliseconds.
float partition_by_key(model::op_record* records, std::uint64_t n) {
  if (n == 0) return 0;
  if (n > 0xFFFFFFFFull) throw std::runtime_error("history too long to partition on the device");
  device_buffer<std::uint64_t> calls(n), calls_alt(n);
  device_buffer<std::uint32_t> keys(n), keys_alt(n), index(n), index_alt(n), index_tmp(n);
  device_buffer<model::op_record> sorted(n);
  cuda_util::event_timer timer;
  sort_keys_of<<<1024, 256>>>(records, n, calls.ptr, keys.ptr, index.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  const int count = static_cast<int>(n);
  std::size_t temp_bytes = 0, temp_bytes2 = 0;
  GFSL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, calls.ptr, calls_alt.ptr, index.ptr, index_alt.ptr, count));
  GFSL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes2, keys.ptr, keys_alt.ptr, index_tmp.ptr, index.ptr, count));
  device_buffer<unsigned char> temp(std::max(temp_bytes, temp_bytes2));
  temp_bytes = std::max(temp_bytes, temp_bytes2);
  GFSL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp_bytes, calls.ptr, calls_alt.ptr, index.ptr, index_alt.ptr, count));
  // Keys in call order, then a stable sort by key keeps call order per key.
  gather_keys<<<1024, 256>>>(records, index_alt.ptr, n, keys.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  GFSL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp_bytes, keys.ptr, keys_alt.ptr, index_alt.ptr, index.ptr, count));
  gather_records<<<1024, 256>>>(records, index.ptr, n, sorted.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  GFSL_CUDA_CHECK(cudaMemcpy(records, sorted.ptr, n * sizeof(model::op_record), cudaMemcpyDeviceToDevice));
  return timer.stop();
}


}  // namespace

float partition_records_by_key(model::op_record* records, std::uint64_t n) { return partition_by_key(records, n); }

std::uint64_t device_timer_now() {
  device_buffer<std::uint64_t> t(1);
  read_timer<<<1, 1>>>(t.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  std::uint64_t now = 0;
  GFSL_CUDA_CHECK(cudaMemcpy(&now, t.ptr, sizeof now, cudaMemcpyDeviceToHost));
  return now;
}

void reset_device_after_fault() {
  cudaGetLastError();
  cudaDeviceReset();
}

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0)) {
    return "no CUDA device";
  }
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  return {};
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

device_run run_on_device(const model::workload& w, const device_options& o) {
  if (o.threads_per_block % 32 != 0 || o.threads_per_block <= 0 || o.threads_per_block > device_options::max_threads_per_block) {
    throw std::invalid_argument("threads per block must be a multiple of 32 in [32, " +
                                std::to_string(device_options::max_threads_per_block) + "]");
  }
  // The device registry (exec/cuda/device_registry.hpp): one case per subject
  // that runs on the GPU.
  switch (w.subject) {
#define GFSL_DEVICE_SUBJECT(name) \
  case subject_kind::name:        \
    return run_device_subject<subject_kind::name>(w, o);
#include "device_subjects.inc"
#undef GFSL_DEVICE_SUBJECT
    default:
      break;
  }
  throw std::invalid_argument(std::string("--subject ") + subject_name(w.subject) +
                              " has no device policy: it runs on the CPU backends only (docs/SUBJECTS.md, \"The GPU side\")");
}

}  // namespace gfsl
