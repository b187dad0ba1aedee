// A user's warp-cooperative set of 32-bit keys, as one would write it for
// CUDA: one slab of 32 slots, each lane owns one; a warp inserts a key by
// looking for it in every slot at once and claiming the first empty one.
// Compiles with nvcc as it stands; nothing in it knows about gfsl.
//
// Its bug: the claim is an atomicExch, not an atomicCAS. Two warps that
// read the same empty slot both "claim" it and the second overwrites the
// first's key: an insert that returned true, lost. WARP_SET_FIXED claims
// with atomicCAS and looks again when it loses.
#pragma once

#include <cstdint>

constexpr std::uint32_t warp_set_empty = 0xFFFFFFFFu;

// All 32 lanes call it; returns true when `key` was absent and is now stored.
__device__ inline bool warp_set_insert(std::uint32_t* slots, std::uint32_t key) {
  const std::uint32_t lane = threadIdx.x & 31;
  for (;;) {
    const std::uint32_t mine = *reinterpret_cast<volatile std::uint32_t*>(&slots[lane]);
    if (__ballot_sync(0xFFFFFFFFu, mine == key)) return false;
    const std::uint32_t empty = __ballot_sync(0xFFFFFFFFu, mine == warp_set_empty);
    if (empty == 0) return false;  // full
    const int dest = __ffs(empty) - 1;
    std::uint32_t won = 0;
    if (lane == 0) {
#if defined(WARP_SET_FIXED)
      won = atomicCAS(&slots[dest], warp_set_empty, key) == warp_set_empty;
#else
      atomicExch(&slots[dest], key);
      won = 1;
#endif
    }
    if (__shfl_sync(0xFFFFFFFFu, won, 0)) return true;
  }
}

__device__ inline bool warp_set_contains(std::uint32_t* slots, std::uint32_t key) {
  const std::uint32_t lane = threadIdx.x & 31;
  const std::uint32_t mine = *reinterpret_cast<volatile std::uint32_t*>(&slots[lane]);
  return __ballot_sync(0xFFFFFFFFu, mine == key) != 0;
}
