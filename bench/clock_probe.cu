// Checks the assumptions behind %globaltimer stamps on this GPU, and measures
// its resolution.
//
//   build/bench/clock_probe [warps] [rounds]
//
// Every warp's lane 0 repeatedly reads the timer (t1), takes a ticket from a
// device-wide counter with a seq_cst RMW, and reads the timer again (t2). The
// tickets are a total order consistent with real time, so if the timer is
// one clock for the whole device, a ticket taken after another cannot have a
// t2 below the earlier ticket's t1. The probe counts such inversions across
// all pairs (the running maximum of t1 in ticket order against each t2), and
// reports the smallest step between distinct readings.
#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__device__ std::uint64_t timer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

struct sample {
  std::uint64_t t1, t2;
};

__global__ void probe(std::uint64_t* counter, sample* by_ticket, int rounds) {
  if (threadIdx.x % 32 != 0) return;
  cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> ticket(*counter);
  for (int r = 0; r < rounds; ++r) {
    __threadfence();
    const std::uint64_t t1 = timer();
    __threadfence();
    const std::uint64_t x = ticket.fetch_add(1, cuda::std::memory_order_seq_cst);
    __threadfence();
    const std::uint64_t t2 = timer();
    by_ticket[x] = {t1, t2};
  }
}

#define CHECK(call)                                                                           \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "clock_probe: %s: %s\n", #call, cudaGetErrorString(e_));           \
      return 2;                                                                               \
    }                                                                                         \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const int warps = argc > 1 ? std::atoi(argv[1]) : 8192;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 64;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "clock_probe: no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::size_t n = static_cast<std::size_t>(warps) * rounds;
  std::uint64_t* counter = nullptr;
  sample* samples = nullptr;
  CHECK(cudaMalloc(&counter, sizeof *counter));
  CHECK(cudaMalloc(&samples, n * sizeof(sample)));
  CHECK(cudaMemset(counter, 0, sizeof *counter));
  probe<<<(warps * 32 + 255) / 256, 256>>>(counter, samples, rounds);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<sample> host(n);
  CHECK(cudaMemcpy(host.data(), samples, n * sizeof(sample), cudaMemcpyDeviceToHost));
  std::uint64_t inversions = 0, running_t1 = 0, ties = 0;
  for (const sample& s : host) {
    if (s.t2 < running_t1) ++inversions;
    if (s.t2 == running_t1) ++ties;
    running_t1 = std::max(running_t1, s.t1);
  }
  std::vector<std::uint64_t> readings;
  readings.reserve(2 * n);
  for (const sample& s : host) {
    readings.push_back(s.t1);
    readings.push_back(s.t2);
  }
  std::sort(readings.begin(), readings.end());
  std::uint64_t step = ~0ull;
  std::size_t distinct = 1;
  for (std::size_t i = 1; i < readings.size(); ++i) {
    if (readings[i] != readings[i - 1]) {
      step = std::min(step, readings[i] - readings[i - 1]);
      ++distinct;
    }
  }
  std::printf("clock_probe on %s (%d SMs): %zu tickets from %d warps\n", prop.name, prop.multiProcessorCount, n, warps);
  std::printf("  inversions (a later ticket's t2 below an earlier ticket's t1): %llu\n", (unsigned long long)inversions);
  std::printf("  ties (a later ticket's t2 equal to the latest earlier t1): %llu\n", (unsigned long long)ties);
  std::printf("  distinct readings %zu of %zu, smallest step %llu ns, span %llu ns\n", distinct, readings.size(),
              (unsigned long long)step, (unsigned long long)(readings.back() - readings.front()));
  cudaFree(counter);
  cudaFree(samples);
  return inversions == 0 ? 0 : 1;
}
