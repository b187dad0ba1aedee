// The user's structure, unchanged: it includes <memory_utils.hpp> and
// <cuda_runtime.h>; the include path decides what they are
// (test_cuda_on_cpu_shadow compiles it with the shadow folder first).
#include <cuda_runtime.h>
#include <memory_utils.hpp>

__global__ void wait_for(const unsigned* flag, unsigned* seen) { seen[threadIdx.x] = load_acquire(flag); }

int main() {
  unsigned flag = 7, seen[32] = {};
  const auto r = gfsl::cpu::launch(1, 32, wait_for, &flag, seen);
  return r.ok() && seen[31] == 7 ? 0 : 1;
}
