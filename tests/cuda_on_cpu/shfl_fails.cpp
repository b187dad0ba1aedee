// Must not compile: a pre-Volta shuffle has no mask to check (test_cuda_on_cpu_shfl).
#include "gfsl/cpu/cuda.hpp"

__global__ void k(unsigned* out) { out[threadIdx.x] = __shfl(out[threadIdx.x], 0); }
