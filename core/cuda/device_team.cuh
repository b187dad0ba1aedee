// CUDA backend of the team interface: a team is a tile of N consecutive lanes
// of a warp (N = 32: the whole warp, as in the thesis; N = 16: half a warp).
//
// Memory-model choices, one per kind of access:
// - Every access to the structure is device scope through cuda::atomic_ref, so
//   it bypasses the SM's L1, which is not coherent across SMs: a plain cached
//   load could return a chunk another SM rewrote long ago.
// - Loads are acquire: a lane that reads a NEXT pointer (or a down pointer)
//   published by a release store also sees the chunk contents written before
//   the publication. `load_lanes` ends in __syncwarp so that the acquire of the
//   lane that read the pointer orders the whole team's later loads (the warp
//   barrier orders memory among its participants).
// - Stores are made by the lane that owns the entry, one at a time, each
//   followed by __syncwarp: the next lane's release store is then ordered after
//   it (release is cumulative over what the barrier made visible to that lane),
//   so other SMs observe a team's writes in program order, the order that
//   executeInsert, removal, split and merge rely on (thesis 4.2.2-4.2.3).
// - Lock acquisition is a CAS with acq_rel; unlock and the zombie mark are
//   release stores, so everything written under the lock is visible first.
#pragma once

#include <cuda/atomic>
#include <cstdint>

#include "../layout.hpp"
#include "../stats.hpp"
#include "../team.hpp"
#include "../types.hpp"

namespace gfsl {

template <int N>
class device_team {
 public:
  static constexpr int width = N;
  static_assert(N == 16 || N == 32, "a team is 16 or 32 lanes of one warp");
  struct lanes {
    std::uint64_t v;
  };

  __device__ device_team(team_id id, std::uint64_t seed) : id_(id), rng_(team_seed(seed, id)) {
    const unsigned warp_lane = threadIdx.x % 32u;
    lane_ = static_cast<int>(warp_lane % N);
    shift_ = warp_lane - static_cast<unsigned>(lane_);
    mask_ = N == 32 ? 0xFFFFFFFFu : (0xFFFFu << shift_);
  }

  __host__ __device__ team_id id() const { return id_; }
  __host__ __device__ path_stats& stats() { return stats_; }
  __device__ int lane() const { return lane_; }

  __host__ __device__ lanes load_lanes(const std::uint64_t* p) {
#if defined(__CUDA_ARCH__)
    lanes out{ref(p + lane_).load(cuda::std::memory_order_acquire)};
    __syncwarp(mask_);
    return out;
#else
    return lanes{*p};
#endif
  }

  template <class Pred>
  __host__ __device__ std::uint32_t ballot(const lanes& x, Pred&& pred) const {
#if defined(__CUDA_ARCH__)
    const std::uint32_t bits = __ballot_sync(mask_, pred(lane_, x.v));
    return N == 32 ? bits : (bits >> shift_) & 0xFFFFu;
#else
    return pred(0, x.v) ? 1u : 0u;
#endif
  }
  __host__ __device__ std::uint64_t shfl(const lanes& x, int src) const {
#if defined(__CUDA_ARCH__)
    return __shfl_sync(mask_, static_cast<unsigned long long>(x.v), src, N);
#else
    (void)src;
    return x.v;
#endif
  }
  __host__ __device__ void set_lane(lanes& x, int lane, std::uint64_t v) const {
    if (lane_ == lane) x.v = v;
  }

  __host__ __device__ std::uint64_t load(const std::uint64_t* p, int lane) {
#if defined(__CUDA_ARCH__)
    unsigned long long v = 0;
    if (lane_ == lane) v = ref(p).load(cuda::std::memory_order_acquire);
    return __shfl_sync(mask_, v, lane, N);
#else
    (void)lane;
    return *p;
#endif
  }
  __host__ __device__ void store(std::uint64_t* p, int lane, std::uint64_t v, mem_order o) {
#if defined(__CUDA_ARCH__)
    if (lane_ == lane) ref(p).store(v, to_cuda(o));
    __syncwarp(mask_);
#else
    (void)lane, (void)o;
    *p = v;
#endif
  }
  __host__ __device__ bool cas(std::uint64_t* p, int lane, std::uint64_t& expected, std::uint64_t desired) {
#if defined(__CUDA_ARCH__)
    int ok = 0;
    unsigned long long found = 0;
    if (lane_ == lane) {
      std::uint64_t e = expected;
      ok = ref(p).compare_exchange_strong(e, desired, cuda::std::memory_order_acq_rel,
                                          cuda::std::memory_order_acquire)
               ? 1
               : 0;
      found = e;
    }
    ok = __shfl_sync(mask_, ok, lane, N);
    expected = __shfl_sync(mask_, found, lane, N);
    __syncwarp(mask_);
    return ok != 0;
#else
    (void)lane;
    const bool ok = *p == expected;
    if (ok) *p = desired;
    else expected = *p;
    return ok;
#endif
  }
  __host__ __device__ std::uint64_t fetch_add(std::uint64_t* p, int lane, std::uint64_t delta) {
#if defined(__CUDA_ARCH__)
    unsigned long long old = 0;
    if (lane_ == lane) old = ref(p).fetch_add(delta, cuda::std::memory_order_acq_rel);
    old = __shfl_sync(mask_, old, lane, N);
    __syncwarp(mask_);
    return old;
#else
    (void)lane;
    const std::uint64_t old = *p;
    *p += delta;
    return old;
#endif
  }
  // A short back-off keeps spinning teams from flooding the lock's line while
  // its holder, maybe on the same SM, works.
  __host__ __device__ void lock_wait(chunk_index /*chunk*/, std::uint64_t /*lock_word*/) {
#if defined(__CUDA_ARCH__)
    __nanosleep(64);
#endif
  }
  __host__ __device__ std::uint32_t random_u32() { return static_cast<std::uint32_t>(rng_.next() >> 32); }

 private:
#if defined(__CUDA_ARCH__)
  __device__ static cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> ref(const std::uint64_t* p) {
    return cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device>(*const_cast<std::uint64_t*>(p));
  }
  __device__ static constexpr cuda::std::memory_order to_cuda(mem_order o) {
    switch (o) {
      case mem_order::relaxed: return cuda::std::memory_order_relaxed;
      case mem_order::acquire: return cuda::std::memory_order_acquire;
      case mem_order::release: return cuda::std::memory_order_release;
      case mem_order::acq_rel: return cuda::std::memory_order_acq_rel;
    }
    return cuda::std::memory_order_seq_cst;
  }
#endif

  team_id id_;
  int lane_ = 0;
  unsigned shift_ = 0;
  unsigned mask_ = 0xFFFFFFFFu;
  team_rng rng_;
  path_stats stats_{};
};

}  // namespace gfsl
