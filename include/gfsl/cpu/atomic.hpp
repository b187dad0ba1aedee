// libcu++'s atomics on the CPU layer (include/gfsl/cpu/cuda.hpp):
// cuda::atomic_ref, cuda::atomic, cuda::std::atomic, cuda::std::atomic_ref
// and cuda::atomic_thread_fence, whose device forms are inline PTX. Each
// load, store and RMW is a scheduling point and passes the memory model
// (options::memory) with its order: relaxed, acquire (consume), release,
// acq_rel, and seq_cst as a fence.sc before an acquire load, a release store
// or an acq_rel RMW (libcu++'s own PTX mapping). The model has one scope, the
// GPU's: thread_scope_block, _device and _system are the same here, which
// hides a fault that needs a block-scoped atomic to be seen late by another
// block (docs/CUDA-ON-CPU.md, "Memory orders and scopes"). compare_exchange_weak
// never fails spuriously; wait() re-reads with scheduling points between.
#pragma once

#include <atomic>
#include <type_traits>

#include "cuda.hpp"

namespace cuda {

enum thread_scope { thread_scope_system = 0, thread_scope_device = 1, thread_scope_block = 2, thread_scope_thread = 3 };

using memory_order = ::std::memory_order;
inline constexpr memory_order memory_order_relaxed = ::std::memory_order_relaxed;
inline constexpr memory_order memory_order_consume = ::std::memory_order_consume;
inline constexpr memory_order memory_order_acquire = ::std::memory_order_acquire;
inline constexpr memory_order memory_order_release = ::std::memory_order_release;
inline constexpr memory_order memory_order_acq_rel = ::std::memory_order_acq_rel;
inline constexpr memory_order memory_order_seq_cst = ::std::memory_order_seq_cst;

namespace gfsl_detail {
using ::gfsl::cpu::detail::order;
constexpr order to_order(memory_order m) {
  switch (m) {
    case ::std::memory_order_relaxed: return order::relaxed;
    case ::std::memory_order_consume:
    case ::std::memory_order_acquire: return order::acquire;
    case ::std::memory_order_release: return order::release;
    case ::std::memory_order_acq_rel: return order::acq_rel;
    default: return order::seq_cst;
  }
}
// A failed compare-exchange reads with the failure order.
constexpr memory_order stronger(memory_order a, memory_order b) { return static_cast<int>(a) >= static_cast<int>(b) ? a : b; }

template <class T>
using bits_t = ::std::conditional_t<sizeof(T) == 1, ::std::uint8_t,
                                  ::std::conditional_t<sizeof(T) == 2, ::std::uint16_t, ::std::conditional_t<sizeof(T) == 4, ::std::uint32_t, ::std::uint64_t>>>;

// The operations on one object, shared by atomic_ref and atomic.
template <class T>
struct ops {
  static_assert(::std::is_trivially_copyable_v<T> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8),
                "gfsl::cpu: cuda::atomic of a type of 1, 2, 4 or 8 bytes");
  static T load(const T* p, memory_order m, const ::std::source_location& w) {
    ::gfsl::cpu::detail::at(w);
    return ::gfsl::cpu::detail::from_bits<T>(::gfsl::cpu::detail::atomic_load(p, sizeof(T), to_order(m)));
  }
  static void store(T* p, T v, memory_order m, const ::std::source_location& w) {
    ::gfsl::cpu::detail::at(w);
    ::gfsl::cpu::detail::atomic_store(p, sizeof(T), ::gfsl::cpu::detail::to_bits(v), to_order(m));
  }
  template <class F>
  static T rmw(T* p, F&& f, memory_order m, const ::std::source_location& w) {
    ::gfsl::cpu::detail::at(w);
    return ::gfsl::cpu::detail::rmw_ordered(p, ::std::forward<F>(f), to_order(m));
  }
  static bool cas(T* p, T& expected, T desired, memory_order success, memory_order failure, const ::std::source_location& w) {
    ::gfsl::cpu::detail::at(w);
    const T old = ::gfsl::cpu::detail::rmw_ordered(p, [desired](T) { return desired; }, to_order(stronger(success, failure)), true, expected);
    const bool ok = ::std::memcmp(&old, &expected, sizeof(T)) == 0;
    expected = old;
    return ok;
  }
};

template <class T, class Self>
struct api {
  T* ptr() const { return static_cast<const Self*>(this)->address(); }
  static constexpr bool is_always_lock_free = true;
  bool is_lock_free() const { return true; }

  T load(memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const { return ops<T>::load(ptr(), m, where); }
  void store(T v, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const { ops<T>::store(ptr(), v, m, where); }
  operator T() const { return load(); }
  T exchange(T v, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return ops<T>::rmw(ptr(), [v](T) { return v; }, m, where);
  }
  bool compare_exchange_strong(T& expected, T desired, memory_order success, memory_order failure, GFSL_CPU_HERE) const {
    return ops<T>::cas(ptr(), expected, desired, success, failure, where);
  }
  bool compare_exchange_strong(T& expected, T desired, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return ops<T>::cas(ptr(), expected, desired, m, m == memory_order_acq_rel ? memory_order_acquire : m == memory_order_release ? memory_order_relaxed : m, where);
  }
  bool compare_exchange_weak(T& expected, T desired, memory_order success, memory_order failure, GFSL_CPU_HERE) const {
    return compare_exchange_strong(expected, desired, success, failure, where);
  }
  bool compare_exchange_weak(T& expected, T desired, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return compare_exchange_strong(expected, desired, m, where);
  }
  // Re-reads until the value differs from `old`: each read a scheduling point.
  void wait(T old, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    while (::std::memcmp(&old, &static_cast<const T&>(load(m, where)), sizeof(T)) == 0) {
    }
  }
  void notify_one() const {}
  void notify_all() const {}

  // Integers and pointers.
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U> || ::std::is_pointer_v<U>>>
  T fetch_add(::std::conditional_t<::std::is_pointer_v<U>, ::std::ptrdiff_t, U> v, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return ops<T>::rmw(ptr(), [v](T old) { return static_cast<T>(old + v); }, m, where);
  }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U> || ::std::is_pointer_v<U>>>
  T fetch_sub(::std::conditional_t<::std::is_pointer_v<U>, ::std::ptrdiff_t, U> v, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return ops<T>::rmw(ptr(), [v](T old) { return static_cast<T>(old - v); }, m, where);
  }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T fetch_and(U v, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return ops<T>::rmw(ptr(), [v](T old) { return static_cast<T>(old & v); }, m, where);
  }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T fetch_or(U v, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return ops<T>::rmw(ptr(), [v](T old) { return static_cast<T>(old | v); }, m, where);
  }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T fetch_xor(U v, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return ops<T>::rmw(ptr(), [v](T old) { return static_cast<T>(old ^ v); }, m, where);
  }
  template <class U = T, class = ::std::enable_if_t<::std::is_arithmetic_v<U>>>
  T fetch_min(U v, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return ops<T>::rmw(ptr(), [v](T old) { return old < v ? old : v; }, m, where);
  }
  template <class U = T, class = ::std::enable_if_t<::std::is_arithmetic_v<U>>>
  T fetch_max(U v, memory_order m = memory_order_seq_cst, GFSL_CPU_HERE) const {
    return ops<T>::rmw(ptr(), [v](T old) { return old > v ? old : v; }, m, where);
  }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T operator++() const { return fetch_add(1) + 1; }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T operator++(int) const { return fetch_add(1); }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T operator--() const { return fetch_sub(1) - 1; }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T operator--(int) const { return fetch_sub(1); }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T operator+=(U v) const { return fetch_add(v) + v; }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T operator-=(U v) const { return fetch_sub(v) - v; }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T operator&=(U v) const { return fetch_and(v) & v; }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T operator|=(U v) const { return fetch_or(v) | v; }
  template <class U = T, class = ::std::enable_if_t<::std::is_integral_v<U>>>
  T operator^=(U v) const { return fetch_xor(v) ^ v; }
};
}  // namespace gfsl_detail

template <class T, thread_scope Scope = thread_scope_system>
class atomic_ref : public gfsl_detail::api<T, atomic_ref<T, Scope>> {
 public:
  explicit atomic_ref(T& obj) : p_(&obj) {}
  atomic_ref(const atomic_ref&) = default;
  T operator=(T v) const {
    this->store(v);
    return v;
  }
  atomic_ref& operator=(const atomic_ref&) = delete;
  T* address() const { return p_; }

 private:
  T* p_;
};

template <class T, thread_scope Scope = thread_scope_system>
class atomic : public gfsl_detail::api<T, atomic<T, Scope>> {
 public:
  constexpr atomic() noexcept : v_() {}
  constexpr atomic(T v) noexcept : v_(v) {}
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;
  T operator=(T v) {
    this->store(v);
    return v;
  }
  T* address() const { return const_cast<T*>(&v_); }

 private:
  alignas(sizeof(T)) T v_;
};

inline void atomic_thread_fence(memory_order m, thread_scope = thread_scope_system, GFSL_CPU_HERE) {
  ::gfsl::cpu::detail::at(where);
  ::gfsl::cpu::detail::fence_ordered(gfsl_detail::to_order(m));
}
inline void atomic_signal_fence(memory_order) {}

namespace std {
using ::cuda::memory_order;
using ::cuda::memory_order_acq_rel;
using ::cuda::memory_order_acquire;
using ::cuda::memory_order_consume;
using ::cuda::memory_order_relaxed;
using ::cuda::memory_order_release;
using ::cuda::memory_order_seq_cst;
template <class T>
using atomic = ::cuda::atomic<T, ::cuda::thread_scope_system>;
template <class T>
using atomic_ref = ::cuda::atomic_ref<T, ::cuda::thread_scope_system>;
using atomic_bool = atomic<bool>;
using atomic_char = atomic<char>;
using atomic_int = atomic<int>;
using atomic_uint = atomic<unsigned>;
using atomic_long = atomic<long>;
using atomic_ulong = atomic<unsigned long>;
using atomic_llong = atomic<long long>;
using atomic_ullong = atomic<unsigned long long>;
using atomic_int32_t = atomic<::std::int32_t>;
using atomic_uint32_t = atomic<::std::uint32_t>;
using atomic_int64_t = atomic<::std::int64_t>;
using atomic_uint64_t = atomic<::std::uint64_t>;
using atomic_size_t = atomic<::std::size_t>;
inline void atomic_thread_fence(memory_order m, GFSL_CPU_HERE) { ::cuda::atomic_thread_fence(m, ::cuda::thread_scope_system, where); }
inline void atomic_signal_fence(memory_order) {}
}  // namespace std

}  // namespace cuda
