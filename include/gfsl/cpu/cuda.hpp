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
//   - plain and volatile loads and stores are scheduling points, and pass
//     the memory model as relaxed accesses, only in code built with
//     gfsl_cuda_on_cpu_instrument (cmake/GfslCudaOnCpuInstrument.cmake,
//     exec/cuda_on_cpu/plain_access.cpp; docs/CUDA-ON-CPU.md, "Plain loads
//     and stores"); otherwise they are neither.
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
// Kernels are inline so that their __shared__ statics are comdat as those of
// inline device functions are: g++ refuses one section holding both kinds.
#define __global__ inline
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __inline__ inline
#define __constant__
#define __managed__
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define __launch_bounds__(...)
#define __grid_constant__
// __shared__ memory, one instance per block: every __shared__ variable of the
// program lives in one linker section (gfsl_cpu_shared), which the runtime
// swaps per block (each block's copy saved and restored when the running
// block changes) and zeroes at each launch. g++ 12 ignores the section of a
// static in a template (its bug 88061): such a __shared__ stays one
// instance, and a launch of more than one block that reaches it is a
// reported fault (detail::shared_use) rather than blocks silently sharing
// it (docs/CUDA-ON-CPU.md, "__shared__").
#define GFSL_CPU_CAT2(a, b) a##b
#define GFSL_CPU_CAT(a, b) GFSL_CPU_CAT2(a, b)
#define __shared__                                                                                        \
  [[maybe_unused]] const ::gfsl::cpu::detail::shared_use GFSL_CPU_CAT(gfsl_cpu_shared_, __COUNTER__){};   \
  static __attribute__((section("gfsl_cpu_shared")))
extern "C" char __start_gfsl_cpu_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_gfsl_cpu_shared[] __attribute__((weak, visibility("hidden")));

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
  // ptx: where the choices of which loads return an older store come from.
  // 0: the schedule's own stream (half the loads that may, do). Otherwise a
  // stream of their own seeded by stale_seed, stale_pct percent of those
  // loads returning an older store: the warps then interleave as under sc
  // until a stale value changes what a lane does.
  std::uint64_t stale_seed = 0;
  std::uint32_t stale_pct = 50;
  std::uint64_t max_steps = 0;      // stop after this many steps (0: no bound)
  std::uint64_t livelock_steps = 2000000;
  std::size_t lane_stack_bytes = 64 * 1024;
  bool quiet = false;               // faults are not printed to stderr
  // An atomic (atomicX, cuda::atomic_ref, the PTX shadows) on an address
  // outside every cudaMalloc allocation, __shared__ variable, registered
  // __device__ global (device_global) and [memory_base, +memory_bytes) is a
  // fault. Off by default: a kernel may use atomics on its own locals or on
  // host memory a test hands it.
  bool check_allocations = false;
};

struct launch_result {
  std::string stop = "completed";  // completed, deadlock, livelock, step limit
  std::uint64_t steps = 0;         // scheduling points passed
  std::uint64_t switches = 0;      // times the running warp changed
  std::uint64_t fingerprint = 0;   // hash of every scheduled access in order: equal runs, equal fingerprints
  std::string report;              // a stopped run: one line per unfinished warp
  std::vector<std::string> faults; // one line each: divergent collectives, exited lanes in masks, throws
  // How to run it again: "seed 17 strategy pct depth 2 pct-steps 200"; every
  // fault line ends with it.
  std::string replay;
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

// __device__ globals: a kernel's globals are ordinary host globals here, and
// keep what the previous run left. Name each once (device_global(table)) and
// call reset_device_globals() at the start of each run: it restores every
// named global to the bytes it held when it was named.
void device_global(void* p, std::size_t bytes);
template <class T>
void device_global(T& global) {
  static_assert(std::is_trivially_copyable_v<T>, "gfsl::cpu::device_global: a __device__ global is trivially copyable");
  device_global(static_cast<void*>(&global), sizeof(T));
}
void reset_device_globals();

// Virtual time: clock64() and __globaltimer() count scheduling points, so a
// spin on the clock yields at each read and ends after a bounded number of
// steps, the same in every replay.
inline constexpr std::uint64_t cycles_per_step = 100;
inline constexpr std::uint64_t nanoseconds_per_step = 50;

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

// Made where a __shared__ declaration is reached; `function` is the
// function around it (a template's name says "[with ...]").
struct shared_use {
  shared_use(const char* function = std::source_location::current().function_name());
};

enum class coll : std::uint8_t {
  ballot, shfl, shfl_up, shfl_down, shfl_xor, any, all, syncwarp, match_any, activemask,
  syncthreads,  // arg: 0 plain, 1 _count, 2 _and, 3 _or
  match_all,
  reduce,       // arg: reduce_op, | reduce_signed for min and max of int
};
enum reduce_op : int { reduce_add = 0, reduce_min = 1, reduce_max = 2, reduce_and = 3, reduce_or = 4, reduce_xor = 5, reduce_signed = 8 };

// Where the running lane is in the user's source: the intrinsic it called
// last (its std::source_location default argument), for fault lines.
inline thread_local const char* site_file = nullptr;
inline thread_local unsigned site_line = 0;
inline void at(const std::source_location& w) {
  site_file = w.file_name();
  site_line = w.line();
}

// Memory orders of libcu++ and PTX, as the model takes them: seq_cst is a
// fence.sc before an acquire load, a release store or an acq_rel RMW (the
// mapping of PTX's memory consistency model and libcu++).
enum class order : std::uint8_t { relaxed, acquire, release, acq_rel, seq_cst };
// An atomic load or store of 1, 2, 4 or 8 bytes: a scheduling point, passed
// to the model with its order (under ptx a relaxed or acquire load may
// return an older store of its word).
std::uint64_t atomic_load(const void* p, unsigned bytes, order o);
void atomic_store(void* p, unsigned bytes, std::uint64_t bits, order o);
void atomic_begin_ordered(const void* p, unsigned bytes, bool cas, order o);
void atomic_end_ordered(const void* p, unsigned bytes, std::uint64_t old_bits, bool cas, bool cas_ok, order o);
void fence_ordered(order o);
// An instrumented plain or volatile load or store of the running lane
// (gfsl_cuda_on_cpu_instrument, docs/CUDA-ON-CPU.md, "Plain loads and
// stores"), announced just before it happens.
void plain_access(const void* p, unsigned bytes, bool store) noexcept;
std::uint64_t virtual_clock(std::uint64_t per_step);
void nanosleep(unsigned ns);
// The running lane stops with a fault line (__trap, an assertion).
[[noreturn]] void trap(const char* what);
// Every module's __shared__ section, registered by each file that includes
// this header (a plugin's section is its own).
void shared_section(char* begin, char* end);
struct shared_section_registrar {
  shared_section_registrar() { shared_section(__start_gfsl_cpu_shared, __stop_gfsl_cpu_shared); }
};
[[maybe_unused]] static const shared_section_registrar register_shared_section{};

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

// The layer's own accesses to the user's memory are never instrumented
// plain accesses (an atomic's read and write are one step, not three).
#if defined(__clang__) || defined(__GNUC__)
#define GFSL_CPU_UNINSTRUMENTED __attribute__((no_sanitize("thread")))
#else
#define GFSL_CPU_UNINSTRUMENTED
#endif

template <class T, class F>
GFSL_CPU_UNINSTRUMENTED T rmw(T* p, F&& f, bool cas = false, T compare = T{}) {
  atomic_begin(p, sizeof(T), cas);
  const T old = *p;
  bool ok = true;
  if (cas) ok = std::memcmp(&old, &compare, sizeof(T)) == 0;
  if (ok) *p = f(old);
  atomic_end(p, sizeof(T), to_bits(old), cas, ok);
  return old;
}

template <class T, class F>
GFSL_CPU_UNINSTRUMENTED T rmw_ordered(T* p, F&& f, order o, bool cas = false, T compare = T{}) {
  atomic_begin_ordered(p, sizeof(T), cas, o);
  const T old = *p;
  bool ok = true;
  if (cas) ok = std::memcmp(&old, &compare, sizeof(T)) == 0;
  if (ok) *p = f(old);
  atomic_end_ordered(p, sizeof(T), to_bits(old), cas, ok, o);
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
// Warp collectives: CUDA's mask rules, checked. Each takes the caller's
// source line as a default argument, so that a fault names it.
#define GFSL_CPU_HERE ::std::source_location where = ::std::source_location::current()
#define GFSL_CPU_COLL(kind, mask, payload, arg, width) \
  (::gfsl::cpu::detail::at(where), ::gfsl::cpu::detail::collective(::gfsl::cpu::detail::coll::kind, mask, payload, arg, width))
inline unsigned __ballot_sync(unsigned mask, int pred, GFSL_CPU_HERE) {
  return static_cast<unsigned>(GFSL_CPU_COLL(ballot, mask, pred != 0, 0, 32));
}
inline int __any_sync(unsigned mask, int pred, GFSL_CPU_HERE) {
  return static_cast<int>(GFSL_CPU_COLL(any, mask, pred != 0, 0, 32));
}
inline int __all_sync(unsigned mask, int pred, GFSL_CPU_HERE) {
  return static_cast<int>(GFSL_CPU_COLL(all, mask, pred != 0, 0, 32));
}
inline void __syncwarp(unsigned mask = 0xFFFFFFFFu, GFSL_CPU_HERE) { (void)GFSL_CPU_COLL(syncwarp, mask, 0, 0, 32); }
template <class T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize, GFSL_CPU_HERE) {
  return ::gfsl::cpu::detail::from_bits<T>(GFSL_CPU_COLL(shfl, mask, ::gfsl::cpu::detail::to_bits(var), src_lane, width));
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize, GFSL_CPU_HERE) {
  return ::gfsl::cpu::detail::from_bits<T>(
      GFSL_CPU_COLL(shfl_up, mask, ::gfsl::cpu::detail::to_bits(var), static_cast<int>(delta), width));
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize, GFSL_CPU_HERE) {
  return ::gfsl::cpu::detail::from_bits<T>(
      GFSL_CPU_COLL(shfl_down, mask, ::gfsl::cpu::detail::to_bits(var), static_cast<int>(delta), width));
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize, GFSL_CPU_HERE) {
  return ::gfsl::cpu::detail::from_bits<T>(GFSL_CPU_COLL(shfl_xor, mask, ::gfsl::cpu::detail::to_bits(var), lane_mask, width));
}
template <class T>
unsigned __match_any_sync(unsigned mask, T value, GFSL_CPU_HERE) {
  return static_cast<unsigned>(GFSL_CPU_COLL(match_any, mask, ::gfsl::cpu::detail::to_bits(value), 0, 32));
}
// The mask when every lane of it holds the same value (and *pred = 1), else
// 0 (and *pred = 0).
template <class T>
unsigned __match_all_sync(unsigned mask, T value, int* pred, GFSL_CPU_HERE) {
  const unsigned r = static_cast<unsigned>(GFSL_CPU_COLL(match_all, mask, ::gfsl::cpu::detail::to_bits(value), 0, 32));
  if (pred) *pred = r != 0;
  return r;
}
// __reduce_*_sync: the lanes of the mask combine their values (sm_80's
// integer reductions; add, min and max of int and unsigned, and, or, xor of unsigned).
#define GFSL_CPU_REDUCE(name, op, T, sign)                                                                   \
  inline T name(unsigned mask, T value, GFSL_CPU_HERE) {                                                   \
    return static_cast<T>(GFSL_CPU_COLL(reduce, mask, static_cast<std::uint32_t>(value), (op) | (sign), 32)); \
  }
GFSL_CPU_REDUCE(__reduce_add_sync, ::gfsl::cpu::detail::reduce_add, unsigned, 0)
GFSL_CPU_REDUCE(__reduce_add_sync, ::gfsl::cpu::detail::reduce_add, int, 0)
GFSL_CPU_REDUCE(__reduce_min_sync, ::gfsl::cpu::detail::reduce_min, unsigned, 0)
GFSL_CPU_REDUCE(__reduce_min_sync, ::gfsl::cpu::detail::reduce_min, int, ::gfsl::cpu::detail::reduce_signed)
GFSL_CPU_REDUCE(__reduce_max_sync, ::gfsl::cpu::detail::reduce_max, unsigned, 0)
GFSL_CPU_REDUCE(__reduce_max_sync, ::gfsl::cpu::detail::reduce_max, int, ::gfsl::cpu::detail::reduce_signed)
GFSL_CPU_REDUCE(__reduce_and_sync, ::gfsl::cpu::detail::reduce_and, unsigned, 0)
GFSL_CPU_REDUCE(__reduce_or_sync, ::gfsl::cpu::detail::reduce_or, unsigned, 0)
GFSL_CPU_REDUCE(__reduce_xor_sync, ::gfsl::cpu::detail::reduce_xor, unsigned, 0)

// Block barriers: every thread of the block arrives (each warp's lanes at
// the same kind of barrier) before any goes on. A thread of the block that
// has exited, or exits while others wait, is a fault; so is a warp whose
// lanes wait at different collectives.
inline void __syncthreads(GFSL_CPU_HERE) { (void)GFSL_CPU_COLL(syncthreads, 0, 0, 0, 32); }
inline int __syncthreads_count(int pred, GFSL_CPU_HERE) { return static_cast<int>(GFSL_CPU_COLL(syncthreads, 0, pred != 0, 1, 32)); }
inline int __syncthreads_and(int pred, GFSL_CPU_HERE) { return static_cast<int>(GFSL_CPU_COLL(syncthreads, 0, pred != 0, 2, 32)); }
inline int __syncthreads_or(int pred, GFSL_CPU_HERE) { return static_cast<int>(GFSL_CPU_COLL(syncthreads, 0, pred != 0, 3, 32)); }

// The lanes of the warp that reach this same __activemask call (the same
// source line) together: a lane arriving here waits until every other lane
// of its warp has exited or waits at a collective, and the call returns the
// lanes waiting at this line then. On the device the answer is the lanes
// the hardware happens to run converged; this is the largest such set the
// code allows, so a mask taken inside a branch names the lanes of that
// branch, and never a lane that has exited.
inline unsigned __activemask(std::source_location where = std::source_location::current()) {
  const std::uint64_t site = (static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(where.file_name())) << 20) ^ where.line();
  ::gfsl::cpu::detail::at(where);
  return static_cast<unsigned>(::gfsl::cpu::detail::collective(::gfsl::cpu::detail::coll::activemask, 0, 0, 0, 32, site));
}

// Virtual time (gfsl::cpu::cycles_per_step): each read is a scheduling point.
inline long long clock64(GFSL_CPU_HERE) {
  ::gfsl::cpu::detail::at(where);
  return static_cast<long long>(::gfsl::cpu::detail::virtual_clock(::gfsl::cpu::cycles_per_step));
}
// %globaltimer in nanoseconds (PTX's `mov.u64 %0, %globaltimer;`).
inline unsigned long long __globaltimer(GFSL_CPU_HERE) {
  ::gfsl::cpu::detail::at(where);
  return ::gfsl::cpu::detail::virtual_clock(::gfsl::cpu::nanoseconds_per_step);
}
// A scheduling point that moves the virtual clock on by `ns`.
inline void __nanosleep(unsigned ns, GFSL_CPU_HERE) {
  ::gfsl::cpu::detail::at(where);
  ::gfsl::cpu::detail::nanosleep(ns);
}
// A fault line naming the lane and the line, and the run ends.
[[noreturn]] inline void __trap(GFSL_CPU_HERE) {
  ::gfsl::cpu::detail::at(where);
  ::gfsl::cpu::detail::trap("__trap()");
}
template <class T>
T __ldg(const T* p) {
  return *p;
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
#define GFSL_CPU_ATOMIC_ALIASES(name, T)                                                      \
  inline T name##_block(T* p, T v, GFSL_CPU_HERE) { return name(p, v, where); }              \
  inline T name##_system(T* p, T v, GFSL_CPU_HERE) { return name(p, v, where); }

#define GFSL_CPU_ATOMIC(name, T, expr)                                                           \
  inline T name(T* p, T v, GFSL_CPU_HERE) {                                                      \
    ::gfsl::cpu::detail::at(where);                                                              \
    return ::gfsl::cpu::detail::rmw(p, [v](T old) -> T { (void)old; return expr; });             \
  }                                                                                              \
  GFSL_CPU_ATOMIC_ALIASES(name, T)
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
  inline T atomicCAS(T* p, T compare, T v, GFSL_CPU_HERE) {                                      \
    ::gfsl::cpu::detail::at(where);                                                              \
    return ::gfsl::cpu::detail::rmw(p, [v](T) -> T { return v; }, true, compare);                \
  }                                                                                              \
  inline T atomicCAS_block(T* p, T compare, T v, GFSL_CPU_HERE) { return atomicCAS(p, compare, v, where); } \
  inline T atomicCAS_system(T* p, T compare, T v, GFSL_CPU_HERE) { return atomicCAS(p, compare, v, where); }
GFSL_CPU_ATOMIC_CAS(int)
GFSL_CPU_ATOMIC_CAS(unsigned int)
GFSL_CPU_ATOMIC_CAS(unsigned long long int)
GFSL_CPU_ATOMIC_CAS(unsigned short int)

// fence.sc at GPU scope; the block and system forms are the same fence.
inline void __threadfence(GFSL_CPU_HERE) {
  ::gfsl::cpu::detail::at(where);
  ::gfsl::cpu::detail::fence();
}
inline void __threadfence_block(GFSL_CPU_HERE) { __threadfence(where); }
inline void __threadfence_system(GFSL_CPU_HERE) { __threadfence(where); }

// ---------------------------------------------------------------------------
// Unsupported: a compile error that names what is missing and the page.
#define GFSL_CPU_UNSUPPORTED(name, why)                                               \
  template <class T_ = void, class... A_>                                             \
  void name(A_...) {                                                                  \
    static_assert(::gfsl::cpu::detail::unsupported<T_>::value, "gfsl::cpu: " #name " is not supported: " why " (docs/CUDA-ON-CPU.md)"); \
  }
GFSL_CPU_UNSUPPORTED(__shfl, "pre-Volta shuffles have no mask to check; use __shfl_sync")
GFSL_CPU_UNSUPPORTED(__shfl_up, "pre-Volta shuffles have no mask to check; use __shfl_up_sync")
GFSL_CPU_UNSUPPORTED(__shfl_down, "pre-Volta shuffles have no mask to check; use __shfl_down_sync")
GFSL_CPU_UNSUPPORTED(__shfl_xor, "pre-Volta shuffles have no mask to check; use __shfl_xor_sync")
GFSL_CPU_UNSUPPORTED(__ballot, "pre-Volta votes have no mask to check; use __ballot_sync")
GFSL_CPU_UNSUPPORTED(__any, "pre-Volta votes have no mask to check; use __any_sync")
GFSL_CPU_UNSUPPORTED(__all, "pre-Volta votes have no mask to check; use __all_sync")
GFSL_CPU_UNSUPPORTED(__prof_trigger, "profiler counters are not emulated")
GFSL_CPU_UNSUPPORTED(__brkpt, "breakpoints are not emulated")

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
