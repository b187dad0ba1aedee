// Must not compile: inline PTX has no CPU meaning (test_cuda_on_cpu_asm).
#include "gfsl/cpu/cuda.hpp"

__device__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}
