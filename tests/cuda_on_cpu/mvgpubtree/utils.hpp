// A shadow of MVGpuBTree's include/utils.hpp, for its node.hpp: the bit
// intrinsics it calls (utils::bits::bfe and bfind, inline PTX upstream) in
// C++ with PTX's results (bfind of 0 is -1). The host-side queries of the
// original (device memory use, CUDA limits) are left out: node.hpp uses none.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace utils {
namespace bits {
__device__ inline int bfe(uint32_t src, int num_bits) {
  return num_bits >= 32 ? static_cast<int>(src) : static_cast<int>(src & ((1u << num_bits) - 1u));
}
__device__ inline int bfind(uint32_t src) { return src == 0 ? -1 : 31 - __builtin_clz(src); }
__device__ inline int bfind(uint64_t src) { return src == 0 ? -1 : 63 - __builtin_clzll(src); }
}  // namespace bits
}  // namespace utils
