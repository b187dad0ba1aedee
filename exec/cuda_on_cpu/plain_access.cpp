// The compiler's load and store callbacks, defined here instead of by
// ThreadSanitizer's runtime, for code built with gfsl_cuda_on_cpu_instrument
// (docs/CUDA-ON-CPU.md, "Plain loads and stores").
//
// g++ and clang with -fsanitize=thread call __tsan_readN(addr) just before
// each plain or volatile load of N bytes from memory that may be shared (not
// a register or an unescaped local), and __tsan_writeN(addr) just before each
// store. This library is linked instead of libtsan (the instrumented target
// compiles with -fsanitize=thread and links without it), and forwards each
// access to the layer (gfsl::cpu::detail::plain_access), which makes it a
// scheduling point when it falls in the device's memory and, under ptx, lets
// a load return an older store. Everything else the instrumentation calls
// (function entry and exit, vtable updates, the atomics of the C++ library
// it rewrites into __tsan_atomic* calls) does what the program asked, with
// no detection: this is not a race detector.
//
// Never built with -fsanitize=thread itself (its CMake target says so), and
// never linked into a program that also links libtsan.
#include <cstddef>
#include <cstdint>

#include "../../include/gfsl/cpu/cuda.hpp"

namespace {
inline void load(const void* p, unsigned n) { ::gfsl::cpu::detail::plain_access(p, n, false); }
inline void store(const void* p, unsigned n) { ::gfsl::cpu::detail::plain_access(p, n, true); }

// The memory orders the instrumentation passes (the C++ ones, numbered as
// __ATOMIC_*): every atomic of the C++ library here is seq_cst, which is at
// least what was asked.
using morder = int;
}  // namespace

extern "C" {

void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}
void __tsan_ignore_thread_begin() {}
void __tsan_ignore_thread_end() {}

#define GFSL_PLAIN_SIZED(n)                                            \
  void __tsan_read##n(void* p) { load(p, n); }                         \
  void __tsan_write##n(void* p) { store(p, n); }                       \
  void __tsan_unaligned_read##n(const void* p) { load(p, n); }         \
  void __tsan_unaligned_write##n(void* p) { store(p, n); }             \
  void __tsan_volatile_read##n(void* p) { load(p, n); }                \
  void __tsan_volatile_write##n(void* p) { store(p, n); }              \
  void __tsan_read##n##_pc(void* p, void*) { load(p, n); }             \
  void __tsan_write##n##_pc(void* p, void*) { store(p, n); }
GFSL_PLAIN_SIZED(1)
GFSL_PLAIN_SIZED(2)
GFSL_PLAIN_SIZED(4)
GFSL_PLAIN_SIZED(8)
GFSL_PLAIN_SIZED(16)
#undef GFSL_PLAIN_SIZED

// A range (an aggregate copy the compiler did not split into words): its
// words one by one would be many scheduling points for one copy; it is one
// access of its first 16 bytes' words at most, and the rest passes as is.
void __tsan_read_range(void* p, unsigned long n) { load(p, n < 16 ? static_cast<unsigned>(n) : 16u); }
void __tsan_write_range(void* p, unsigned long n) { store(p, n < 16 ? static_cast<unsigned>(n) : 16u); }

#define GFSL_PLAIN_ATOMICS(bits, T)                                                                                   \
  T __tsan_atomic##bits##_load(const volatile T* a, morder) { return __atomic_load_n(a, __ATOMIC_SEQ_CST); }         \
  void __tsan_atomic##bits##_store(volatile T* a, T v, morder) { __atomic_store_n(a, v, __ATOMIC_SEQ_CST); }         \
  T __tsan_atomic##bits##_exchange(volatile T* a, T v, morder) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, morder) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, morder) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, morder) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, morder) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }   \
  T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, morder) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); } \
  T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, morder) { return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST); } \
  int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, morder, morder) {                      \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                          \
  }                                                                                                                   \
  int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, morder, morder) {                        \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                          \
  }                                                                                                                   \
  T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, morder, morder) {                            \
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                                \
    return c;                                                                                                         \
  }
GFSL_PLAIN_ATOMICS(8, char)
GFSL_PLAIN_ATOMICS(16, short)
GFSL_PLAIN_ATOMICS(32, int)
GFSL_PLAIN_ATOMICS(64, long)
#undef GFSL_PLAIN_ATOMICS

void __tsan_atomic_thread_fence(morder) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(morder) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

}  // extern "C"
