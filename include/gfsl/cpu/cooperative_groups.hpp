// Cooperative groups on the CPU layer (include/gfsl/cpu/cuda.hpp): a tile's
// operations are the warp collectives of its lanes' mask, so CUDA's mask
// rules are checked for them as for the intrinsics, and several tiles of
// one warp (tiled_partition<4> gives eight) complete apart. Source lines of
// the user's calls reach fault lines through default arguments.
//
// Covered: this_thread_block() (sync, thread_rank, size, num_threads,
// group_index, thread_index, dim_threads, group_dim), tiled_partition<N> of
// a block or a tile, thread_block_tile<N> for N a power of two in 1..32
// (sync, thread_rank, size, num_threads, meta_group_rank, meta_group_size,
// shfl, shfl_up, shfl_down, shfl_xor, ballot, any, all, match_any,
// match_all), and cooperative_groups::sync(g). Grids, coalesced groups,
// clusters and the dynamic tiled_partition(g, n) are not (g++ names them).
#pragma once

#include "cuda.hpp"

namespace cooperative_groups {

class thread_block {
 public:
  static void sync(GFSL_CPU_HERE) { __syncthreads(where); }
  static unsigned thread_rank() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
  static unsigned size() { return blockDim.x * blockDim.y * blockDim.z; }
  static unsigned num_threads() { return size(); }
  static dim3 group_index() { return {blockIdx.x, blockIdx.y, blockIdx.z}; }
  static dim3 thread_index() { return {threadIdx.x, threadIdx.y, threadIdx.z}; }
  static dim3 dim_threads() { return {blockDim.x, blockDim.y, blockDim.z}; }
  static dim3 group_dim() { return dim_threads(); }
};

inline thread_block this_thread_block() { return {}; }

namespace detail {
// The calling lane's lane in its warp.
inline unsigned lane() { return ::gfsl::cpu::detail::ids().lane; }
}  // namespace detail

template <unsigned N, class Parent = void>
class thread_block_tile;

template <unsigned N>
class thread_block_tile<N, void> {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "gfsl::cpu: thread_block_tile<N> needs N a power of two in 1..32");

 public:
  static constexpr unsigned num_threads_ = N;
  static constexpr unsigned num_threads() { return N; }
  static constexpr unsigned size() { return N; }
  unsigned thread_rank() const { return detail::lane() % N; }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  // The tile's lanes in the warp: what its collectives name.
  unsigned build_mask() const { return N == 32 ? 0xFFFFFFFFu : ((1u << N) - 1u) << base(); }

  void sync(GFSL_CPU_HERE) const { __syncwarp(build_mask(), where); }
  template <class T>
  T shfl(T var, int src_rank, GFSL_CPU_HERE) const {
    return __shfl_sync(build_mask(), var, src_rank, static_cast<int>(N), where);
  }
  template <class T>
  T shfl_up(T var, unsigned delta, GFSL_CPU_HERE) const {
    return __shfl_up_sync(build_mask(), var, delta, static_cast<int>(N), where);
  }
  template <class T>
  T shfl_down(T var, unsigned delta, GFSL_CPU_HERE) const {
    return __shfl_down_sync(build_mask(), var, delta, static_cast<int>(N), where);
  }
  template <class T>
  T shfl_xor(T var, unsigned lane_mask, GFSL_CPU_HERE) const {
    return __shfl_xor_sync(build_mask(), var, static_cast<int>(lane_mask), static_cast<int>(N), where);
  }
  // Bits by thread_rank, as cooperative groups give them (not by lane).
  unsigned ballot(int pred, GFSL_CPU_HERE) const { return __ballot_sync(build_mask(), pred, where) >> base(); }
  int any(int pred, GFSL_CPU_HERE) const { return __any_sync(build_mask(), pred, where); }
  int all(int pred, GFSL_CPU_HERE) const { return __all_sync(build_mask(), pred, where); }
  template <class T>
  unsigned match_any(T value, GFSL_CPU_HERE) const {
    return __match_any_sync(build_mask(), value, where) >> base();
  }
  template <class T>
  unsigned match_all(T value, int& pred, GFSL_CPU_HERE) const {
    return __match_all_sync(build_mask(), value, &pred, where) >> base();
  }

  thread_block_tile(unsigned meta_rank, unsigned meta_size) : meta_rank_(meta_rank), meta_size_(meta_size) {}

 private:
  unsigned base() const { return N == 32 ? 0u : detail::lane() / N * N; }
  unsigned meta_rank_ = 0, meta_size_ = 1;
};

// The tile type tiled_partition returns; converts to thread_block_tile<N>.
template <unsigned N, class Parent>
class thread_block_tile : public thread_block_tile<N, void> {
 public:
  using thread_block_tile<N, void>::thread_block_tile;
};

template <unsigned N>
thread_block_tile<N, thread_block> tiled_partition(const thread_block& g) {
  return {g.thread_rank() / N, (g.size() + N - 1) / N};
}
template <unsigned N, unsigned M, class P>
thread_block_tile<N, thread_block_tile<M, P>> tiled_partition(const thread_block_tile<M, P>& g) {
  static_assert(N <= M, "gfsl::cpu: tiled_partition<N> of a tile of M < N threads");
  return {g.thread_rank() / N, M / N};
}

inline void sync(const thread_block& g, GFSL_CPU_HERE) { g.sync(where); }
template <unsigned N, class P>
void sync(const thread_block_tile<N, P>& g, GFSL_CPU_HERE) {
  g.sync(where);
}

}  // namespace cooperative_groups
