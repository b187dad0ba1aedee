// CUDA on the CPU: a user's device code, unmodified, compiled as host C++ and
// run under the testbed's deterministic scheduler (exec/sched/scheduler.hpp).
//
// Include this header before the user's .cuh files (or put
// include/gfsl/cpu/shadow first on the include path, whose cuda_runtime.h
// includes it). A warp of the launch is one team of the scheduler, so that
// every strategy (random, pct, fair-pct, park) picks among warps; inside it,
// each lane is a fiber of its own that runs the user's code as written,
// from one collective to the next. What interleaves:
//   - a lane's arrival at a warp collective (__ballot_sync, __shfl*_sync,
//     __any_sync, __all_sync, __syncwarp, __match_any_sync) is a scheduling
//     point: other warps may run between two lanes' arrivals, so the lanes'
//     plain loads between two collectives need not see one memory state
//     (a warp's loads of a slab are not one atomic read on the device);
//   - every atomic (atomicCAS, atomicExch, atomicAdd, ...) and fence
//     (__threadfence*) is a scheduling point, and passes the scheduler's
//     memory model as a relaxed RMW or a fence.sc;
//   - plain and volatile loads and stores are NOT scheduling points and do
//     not pass the memory model (docs/CUDA-ON-CPU.md, "what is covered").
// A collective completes when every lane of its mask is at a collective of
// the same kind with the same mask; when no lane of a warp can go on, a
// lane still waiting is a reported fault (a divergent collective, or a mask
// naming a lane that has exited), one line naming the warp, the lane and
// what it waited for.
//
// The `<<<grid, block>>>` syntax cannot compile as C++: host code calls
// gfsl::cpu::launch(grid, block, kernel, args...) instead, which runs the
// kernel to completion under a fresh scheduler and returns what happened.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// ---------------------------------------------------------------------------
// Qualifiers: host C++ has one address space and one compiler.
#define __host__
#define __device__
#define __global__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __inline__ inline
#define __constant__
#define __managed__
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define __launch_bounds__(...)
#define __grid_constant__
// __shared__ memory is one instance per declaration, not one per block: a
// launch of more than one block that reaches a __shared__ declaration is a
// reported fault (detail::shared_use), rather than blocks silently sharing it.
#define GFSL_CPU_CAT2(a, b) a##b
#define GFSL_CPU_CAT(a, b) GFSL_CPU_CAT2(a, b)
#define __shared__                                                                          \
  [[maybe_unused]] const ::gfsl::cpu::detail::shared_use GFSL_CPU_CAT(gfsl_cpu_shared_, __COUNTER__){}; \
  static

namespace gfsl::cpu {

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};

// How a launch is scheduled: the fields of gfsl::sched::options that a
// user's structure needs, named as `gfsl fuzz` names them.
struct options {
  std::string strategy = "random";  // random, pct, fair-pct, park
  std::uint64_t seed = 1;
  int depth = 3;                    // pct: bug depth d (d-1 change points)
  std::uint64_t pct_steps = 100000; // pct: the expected length of the run in steps
  // lane: the lanes released by a collective go on in a seeded order;
  // chunk or line: in lane order.
  std::string granularity = "lane";
  std::string memory = "sc";        // sc or ptx (memory_model.hpp)
  // ptx: the words of the structure's memory (what the model tracks);
  // atomics outside it pass the model untracked.
  const void* memory_base = nullptr;
  std::size_t memory_bytes = 0;
  std::uint64_t max_steps = 0;      // stop after this many steps (0: no bound)
  std::uint64_t livelock_steps = 2000000;
  std::size_t lane_stack_bytes = 64 * 1024;
  bool quiet = false;               // faults are not printed to stderr
};

struct launch_result {
  std::string stop = "completed";  // completed, deadlock, livelock, step limit
  std::uint64_t steps = 0;         // scheduling points passed
  std::uint64_t switches = 0;      // times the running warp changed
  std::uint64_t fingerprint = 0;   // hash of every scheduled access in order: equal runs, equal fingerprints
  std::string report;              // a stopped run: one line per unfinished warp
  std::vector<std::string> faults; // one line each: divergent collectives, exited lanes in masks, throws
  bool ok() const { return stop == "completed" && faults.empty(); }
};

// The options a launch without its own takes (host code written for CUDA).
options& default_options();
// The result of the latest launch on this thread.
const launch_result& last_launch();

// Inside a kernel: a stamp of the run's history clock, strictly increasing
// in the order the run made them; its high bits are the scheduler's step
// count (stamp >> 24 == steps at the stamp). Under ptx, an acq_rel RMW on
// the clock, as the device recorder's stamps are.
std::uint64_t stamp();
// Inside a kernel: the scheduling points passed so far.
std::uint64_t steps();
// Inside a kernel: the running lane completed an operation (the livelock
// bound counts steps without one).
void completed_operation();

namespace detail {

struct lane_ids {
  uint3 thread_idx, block_idx;
  uint3 block_dim, grid_dim;
  unsigned lane = 0;
  unsigned warp = 0;  // the warp's number in the launch (its scheduler team)
};
inline thread_local const lane_ids* current_ids = nullptr;
inline const lane_ids& ids() {
  static const lane_ids host{};
  return current_ids ? *current_ids : host;
}

struct shared_use {
  shared_use();
};

enum class coll : std::uint8_t { ballot, shfl, shfl_up, shfl_down, shfl_xor, any, all, syncwarp, match_any, activemask };

// The calling lane arrives at a collective and waits for its mask; returns
// its result (payload bits of the lane it reads, or a ballot).
std::uint64_t collective(coll kind, unsigned mask, std::uint64_t payload, int arg, int width, std::uint64_t site = 0);

// An atomic: `begin` is the scheduling point; the header makes the RMW on
// memory (one OS thread runs every lane, so a plain read-modify-write is
// atomic); `end` tells the memory model what it read and wrote.
void atomic_begin(const void* p, unsigned bytes, bool cas);
void atomic_end(const void* p, unsigned bytes, std::uint64_t old_bits, bool cas, bool cas_ok);
void fence();

launch_result launch(const options& o, dim3 grid, dim3 block, std::function<void()> lane_body);

template <class T>
std::uint64_t to_bits(const T& v) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "gfsl::cpu: a shuffled value is at most 8 bytes");
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
T from_bits(std::uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

template <class T, class F>
T rmw(T* p, F&& f, bool cas = false, T compare = T{}) {
  atomic_begin(p, sizeof(T), cas);
  const T old = *p;
  bool ok = true;
  if (cas) ok = std::memcmp(&old, &compare, sizeof(T)) == 0;
  if (ok) *p = f(old);
  atomic_end(p, sizeof(T), to_bits(old), cas, ok);
  return old;
}

template <class T>
struct unsupported : std::false_type {};

}  // namespace detail

// Runs `kernel(args...)` on grid x block threads under the scheduler, to
// completion (or until the run stops), and returns what happened; faults
// are also printed to stderr, one line each, unless options::quiet. The
// arguments are converted to the kernel's parameter types once, and each
// lane gets its own copy, as kernel parameters are per thread.
template <class... Params, class... Args>
launch_result launch(const options& o, dim3 grid, dim3 block, void (*kernel)(Params...), Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "gfsl::cpu::launch: the kernel takes another number of arguments");
  auto params = std::make_shared<std::tuple<std::decay_t<Params>...>>(std::forward<Args>(args)...);
  return detail::launch(o, grid, block, [kernel, params] {
    std::apply([kernel](auto&... p) { kernel(p...); }, *params);
  });
}
template <class... Params, class... Args>
launch_result launch(dim3 grid, dim3 block, void (*kernel)(Params...), Args&&... args) {
  return launch(default_options(), grid, block, kernel, std::forward<Args>(args)...);
}

}  // namespace gfsl::cpu

// ---------------------------------------------------------------------------
// Built-in variables, per lane.
using gfsl::cpu::dim3;
using gfsl::cpu::uint3;
#define threadIdx (::gfsl::cpu::detail::ids().thread_idx)
#define blockIdx (::gfsl::cpu::detail::ids().block_idx)
#define blockDim (::gfsl::cpu::detail::ids().block_dim)
#define gridDim (::gfsl::cpu::detail::ids().grid_dim)
inline constexpr int warpSize = 32;

// ---------------------------------------------------------------------------
// Warp collectives: CUDA's mask rules, checked.
inline unsigned __ballot_sync(unsigned mask, int pred) {
  return static_cast<unsigned>(::gfsl::cpu::detail::collective(::gfsl::cpu::detail::coll::ballot, mask, pred != 0, 0, 32));
}
inline int __any_sync(unsigned mask, int pred) {
  return static_cast<int>(::gfsl::cpu::detail::collective(::gfsl::cpu::detail::coll::any, mask, pred != 0, 0, 32));
}
inline int __all_sync(unsigned mask, int pred) {
  return static_cast<int>(::gfsl::cpu::detail::collective(::gfsl::cpu::detail::coll::all, mask, pred != 0, 0, 32));
}
inline void __syncwarp(unsigned mask = 0xFFFFFFFFu) {
  (void)::gfsl::cpu::detail::collective(::gfsl::cpu::detail::coll::syncwarp, mask, 0, 0, 32);
}
template <class T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize) {
  return ::gfsl::cpu::detail::from_bits<T>(::gfsl::cpu::detail::collective(
      ::gfsl::cpu::detail::coll::shfl, mask, ::gfsl::cpu::detail::to_bits(var), src_lane, width));
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return ::gfsl::cpu::detail::from_bits<T>(::gfsl::cpu::detail::collective(
      ::gfsl::cpu::detail::coll::shfl_up, mask, ::gfsl::cpu::detail::to_bits(var), static_cast<int>(delta), width));
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return ::gfsl::cpu::detail::from_bits<T>(::gfsl::cpu::detail::collective(
      ::gfsl::cpu::detail::coll::shfl_down, mask, ::gfsl::cpu::detail::to_bits(var), static_cast<int>(delta), width));
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) {
  return ::gfsl::cpu::detail::from_bits<T>(::gfsl::cpu::detail::collective(
      ::gfsl::cpu::detail::coll::shfl_xor, mask, ::gfsl::cpu::detail::to_bits(var), lane_mask, width));
}
template <class T>
unsigned __match_any_sync(unsigned mask, T value) {
  return static_cast<unsigned>(::gfsl::cpu::detail::collective(::gfsl::cpu::detail::coll::match_any, mask,
                                                               ::gfsl::cpu::detail::to_bits(value), 0, 32));
}
// The lanes of the warp that reach this same __activemask call (the same
// source line) together: a lane arriving here waits until every other lane
// of its warp has exited or waits at a collective, and the call returns the
// lanes waiting at this line then. On the device the answer is the lanes
// the hardware happens to run converged; this is the largest such set the
// code allows, so a mask taken inside a branch names the lanes of that
// branch, and never a lane that has exited.
inline unsigned __activemask(std::source_location where = std::source_location::current()) {
  const std::uint64_t site = (static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(where.file_name())) << 20) ^ where.line();
  return static_cast<unsigned>(::gfsl::cpu::detail::collective(::gfsl::cpu::detail::coll::activemask, 0, 0, 0, 32, site));
}

// Bit intrinsics (host versions of the device ones, same results).
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffs(unsigned x) { return __builtin_ffs(static_cast<int>(x)); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __ffsll(unsigned long long x) { return __builtin_ffsll(static_cast<long long>(x)); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) | __brev(static_cast<unsigned>(x >> 32));
}

// ---------------------------------------------------------------------------
// Atomics: relaxed RMWs at GPU scope, each a scheduling point. The _block
// and _system forms are the same operations (the model has one scope).
#define GFSL_CPU_ATOMIC_ALIASES(name)                                                  \
  template <class... A>                                                                \
  auto name##_block(A... a) -> decltype(name(a...)) { return name(a...); }             \
  template <class... A>                                                                \
  auto name##_system(A... a) -> decltype(name(a...)) { return name(a...); }

#define GFSL_CPU_ATOMIC(name, T, expr)                                                           \
  inline T name(T* p, T v) {                                                                     \
    return ::gfsl::cpu::detail::rmw(p, [v](T old) -> T { (void)old; return expr; });             \
  }
#define GFSL_CPU_ATOMIC_INTS(name, expr)            \
  GFSL_CPU_ATOMIC(name, int, expr)                  \
  GFSL_CPU_ATOMIC(name, unsigned int, expr)         \
  GFSL_CPU_ATOMIC(name, unsigned long long int, expr)

GFSL_CPU_ATOMIC_INTS(atomicExch, v)
GFSL_CPU_ATOMIC(atomicExch, float, v)
GFSL_CPU_ATOMIC_INTS(atomicAdd, static_cast<decltype(v)>(old + v))
GFSL_CPU_ATOMIC(atomicAdd, float, old + v)
GFSL_CPU_ATOMIC(atomicAdd, double, old + v)
GFSL_CPU_ATOMIC(atomicSub, int, old - v)
GFSL_CPU_ATOMIC(atomicSub, unsigned int, old - v)
GFSL_CPU_ATOMIC_INTS(atomicAnd, old & v)
GFSL_CPU_ATOMIC_INTS(atomicOr, old | v)
GFSL_CPU_ATOMIC_INTS(atomicXor, old ^ v)
GFSL_CPU_ATOMIC_INTS(atomicMin, old < v ? old : v)
GFSL_CPU_ATOMIC(atomicMin, long long int, old < v ? old : v)
GFSL_CPU_ATOMIC_INTS(atomicMax, old > v ? old : v)
GFSL_CPU_ATOMIC(atomicMax, long long int, old > v ? old : v)
// CUDA's wrapping increment and decrement.
GFSL_CPU_ATOMIC(atomicInc, unsigned int, old >= v ? 0u : old + 1u)
GFSL_CPU_ATOMIC(atomicDec, unsigned int, (old == 0u || old > v) ? v : old - 1u)

#define GFSL_CPU_ATOMIC_CAS(T)                                                                   \
  inline T atomicCAS(T* p, T compare, T v) {                                                     \
    return ::gfsl::cpu::detail::rmw(p, [v](T) -> T { return v; }, true, compare);                \
  }
GFSL_CPU_ATOMIC_CAS(int)
GFSL_CPU_ATOMIC_CAS(unsigned int)
GFSL_CPU_ATOMIC_CAS(unsigned long long int)
GFSL_CPU_ATOMIC_CAS(unsigned short int)

GFSL_CPU_ATOMIC_ALIASES(atomicCAS)
GFSL_CPU_ATOMIC_ALIASES(atomicExch)
GFSL_CPU_ATOMIC_ALIASES(atomicAdd)
GFSL_CPU_ATOMIC_ALIASES(atomicSub)
GFSL_CPU_ATOMIC_ALIASES(atomicAnd)
GFSL_CPU_ATOMIC_ALIASES(atomicOr)
GFSL_CPU_ATOMIC_ALIASES(atomicXor)
GFSL_CPU_ATOMIC_ALIASES(atomicMin)
GFSL_CPU_ATOMIC_ALIASES(atomicMax)

// fence.sc at GPU scope; the block and system forms are the same fence.
inline void __threadfence() { ::gfsl::cpu::detail::fence(); }
inline void __threadfence_block() { ::gfsl::cpu::detail::fence(); }
inline void __threadfence_system() { ::gfsl::cpu::detail::fence(); }

// ---------------------------------------------------------------------------
// Unsupported: a compile error that names what is missing.
#define GFSL_CPU_UNSUPPORTED(name, why)                                               \
  template <class T_ = void, class... A_>                                             \
  void name(A_...) {                                                                  \
    static_assert(::gfsl::cpu::detail::unsupported<T_>::value, "gfsl::cpu: " #name " is not supported: " why); \
  }
GFSL_CPU_UNSUPPORTED(__syncthreads, "block barriers are not emulated (docs/CUDA-ON-CPU.md)")
GFSL_CPU_UNSUPPORTED(__syncthreads_count, "block barriers are not emulated")
GFSL_CPU_UNSUPPORTED(__syncthreads_and, "block barriers are not emulated")
GFSL_CPU_UNSUPPORTED(__syncthreads_or, "block barriers are not emulated")
GFSL_CPU_UNSUPPORTED(__nanosleep, "a sleep is no scheduling point; spin on an atomic instead")
GFSL_CPU_UNSUPPORTED(__match_all_sync, "not emulated")
GFSL_CPU_UNSUPPORTED(__reduce_add_sync, "not emulated")
GFSL_CPU_UNSUPPORTED(__ldg, "not emulated")
GFSL_CPU_UNSUPPORTED(clock64, "device clocks are not emulated")
GFSL_CPU_UNSUPPORTED(__trap, "not emulated")

// ---------------------------------------------------------------------------
// Host API on host memory. Launches are synchronous; streams are not modelled.
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorLaunchFailure = 719 };
using cudaError = cudaError_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
// Device memory is anonymous memory mapped on demand: a large allocation
// costs only the pages the run touches.
cudaError_t cudaMalloc(void** p, std::size_t bytes);
template <class T>
cudaError_t cudaMalloc(T** p, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
template <class T>
cudaError_t cudaMallocManaged(T** p, std::size_t bytes, unsigned = 1) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
cudaError_t cudaFree(void* p);
inline cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind) {
  if (bytes) std::memmove(dst, src, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, std::size_t bytes) {
  if (bytes) std::memset(p, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
// cudaErrorLaunchFailure when the latest launch faulted or stopped; then
// cudaSuccess again, as CUDA's sticky-free errors are.
cudaError_t cudaGetLastError();
inline cudaError_t cudaPeekAtLastError() {
  return ::gfsl::cpu::last_launch().ok() ? cudaSuccess : cudaErrorLaunchFailure;
}
inline const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorLaunchFailure: return "unspecified launch failure (gfsl::cpu::last_launch().faults)";
  }
  return "unknown error";
}
inline cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidValue; }
inline cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceReset() { return cudaSuccess; }

// Inline PTX cannot run on the CPU: `asm` is a compile error naming it.
// Shadow the header that holds it (docs/CUDA-ON-CPU.md). Defined last, so
// that the standard headers above are untouched; GFSL_CPU_ALLOW_ASM leaves
// the keyword alone (for host code that needs it after this header).
#if !defined(GFSL_CPU_ALLOW_ASM)
#define asm static_assert(::gfsl::cpu::detail::unsupported<void>::value, "gfsl::cpu: inline PTX (asm) cannot run on the CPU: shadow the header that holds it (docs/CUDA-ON-CPU.md)"); (void)
#endif
