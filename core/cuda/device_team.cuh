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
//   A wave (store_lanes) is several lanes' stores in one instruction: each is
//   ordered after the team's earlier writes, none after another, and the
//   barrier after it orders the whole wave before the team's next store.
// - Lock acquisition is a CAS with acq_rel; unlock and the zombie mark are
//   release stores, so everything written under the lock is visible first.
#pragma once

#include <cuda/atomic>
#include <cstdint>
#include <type_traits>

#include "../events.hpp"
#include "../gfsl/layout.hpp"
#include "../team.hpp"
#include "../types.hpp"

namespace gfsl {

// A kernel's view of the run it belongs to: how to stop a hung run. Every
// lock wait counts against a budget; once the run's deadline passes (read
// from %globaltimer) the first team to notice raises the device-wide abort
// flag and records what it waited on, and every team leaves the kernel at its
// next lock wait or operation. Operations in flight stay pending.
struct hang_report {
  unsigned long long raised = 0;  // 0 until a team records a hang
  team_id team = 0;
  std::uint32_t chunk = 0;
  std::uint64_t lock_word = 0;
  std::uint64_t waits = 0;        // lock waits of that team in its operation
};

// The structural event log of a run (core/events.hpp), written on
// the device. An event's sequence number comes from one device-wide counter
// and is also its slot, so the log needs no sorting and a log that fills up
// keeps an exact prefix of the global order (`next` still counts the rest).
//
// Why the counter's order is a valid global order: a store takes its number
// before it is made and a successful CAS after it. Every chunk write other
// than a lock CAS is made under the chunk's lock, whose holder's later unlock
// (or zombie mark) is a release store sequenced after those numbers; the next
// holder's acquiring CAS reads it and only then takes its own numbers. The
// counter's RMWs are therefore ordered by happens-before across holders
// (coherence of the counter word), and within a team by program order (the
// team's __syncwarp after each store orders its lanes).
struct device_event_log {
  const std::uint64_t* words = nullptr;  // the structure: an event's word is its offset from here
  std::uint32_t chunk = 32;
  std::uint32_t pool_chunks = 0;          // allocations past the pool are failures, not events
  unsigned long long* next = nullptr;     // numbers handed out, also past the capacity
  std::uint64_t capacity = 0;
  invariants::structural_event* out = nullptr;
  const std::uint64_t* stamp_counter = nullptr;  // the history's device counter, if that is its clock
  bool stamp_globaltimer = false;                // else %globaltimer, if that is its clock
};

struct run_controls {
  unsigned int* abort_flag = nullptr;
  hang_report* hang = nullptr;
  std::uint64_t deadline_ns = ~0ull;  // %globaltimer value after which waiting teams abort the run
  team_stats* stats = nullptr;        // where a team adds its counters when it leaves
  device_event_log* events = nullptr; // null: no event log (no cost but a not-taken branch per write)
};

__device__ inline std::uint64_t global_timer_ns() {
#if defined(__CUDA_ARCH__)
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return 0;
#endif
}

template <int N>
class device_team {
 public:
  static constexpr int width = N;
  static_assert(N == 16 || N == 32, "a team is 16 or 32 lanes of one warp");
  struct lanes {
    std::uint64_t v;
  };

  // `controls` must outlive the team (a kernel parameter or a local of the
  // kernel): the team keeps its address, not a copy, so the run's pointers
  // take no registers on the paths that never look at them.
  __device__ device_team(team_id id, std::uint64_t seed, const run_controls& controls)
      : id_(id), controls_(&controls), rng_(team_seed(seed, id)) {}

  // What a team carries from one operation to the next: its coin stream and
  // this lane's counter. A kernel that runs some operations in a function of
  // their own (bench/evaluation_kernels.cuh) passes it there and back by
  // value, three registers, instead of the team by reference, which would
  // put the team in local memory on every path.
  struct carried {
    std::uint64_t rng;
    std::uint32_t stat;
  };
  __device__ device_team(team_id id, carried c, const run_controls& controls)
      : id_(id), controls_(&controls), rng_(c.rng), stat_(c.stat) {}
  __device__ carried carry() const { return {rng_.state, stat_}; }
  __device__ void resume(carried c) {
    rng_.state = c.rng;
    stat_ = c.stat;
  }

  // The whole team as values, for the algorithm's calls made apart
  // (algorithm::apart, core/gfsl/algorithm.hpp): the called function builds a
  // team of its own from them and hands back what changed (the coin
  // stream, the counter, the operation's lock waits). By value, so that
  // the caller's team stays in registers. A team type that adds state of
  // its own must say calls_apart = false (stress/stress.hpp).
  static constexpr bool calls_apart = true;
  struct detached {
    team_id id;
    std::uint32_t waits;
    const run_controls* controls;
    std::uint64_t rng;
    std::uint32_t stat;
  };
  __device__ explicit device_team(const detached& d)
      : id_(d.id), controls_(d.controls), waits_in_op_(d.waits), rng_(d.rng), stat_(d.stat) {}
  __device__ detached detach() const { return {id_, waits_in_op_, controls_, rng_.state, stat_}; }
  __device__ void reattach(const detached& d) {
    waits_in_op_ = d.waits;
    rng_.state = d.rng;
    stat_ = d.stat;
  }

 private:
  // Where this lane sits, computed where it is used rather than kept in the
  // team object: the object lives in local memory when the algorithm holds
  // it by reference, and a mask loaded from there is a run-time value, for
  // which the compiler wraps every shuffle, ballot and barrier in
  // convergence tests. For N = 32 the mask is the constant full warp; for
  // N = 16 it is one of the two halves, from the thread index.
  //
  // Read from %laneid at every use (volatile asm). A value computed once
  // lives through the whole kernel, across the call of the updates
  // (bench/evaluation_kernels.cuh), and ptxas kept it in local memory: two
  // local loads on every step of every search (Nsight Compute, N = 32
  // contains). Read again at each use, it costs an S2R. Since the zombie
  // mark moved into the step's vote, ptxas keeps the lane in a register
  // through searchDown's loop, which touches no local memory at N = 32
  // (docs/BENCHMARKS.md, "The zombie mark in the step's vote").
  __host__ __device__ static int my_lane() {
#if defined(__CUDA_ARCH__)
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return static_cast<int>(lane % static_cast<unsigned>(N));
#else
    return 0;
#endif
  }
  __host__ __device__ static unsigned half_shift() {
#if defined(__CUDA_ARCH__)
    return N == 32 ? 0u : (threadIdx.x & 16u);
#else
    return 0;
#endif
  }
  __host__ __device__ static constexpr unsigned full_mask() { return N == 32 ? 0xFFFFFFFFu : 0xFFFFu; }
  __host__ __device__ static unsigned warp_mask() { return N == 32 ? full_mask() : (full_mask() << half_shift()); }

 public:
  __host__ __device__ team_id id() const { return id_; }
  __device__ int lane() const { return my_lane(); }
  // A barrier of the team's lanes (and only theirs: at N = 16 the other half
  // of the warp goes its own way).
  __device__ void sync() const { __syncwarp(warp_mask()); }
  // Counter s lives in lane s's register (stat_id, core/team.hpp): one register for
  // all of them, and an increment is a compare and an add, no branch. Team-wide
  // reads (reads_stat), counted on every step of every search, are added by every lane:
  // one instruction where the compare and the add took three (ptxas kept the
  // sum in a second register and moved it back). Every lane of a team makes
  // the same reads, so lane reads_stat holds their number and every other
  // lane holds its own counter plus that number, taken off at the flush.
  // Coverage marks (core/coverage.hpp) are the CPU scheduler's: nothing here.
  __host__ __device__ void mark(std::uint8_t, std::uint32_t) {}
  __host__ __device__ void count(stat_id s) {
    if (s == reads_stat) {
      ++stat_;
    } else {
      stat_ += my_lane() == static_cast<int>(s) ? 1u : 0u;
    }
  }
  // Adds the team's counters into the run's totals (if the run keeps them).
  // The whole team calls it (its shuffle).
  __device__ void flush_stats() {
#if defined(__CUDA_ARCH__)
    const std::uint32_t reads = __shfl_sync(warp_mask(), stat_, static_cast<int>(reads_stat), N);
    const std::uint32_t mine = my_lane() == static_cast<int>(reads_stat) ? stat_ : stat_ - reads;
    stat_ = 0;
    if (controls_->stats == nullptr || my_lane() >= max_team_stats || mine == 0) return;
    atomicAdd(reinterpret_cast<unsigned long long*>(controls_->stats) + my_lane(), static_cast<unsigned long long>(mine));
#endif
  }

  __host__ __device__ lanes load_lanes(const std::uint64_t* p) {
#if defined(__CUDA_ARCH__)
    lanes out{ref(p + my_lane()).load(cuda::std::memory_order_acquire)};
    __syncwarp(warp_mask());
    return out;
#else
    return lanes{*p};
#endif
  }
  // A row of N words (a chunk) named once for a search's loop: load_row(r,
  // w) reads the row w words further on. At N = 32 the row is this lane's
  // address in the first row, as an integer, and a read's address is one
  // multiply-add (IMAD.WIDE) on a value the search keeps through its loop;
  // written as pointer arithmetic, the compiler re-associated base + lane +
  // c * N into ((c * N | lane) << 3) + base, four instructions and a
  // constant load per chunk read. N = 16 keeps the pointer: there the
  // integer form ran the thesis variant's [10,10,80] at 0.88x of the
  // pointer's (one H100, docs/BENCHMARKS.md, "Cheaper record stores, a
  // chunk's address in one instruction").
  static constexpr bool row_as_integer = N == 32;
  using row = std::conditional_t<row_as_integer, std::uintptr_t, const std::uint64_t*>;
  __host__ __device__ row row_of(const std::uint64_t* p) const {
    if constexpr (row_as_integer) {
#if defined(__CUDA_ARCH__)
      return reinterpret_cast<std::uintptr_t>(p + my_lane());
#else
      return reinterpret_cast<std::uintptr_t>(p);
#endif
    } else {
      return p;
    }
  }
  __host__ __device__ lanes load_row(row r, std::uint64_t words) {
    if constexpr (row_as_integer) {
#if defined(__CUDA_ARCH__)
      lanes out{ref(reinterpret_cast<const std::uint64_t*>(r + words * sizeof(std::uint64_t)))
                    .load(cuda::std::memory_order_acquire)};
      __syncwarp(warp_mask());
      return out;
#else
      return load_lanes(reinterpret_cast<const std::uint64_t*>(r) + words);
#endif
    } else {
      return load_lanes(r + words);
    }
  }
  // With another order: only the load-relaxed mutant asks (core/gfsl/mutants.hpp).
  __host__ __device__ lanes load_lanes(const std::uint64_t* p, mem_order o) {
#if defined(__CUDA_ARCH__)
    if (o != mem_order::relaxed) return load_lanes(p);
    lanes out{ref(p + my_lane()).load(cuda::std::memory_order_relaxed)};
    __syncwarp(warp_mask());
    return out;
#else
    (void)o;
    return lanes{*p};
#endif
  }

  // Lane i loads addr(i), acquire; one team-wide read of words that are not
  // consecutive (the header: the error word beside the level counters).
  template <class Addr>
  __host__ __device__ lanes gather(Addr&& addr) {
#if defined(__CUDA_ARCH__)
    lanes out{ref(addr(my_lane())).load(cuda::std::memory_order_acquire)};
    __syncwarp(warp_mask());
    return out;
#else
    return lanes{*addr(0)};
#endif
  }
  // Lane i gets lane src(i)'s value.
  template <class Src>
  __host__ __device__ lanes shfl_from(const lanes& x, Src&& src) const {
#if defined(__CUDA_ARCH__)
    return lanes{__shfl_sync(warp_mask(), static_cast<unsigned long long>(x.v), src(my_lane()), N)};
#else
    return lanes{x.v};
#endif
  }
  // Lane i gets f(i, a_i, b_i): a per-lane choice, no communication.
  template <class F>
  __host__ __device__ lanes map(const lanes& a, const lanes& b, F&& f) const {
    return lanes{f(my_lane(), a.v, b.v)};
  }
  __host__ __device__ lanes splat(std::uint64_t v) const { return lanes{v}; }

  template <class Pred>
  __host__ __device__ std::uint32_t ballot(const lanes& x, Pred&& pred) const {
#if defined(__CUDA_ARCH__)
    const std::uint32_t bits = __ballot_sync(warp_mask(), pred(my_lane(), x.v));
    return N == 32 ? bits : (bits >> half_shift()) & 0xFFFFu;
#else
    return pred(0, x.v) ? 1u : 0u;
#endif
  }
  __host__ __device__ std::uint64_t shfl(const lanes& x, int src) const {
#if defined(__CUDA_ARCH__)
    return __shfl_sync(warp_mask(), static_cast<unsigned long long>(x.v), src, N);
#else
    (void)src;
    return x.v;
#endif
  }
  // One shuffle of the high word. Through shfl, the unused low half still
  // cost its convergence test (UMOV and BRA.DIV: ptxas drops a dead SHFL but
  // not the branch in front of it) on every step of every search.
  __host__ __device__ std::uint32_t shfl_high(const lanes& x, int src) const {
#if defined(__CUDA_ARCH__)
    return __shfl_sync(warp_mask(), static_cast<unsigned>(x.v >> 32), src, N);
#else
    (void)src;
    return static_cast<std::uint32_t>(x.v >> 32);
#endif
  }
  __host__ __device__ std::uint32_t shfl_low(const lanes& x, int src) const {
#if defined(__CUDA_ARCH__)
    return __shfl_sync(warp_mask(), static_cast<unsigned>(x.v), src, N);
#else
    (void)src;
    return static_cast<std::uint32_t>(x.v);
#endif
  }
  __host__ __device__ void set_lane(lanes& x, int lane, std::uint64_t v) const {
    if (my_lane() == lane) x.v = v;
  }

  __host__ __device__ std::uint64_t load(const std::uint64_t* p, int lane) {
#if defined(__CUDA_ARCH__)
    unsigned long long v = 0;
    if (my_lane() == lane) v = ref(p).load(cuda::std::memory_order_acquire);
    v = __shfl_sync(warp_mask(), v, lane, N);
    // As in load_lanes: the barrier orders the other lanes' later loads (the
    // head chunk a loaded head index names) after this acquire.
    __syncwarp(warp_mask());
    return v;
#else
    (void)lane;
    return *p;
#endif
  }
  __host__ __device__ void store(std::uint64_t* p, int lane, std::uint64_t v, mem_order o) {
#if defined(__CUDA_ARCH__)
    if (my_lane() == lane) {
      if (controls_->events) log_write(p, invariants::event_kind::store, v);  // numbered before it is made
      ref(p).store(v, to_cuda(o));
    }
    __syncwarp(warp_mask());
#else
    (void)lane, (void)o;
    *p = v;
#endif
  }
  // Lanes named in `mask` store their value of x to p[lane] in one
  // instruction: the stores of a wave have no order among themselves (each
  // release store is ordered after everything before the wave). The barrier
  // after them orders the wave before the team's next store, as in store().
  __host__ __device__ void store_lanes(std::uint64_t* p, const lanes& x, std::uint32_t mask, mem_order o) {
#if defined(__CUDA_ARCH__)
    const int l = my_lane();
    if ((mask >> l) & 1u) {
      if (controls_->events) log_write(p + l, invariants::event_kind::store, x.v);  // numbered before it is made
      ref(p + l).store(x.v, to_cuda(o));
    }
    __syncwarp(warp_mask());
#else
    (void)p, (void)x, (void)mask, (void)o;
#endif
  }
  // Strong CAS, `o` (acq_rel or acquire) on success and acquire on failure.
  // acquire: one atom.acquire.global instruction. Through atomic_ref the
  // compiler cannot tell the pool's global memory from shared memory: it
  // emits a generic CAS that returns only whether it succeeded, a reload for
  // the value found, and, for acq_rel, a MEMBAR.ALL.GPU before it.
  __host__ __device__ bool cas(std::uint64_t* p, int lane, std::uint64_t& expected, std::uint64_t desired,
                               mem_order o = mem_order::acq_rel) {
#if defined(__CUDA_ARCH__)
    int ok = 0;
    unsigned long long found = 0;
    if (my_lane() == lane) {
      std::uint64_t e = expected;
      if (o == mem_order::acquire) {
        unsigned long long old;
        asm volatile("atom.acquire.gpu.global.cas.b64 %0, [%1], %2, %3;"
                     : "=l"(old)
                     : "l"(p), "l"(static_cast<unsigned long long>(e)), "l"(static_cast<unsigned long long>(desired))
                     : "memory");
        ok = old == e ? 1 : 0;
        e = old;
      } else {
        ok = ref(p).compare_exchange_strong(e, desired, to_cuda(o), cuda::std::memory_order_acquire) ? 1 : 0;
      }
      found = e;
      if (ok && controls_->events) log_write(p, invariants::event_kind::cas, desired);  // numbered after it is made
    }
    ok = __shfl_sync(warp_mask(), ok, lane, N);
    expected = __shfl_sync(warp_mask(), found, lane, N);
    __syncwarp(warp_mask());
    return ok != 0;
#else
    (void)lane;
    const bool ok = *p == expected;
    if (ok) *p = desired;
    else expected = *p;
    return ok;
#endif
  }
  __host__ __device__ std::uint64_t fetch_add(std::uint64_t* p, int lane, std::uint64_t delta, mem_order o) {
#if defined(__CUDA_ARCH__)
    unsigned long long old = 0;
    if (my_lane() == lane) {
      old = ref(p).fetch_add(delta, to_cuda(o));
      if (controls_->events) log_allocation(p, old);
    }
    old = __shfl_sync(warp_mask(), old, lane, N);
    __syncwarp(warp_mask());
    return old;
#else
    (void)lane, (void)o;
    const std::uint64_t old = *p;
    *p += delta;
    return old;
#endif
  }
  // Unconditional swap by `lane`, the old value broadcast (SlabHash's
  // delete, core/slabhash/algorithm.hpp). Logged as a store: it writes
  // whatever it finds.
  __host__ __device__ std::uint64_t exchange(std::uint64_t* p, int lane, std::uint64_t desired, mem_order o) {
#if defined(__CUDA_ARCH__)
    unsigned long long old = 0;
    if (my_lane() == lane) {
      if (controls_->events) log_write(p, invariants::event_kind::store, desired);  // numbered before it is made
      old = ref(p).exchange(desired, to_cuda(o));
    }
    old = __shfl_sync(warp_mask(), old, lane, N);
    __syncwarp(warp_mask());
    return old;
#else
    (void)lane, (void)o;
    const std::uint64_t old = *p;
    *p = desired;
    return old;
#endif
  }
  // A short back-off keeps spinning teams from flooding the lock's line while
  // its holder, maybe on the same SM, works. Every 64th wait checks the abort
  // flag and the deadline (see run_controls).
  // A scheduler's hint (Team::hint): the device has none.
  __host__ __device__ void hint(team_hint) {}
  __host__ __device__ void lock_wait(std::uint32_t where, std::uint64_t lock_word) {
#if defined(__CUDA_ARCH__)
    __nanosleep(64);
    if ((++waits_in_op_ & 63u) != 0 || controls_->abort_flag == nullptr) return;
    int stop = 0;
    if (my_lane() == 0) {
      cuda::atomic_ref<unsigned int, cuda::thread_scope_device> flag(*controls_->abort_flag);
      if (flag.load(cuda::std::memory_order_relaxed) != 0) {
        stop = 1;
      } else if (global_timer_ns() > controls_->deadline_ns) {
        stop = 1;
        flag.store(1, cuda::std::memory_order_relaxed);
        if (atomicCAS(&controls_->hang->raised, 0ull, 1ull) == 0ull) {
          controls_->hang->team = id_;
          controls_->hang->chunk = where;
          controls_->hang->lock_word = lock_word;
          controls_->hang->waits = waits_in_op_;
          __threadfence();
        }
      }
    }
    if (__shfl_sync(warp_mask(), stop, 0, N)) leave();
#else
    (void)where, (void)lock_word;
#endif
  }
  // The run is being stopped: the whole team leaves the kernel now. Its
  // operation in flight keeps the pending record written at its call.
  __device__ void leave() {
#if defined(__CUDA_ARCH__)
    flush_stats();
    __syncwarp(warp_mask());
    asm volatile("exit;");
#endif
  }
  __device__ bool abort_raised() const {
    if (controls_->abort_flag == nullptr) return false;
    int raised = 0;
#if defined(__CUDA_ARCH__)
    if (my_lane() == 0) {
      raised = cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(*controls_->abort_flag).load(
                   cuda::std::memory_order_relaxed) != 0;
    }
    raised = __shfl_sync(warp_mask(), raised, 0, N);
#endif
    return raised != 0;
  }
  __device__ void begin_operation() { waits_in_op_ = 0; }
  __host__ __device__ std::uint32_t random_u32() { return static_cast<std::uint32_t>(rng_.next() >> 32); }

 private:
#if defined(__CUDA_ARCH__)
  __device__ void append_event(invariants::structural_event e) {
    device_event_log& log = *controls_->events;
    e.seq = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*log.next).fetch_add(
        1, cuda::std::memory_order_relaxed);
    if (e.seq >= log.capacity) return;  // full: the prefix kept is still exact
    if (log.stamp_counter) {
      // On the scale of the history's stamps (twice the counter, exec/cuda/recording.cuh).
      e.stamp = 2 * ref(log.stamp_counter).load(cuda::std::memory_order_relaxed);
    } else if (log.stamp_globaltimer) {
      e.stamp = global_timer_ns();
    }
    e.team = id_;
    log.out[e.seq] = e;
  }
  // A write to a chunk entry (header words are not structural events).
  __device__ void log_write(const std::uint64_t* p, invariants::event_kind kind, std::uint64_t value) {
    const std::uint64_t word = static_cast<std::uint64_t>(p - controls_->events->words);
    if (word < header_offsets::pool) return;
    const std::uint64_t rel = word - header_offsets::pool;
    invariants::structural_event e;
    e.kind = kind;
    e.chunk = static_cast<std::uint32_t>(rel / controls_->events->chunk);
    e.lane = static_cast<std::uint8_t>(rel % controls_->events->chunk);
    e.value = value;
    append_event(e);
  }
  __device__ void log_allocation(const std::uint64_t* p, std::uint64_t old) {
    if (p != controls_->events->words + header_offsets::alloc_counter || old >= controls_->events->pool_chunks) return;
    invariants::structural_event e;
    e.kind = invariants::event_kind::alloc;
    e.chunk = static_cast<std::uint32_t>(old);
    append_event(e);
  }
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
  const run_controls* controls_;
  std::uint32_t waits_in_op_ = 0;
  team_rng rng_;
  std::uint32_t stat_ = 0;  // this lane's counter: stat_id lane()
};

}  // namespace gfsl
