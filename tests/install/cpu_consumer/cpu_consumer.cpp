// Device code as for CUDA, run on the installed layer: a warp-wide sum by
// shuffles and an atomic total over four warps.
#include <gfsl/cpu/cuda.hpp>

__global__ void sum(unsigned* total) {
  unsigned v = threadIdx.x;
  for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
  if ((threadIdx.x & 31) == 0) atomicAdd(total, v);
}

int main() {
  unsigned total = 0;
  gfsl::cpu::options o;
  o.strategy = "pct";
  o.seed = 3;
  const gfsl::cpu::launch_result r = gfsl::cpu::launch(o, 1, 128, sum, &total);
  return r.ok() && total == 127u * 128u / 2u ? 0 : 1;
}
