// Small CUDA structures whose faults need a plain load interleaved or stale,
// compiled twice (kernels.inc): in namespace `instrumented` with
// -fsanitize=thread (gfsl_cuda_on_cpu_instrument's callbacks) and in
// namespace `uninstrumented` without, so that one test runs both builds on
// the same seeds.
#pragma once

#include <cstdint>

#include "gfsl/cpu/cuda.hpp"

#define GFSL_PLAIN_KERNELS_API                                                                              \
  /* Warp 0's lanes each write a pair (lo, hi) = (v, v), rounds 1.., with  */                            \
  /* two plain stores; warp 1's lanes each read one pair with two plain     */                            \
  /* loads and count the reads whose halves differ (a torn pair).           */                            \
  std::uint32_t torn_pairs(std::uint64_t seed, const char* memory);                                        \
  /* Message passing: warp 0 lane 0 stores data = 42, fences, stores flag =  */                           \
  /* 1 (plain stores); warp 1 lane 0 reads flag and then data (volatile),   */                            \
  /* with a fence between them when reader_fences.                          */                            \
  struct message_seen {                                                                                   \
    std::uint32_t flag = 0, data = 0;                                                                     \
  };                                                                                                      \
  message_seen message(std::uint64_t seed, const char* memory, bool reader_fences);                       \
  /* Warp 1 lane 0 spins on a volatile flag that warp 0 sets (released) or */                             \
  /* nobody sets.                                                           */                            \
  gfsl::cpu::launch_result spin(std::uint64_t seed, bool released, std::uint64_t livelock_steps);

namespace instrumented {
GFSL_PLAIN_KERNELS_API
}
namespace uninstrumented {
GFSL_PLAIN_KERNELS_API
}
