// How fast the device can hand out stamps from one word: the ceiling that the
// device-counter clock puts on recorded runs (one RMW per operation,
// exec/cuda/recording.cuh).
//
//   build/bench/stamp_bench [warps] [rmws_per_warp]
//
// Every warp's lane 0 does back-to-back fetch_adds, as a recording team's
// lane 0 does once per operation, on (a) the one word of the recording
// clock, acq_rel and relaxed, and (b) a word of its own, for the rate the
// memory system gives when nothing is shared. The figure is RMWs per second
// over the whole kernel (CUDA events), the median of 5 launches.
#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

enum class target { shared_word, own_word };

template <cuda::std::memory_order Order, target Where>
__global__ void hammer(std::uint64_t* words, int rmws) {
  if (threadIdx.x % 32 != 0) return;
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  // Own words are 128 bytes apart: one L2 line each.
  std::uint64_t* word = Where == target::shared_word ? words : words + warp * 16;
  cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> a(*word);
  std::uint64_t sink = 0;
  for (int i = 0; i < rmws; ++i) sink += a.fetch_add(1, Order);
  if (sink == 42) words[1] = sink;  // keeps the loop's results live
}

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "stamp_bench: %s: %s\n", #call, cudaGetErrorString(e_));   \
      std::exit(2);                                                                   \
    }                                                                                 \
  } while (0)

template <cuda::std::memory_order Order, target Where>
double rate(std::uint64_t* words, int warps, int rmws) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<double> per_second;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(a));
    hammer<Order, Where><<<(warps * 32 + 511) / 512, 512>>>(words, rmws);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    per_second.push_back(static_cast<double>(warps) * rmws / (ms * 1e-3));
  }
  std::sort(per_second.begin(), per_second.end());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return per_second[2];
}

}  // namespace

int main(int argc, char** argv) {
  const int warps = argc > 1 ? std::atoi(argv[1]) : 8448;
  const int rmws = argc > 2 ? std::atoi(argv[2]) : 256;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "stamp_bench: no CUDA device\n");
    return 2;
  }
  if (warps < 1 || rmws < 1) {
    std::fprintf(stderr, "stamp_bench: warps and rmws_per_warp must be positive\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::uint64_t* words = nullptr;
  const std::size_t word_count = static_cast<std::size_t>(warps) * 16 + 16;
  CHECK(cudaMalloc(&words, word_count * sizeof(std::uint64_t)));
  CHECK(cudaMemset(words, 0, word_count * sizeof(std::uint64_t)));
  using cuda::std::memory_order_acq_rel;
  using cuda::std::memory_order_relaxed;
  std::printf("stamp_bench on %s (%d SMs): %d warps x %d RMWs, median of 5\n", prop.name, prop.multiProcessorCount, warps,
              rmws);
  std::printf("  one word, acq_rel:  %8.1f M RMW/s\n", rate<memory_order_acq_rel, target::shared_word>(words, warps, rmws) / 1e6);
  std::printf("  one word, relaxed:  %8.1f M RMW/s\n", rate<memory_order_relaxed, target::shared_word>(words, warps, rmws) / 1e6);
  std::printf("  own words, acq_rel: %8.1f M RMW/s\n", rate<memory_order_acq_rel, target::own_word>(words, warps, rmws) / 1e6);
  std::printf("  own words, relaxed: %8.1f M RMW/s\n", rate<memory_order_relaxed, target::own_word>(words, warps, rmws) / 1e6);
  CHECK(cudaFree(words));
  return 0;
}
