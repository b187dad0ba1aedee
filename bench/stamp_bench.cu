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
// over the whole kernel (CUDA events), the median of 5 launches. The paced
// rows give the latency an operation would wait for its stamp, for each
// order of the RMW and for a release add not waited for followed by an
// acquire load (`red+load`, a clock that would stamp with loads).
#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// Exactly `warps` warps: blocks of up to 16 warps.
struct launch_shape {
  unsigned blocks, threads;
};
launch_shape shape_of(int warps) {
  const unsigned threads = static_cast<unsigned>(std::min(warps, 16) * 32);
  return {static_cast<unsigned>((warps * 32 + threads - 1) / threads), threads};
}

enum class target { shared_word, own_word };

template <cuda::std::memory_order Order, target Where>
__global__ void hammer(std::uint64_t* words, int rmws, int warps) {
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (threadIdx.x % 32 != 0 || warp >= static_cast<std::size_t>(warps)) return;
  // Own words are 128 bytes apart: one L2 line each.
  std::uint64_t* word = Where == target::shared_word ? words : words + warp * 16;
  cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> a(*word);
  std::uint64_t sink = 0;
  for (int i = 0; i < rmws; ++i) sink += a.fetch_add(1, Order);
  if (sink == 42) words[1] = sink;  // keeps the loop's results live
}

// The one word under a paced load: each warp waits `gap_ns` between RMWs (as
// a recording team does its operation between two stamps) and sums the
// cycles each acq_rel RMW takes to return, so the latency an operation pays
// can be read against the rate the word serves. `AddThenLoad`: the boundary
// between two operations is a release add whose result is not waited for
// (RED) and an acquire load of the word, the stamp a load-based clock would
// take; the load is what an operation waits on, the cycles are the pair's.
template <cuda::std::memory_order Order, bool AddThenLoad = false>
__global__ void paced(std::uint64_t* words, int rmws, unsigned gap_ns, unsigned long long* cycles, int warps) {
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (threadIdx.x % 32 != 0 || warp >= static_cast<std::size_t>(warps)) return;
  cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> a(*words);
  std::uint64_t sink = 0;
  long long spent = 0;
  for (int i = 0; i < rmws; ++i) {
    if (gap_ns) __nanosleep(gap_ns);
    const long long t0 = clock64();
    if constexpr (AddThenLoad) {
      a.fetch_add(1, cuda::std::memory_order_release);
      sink += a.load(cuda::std::memory_order_acquire);
    } else {
      sink += a.fetch_add(1, Order);
    }
    // The next access waits for the value, as a recording team's does.
    if (sink == 1ull << 62) words[2] = 0;
    spent += clock64() - t0;
  }
  if (sink == 42) words[1] = sink;
  atomicAdd(cycles, static_cast<unsigned long long>(spent));
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
    hammer<Order, Where><<<shape_of(warps).blocks, shape_of(warps).threads>>>(words, rmws, warps);
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
  // Paced: the rate achieved and the mean cycles per RMW, at gaps from none
  // to a recording team's operation time (about 9 us at 1M keys, N = 32).
  unsigned long long* cycles = nullptr;
  CHECK(cudaMalloc(&cycles, sizeof *cycles));
  auto paced_row = [&](const char* order, auto kernel, unsigned gap) {
    const int paced_rmws = std::max(8, rmws / 8);
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    CHECK(cudaMemset(cycles, 0, sizeof *cycles));
    CHECK(cudaEventRecord(a));
    kernel<<<shape_of(warps).blocks, shape_of(warps).threads>>>(words, paced_rmws, gap, cycles, warps);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    unsigned long long total = 0;
    CHECK(cudaMemcpy(&total, cycles, sizeof total, cudaMemcpyDeviceToHost));
    const double n = static_cast<double>(warps) * paced_rmws;
    std::printf("    %-8s gap %5u ns: %8.1f M RMW/s, %8.0f SM cycles per RMW\n", order, gap, n / (ms * 1e-3) / 1e6,
                static_cast<double>(total) / n);
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
  };
  std::printf("  paced, one word (gap = __nanosleep between a warp's RMWs):\n");
  for (unsigned gap : {0u, 2000u, 8000u}) {
    paced_row("relaxed", paced<cuda::std::memory_order_relaxed>, gap);
    paced_row("acquire", paced<cuda::std::memory_order_acquire>, gap);
    paced_row("release", paced<cuda::std::memory_order_release>, gap);
    paced_row("acq_rel", paced<cuda::std::memory_order_acq_rel>, gap);
    paced_row("red+load", paced<cuda::std::memory_order_relaxed, true>, gap);
  }
  CHECK(cudaFree(cycles));
  CHECK(cudaFree(words));
  return 0;
}
