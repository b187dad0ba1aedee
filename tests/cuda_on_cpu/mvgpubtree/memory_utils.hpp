// A shadow of MVGpuBTree's include/memory_utils.hpp (../shared/peers/
// mvgpubtree), first on the include path: the same names (cuda_memory_order,
// cuda_memory_32/64<T>::load and store, cuda_memory<T>::atomic_thread_fence)
// with each inline-PTX statement replaced by the gfsl::cpu::ptx function that
// spells it. Written from the original's interface, not copied: each order
// maps to the instruction the original issues for it (weak: ld.weak/st.weak;
// relaxed; acquire and consume: ld.acquire; release: st.release; seq_cst:
// fence.sc then ld.acquire or st.relaxed). Orders the original asserts
// against (a release load, an acquire store) trap here, naming the line.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_runtime.h>
#include "gfsl/cpu/ptx.hpp"

enum class cuda_memory_order {
  memory_order_weak,
  memory_order_relaxed,
  memory_order_consume,
  memory_order_acquire,
  memory_order_release,
  memory_order_acq_rel,
  memory_order_seq_cst
};

namespace gfsl_shadow {
template <class U, class T>
__device__ inline T load(T* ptr, cuda_memory_order order) {
  namespace px = gfsl::cpu::ptx;
  const U* p = reinterpret_cast<const U*>(ptr);
  U bits = 0;
  switch (order) {
    case cuda_memory_order::memory_order_weak: bits = px::ld<px::sem::weak>(p); break;
    case cuda_memory_order::memory_order_relaxed: bits = px::ld<px::sem::relaxed>(p); break;
    case cuda_memory_order::memory_order_consume:
    case cuda_memory_order::memory_order_acquire: bits = px::ld<px::sem::acquire>(p); break;
    case cuda_memory_order::memory_order_seq_cst:
      px::fence<px::sem::sc>();
      bits = px::ld<px::sem::acquire>(p);
      break;
    default: __trap();
  }
  T v;
  std::memcpy(static_cast<void*>(&v), &bits, sizeof v);
  return v;
}
template <class U, class T>
__device__ inline void store(T* ptr, T value, cuda_memory_order order) {
  namespace px = gfsl::cpu::ptx;
  U* p = reinterpret_cast<U*>(ptr);
  U bits;
  std::memcpy(&bits, &value, sizeof bits);
  switch (order) {
    case cuda_memory_order::memory_order_weak: px::st<px::sem::weak>(p, bits); break;
    case cuda_memory_order::memory_order_relaxed: px::st<px::sem::relaxed>(p, bits); break;
    case cuda_memory_order::memory_order_release: px::st<px::sem::release>(p, bits); break;
    case cuda_memory_order::memory_order_seq_cst:
      px::fence<px::sem::sc>();
      px::st<px::sem::relaxed>(p, bits);
      break;
    default: __trap();
  }
}
}  // namespace gfsl_shadow

template <typename T>
struct cuda_memory_64 {
  static_assert(sizeof(T) == sizeof(uint64_t));
  using unsigned_type = uint64_t;
  __device__ static inline T load(T* ptr, cuda_memory_order order = cuda_memory_order::memory_order_weak) {
    return gfsl_shadow::load<unsigned_type>(ptr, order);
  }
  __device__ static inline void store(T* ptr, T value, cuda_memory_order order = cuda_memory_order::memory_order_weak) {
    gfsl_shadow::store<unsigned_type>(ptr, value, order);
  }
};

template <typename T>
struct cuda_memory_32 {
  static_assert(sizeof(T) == sizeof(uint32_t));
  using unsigned_type = uint32_t;
  __device__ static inline T load(T* ptr, cuda_memory_order order = cuda_memory_order::memory_order_weak) {
    return gfsl_shadow::load<unsigned_type>(ptr, order);
  }
  __device__ static inline void store(T* ptr, T value, cuda_memory_order order = cuda_memory_order::memory_order_weak) {
    gfsl_shadow::store<unsigned_type>(ptr, value, order);
  }
};

template <typename T = uint32_t>
struct cuda_memory : public std::conditional<sizeof(T) == 4, cuda_memory_32<T>, cuda_memory_64<T>>::type {
  static_assert(sizeof(T) == sizeof(uint32_t) || sizeof(T) == sizeof(uint64_t));
  __device__ static inline void atomic_thread_fence() { gfsl::cpu::ptx::fence<gfsl::cpu::ptx::sem::sc>(); }
};
