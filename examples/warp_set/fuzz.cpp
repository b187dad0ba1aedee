// Fuzzing warp_set.cuh through the layer: each seed runs four warps, each
// inserting its own key, under PCT over warps; then a second launch
// searches every key. An insert that returned true whose key is gone is
// the bug. The fixed
// variant (WARP_SET_FIXED) must come out clean over the same seeds.
//
//   g++ -std=c++20 -Iinclude examples/warp_set/fuzz.cpp build-host/libgfsl_cuda_on_cpu.a ...
//   (in-tree: the target example_warp_set; ctest -R example_warp_set)
#include "gfsl/cpu/cuda.hpp"
#include "warp_set.cuh"

#include <cstdio>
#include <cstdlib>

__global__ void insert(std::uint32_t* slots, std::uint32_t* inserted) {
  const std::uint32_t warp = threadIdx.x / 32;
  const bool ok = warp_set_insert(slots, 100 + warp);
  if ((threadIdx.x & 31) == 0) inserted[warp] = ok;
}
__global__ void search(std::uint32_t* slots, std::uint32_t* found) {
  const std::uint32_t warp = threadIdx.x / 32;
  const bool there = warp_set_contains(slots, 100 + warp);
  if ((threadIdx.x & 31) == 0) found[warp] = there;
}

int main(int argc, char** argv) {
  const std::uint64_t seeds = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000;
  std::uint64_t lost = 0, first = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    std::uint32_t slots[32], inserted[4] = {}, found[4] = {};
    for (std::uint32_t& s : slots) s = warp_set_empty;
    gfsl::cpu::options o;
    o.strategy = "pct";
    o.depth = 2;
    o.pct_steps = 300;
    o.seed = seed;
    if (!gfsl::cpu::launch(o, 1, 4 * 32, insert, slots, inserted).ok()) return 2;  // a fault: its line is on stderr
    if (!gfsl::cpu::launch(o, 1, 4 * 32, search, slots, found).ok()) return 2;
    for (int w = 0; w < 4; ++w) {
      if (inserted[w] && !found[w]) {
        if (lost++ == 0) first = seed;
        break;
      }
    }
  }
  std::printf("%llu of %llu seeds lost an insert (first: seed %llu)\n", static_cast<unsigned long long>(lost),
              static_cast<unsigned long long>(seeds), static_cast<unsigned long long>(first));
#if defined(WARP_SET_FIXED)
  return lost == 0 ? 0 : 1;
#else
  return lost > 0 ? 0 : 1;
#endif
}
