// Must not compile: block barriers are not emulated (test_cuda_on_cpu_syncthreads).
#include "gfsl/cpu/cuda.hpp"

__global__ void k(unsigned* out) {
  out[threadIdx.x] = 1;
  __syncthreads();
}
