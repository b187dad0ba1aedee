// How teams share out the operations of a kernel: each takes up to `batch`
// at a time from one device-wide cursor, so that no team is left running a
// long fixed block alone after the others have finished (docs/BENCHMARKS.md,
// "Operations taken in batches"). Used by the testbed's runner
// (device_runner.cu) and the benchmark kernel (bench/evaluation_kernels.cuh).
#pragma once

#include <algorithm>
#include <cstdint>

#include "../../core/cuda/device_team.cuh"

namespace gfsl {

// The batch for `count` operations over `teams`: at most `most`, and small
// enough that every team takes about eight batches (one batch is the work a
// team may be left doing alone at the end; insert-only at 1M keys gives a
// team 118 operations). 0 (fixed blocks) when `most` is 0.
inline std::uint32_t batch_for(std::uint32_t most, std::uint64_t count, std::uint32_t teams) {
  if (most == 0) return 0;
  const std::uint64_t per_team = count / std::max<std::uint64_t>(teams, 1);
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(per_team / 8, 1, most));
}

// Moves [j, end) to the team's next batch from `cursor`. False when none are
// left, or when `batch` is 0 (a team's fixed block is its only one).
template <int N>
__device__ bool next_batch(device_team<N>& team, unsigned long long* cursor, std::uint32_t batch, std::uint64_t count,
                           std::uint64_t& j, std::uint64_t& end) {
  if (batch == 0) return false;
  std::uint64_t b = 0;
  if (team.lane() == 0) b = atomicAdd(cursor, static_cast<unsigned long long>(batch));
  b = team.shfl(typename device_team<N>::lanes{b}, 0);
  if (b >= count) return false;
  j = b;
  end = b + batch < count ? b + batch : count;
  return true;
}

}  // namespace gfsl
