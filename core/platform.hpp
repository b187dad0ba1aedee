// Compilation-target glue shared by every core header. The algorithm is compiled
// twice from one source: by the host compiler for the CPU backend and by nvcc for
// the device backend; GFSL_FN marks functions that must exist in the target's
// code space.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
// On the device an out-of-line call passes the algorithm and the team through
// local memory, and once one exists every member access pays for it (H100,
// docs/BENCHMARKS.md: robust [10,10,80] at 607-614 Mops/s with nothing
// called, 471-482 with the compiler's inlining). Kernels
// that are measured define GFSL_DEVICE_INLINE_ALL and get every function
// inlined (N = 32's recording bench kernel calls one function of its own
// for inserts and deletes, bench/evaluation_kernels.cuh); the others (runner, stress, mutants) leave the choice to the
// compiler, which bounds their build time. GFSL_INLINE_FN marks the calls
// that are inlined everywhere. The price of inlining everything is code
// size: each call site is a copy, and a copy of the search per operation
// kind kept mixed workloads waiting on the instruction cache (H200: 51-59%
// of stall cycles at N = 16), which is why algorithm::apply has one call
// site for the search, and why the updates' rare paths are called apart
// (algorithm::apart, GFSL_APART_FN).
#if defined(__CUDA_ARCH__) && defined(GFSL_DEVICE_NOINLINE_ALL)
// The build that proves the device code compiles (CI, -DGFSL_CUDA_QUICK=ON):
// every function compiled once per instantiation, out of line, so that cicc
// and ptxas see small functions: about 35 s of CPU for stress/gpu_stress.cu
// against over 10 minutes inlined; slower kernels (docs/BUILD.md).
#define GFSL_FN __host__ __device__ __noinline__
#elif defined(__CUDA_ARCH__) && defined(GFSL_DEVICE_INLINE_ALL)
#define GFSL_FN __host__ __device__ __forceinline__
#else
#define GFSL_FN __host__ __device__ inline
#endif
#if defined(__CUDA_ARCH__) && defined(GFSL_DEVICE_NOINLINE_ALL)
#define GFSL_INLINE_FN __host__ __device__ __noinline__
#else
#define GFSL_INLINE_FN __host__ __device__ __forceinline__
#endif
// A function the algorithm calls apart (algorithm::apart): the rarely taken
// paths of the updates, compiled once instead of once per call site.
#define GFSL_APART_FN __host__ __device__ __noinline__
#else
#define GFSL_FN inline
#define GFSL_INLINE_FN inline
#define GFSL_APART_FN inline
#endif

namespace gfsl {

GFSL_FN int popcount32(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

// Index of the highest set bit; -1 for zero. Ballots give precedence to the
// highest lane (thesis 4.2.1), so this is the one reduction every step uses.
GFSL_FN int highest_bit(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(x);  // __clz(0) is 32: FLO alone, no test for zero
#else
  if (x == 0) return -1;
  return 31 - __builtin_clz(x);
#endif
}

}  // namespace gfsl
