// Plain loads and stores on the installed layer, instrumented
// (gfsl_cuda_on_cpu_instrument): one warp's lanes write pairs of words, the
// other's read them; a read that sees half of a pair, which needs another
// warp between a lane's two plain accesses, shows in some seed. Exit 0 when
// one did (uninstrumented, none does).
#include <gfsl/cpu/cuda.hpp>

__global__ void pairs(unsigned* words, unsigned* torn) {
  const unsigned lane = threadIdx.x & 31;
  if (threadIdx.x < 32) {
    words[lane] = 1;
    words[32 + lane] = 1;
  } else if (words[lane] != words[32 + lane]) {
    torn[lane] = 1;
  }
}

int main() {
  unsigned* words = nullptr;
  cudaMalloc(&words, 64 * sizeof(unsigned));
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    cudaMemset(words, 0, 64 * sizeof(unsigned));
    unsigned torn[32] = {};
    gfsl::cpu::options o;
    o.seed = seed;
    const gfsl::cpu::launch_result r = gfsl::cpu::launch(o, 1, 64, pairs, words, torn);
    if (!r.ok()) return 2;
    for (unsigned t : torn) {
      if (t) return 0;
    }
  }
  return 1;
}
