// A user's header of inline-PTX loads, as structures ship them (the shape of
// MVGpuBTree's memory_utils.hpp): it cannot compile through the layer.
#pragma once
#include <cuda_runtime.h>
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
