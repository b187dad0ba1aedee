// gfsl/oracles.cuh: checker-free oracles for your own GPU structure. A
// history needs a checker (gfsl/record.cuh, gfsl check); a key whose every
// answer is known in advance needs none, so each answer is judged on the
// device where it is given, at the speed of the structure itself, for as
// long as you like. Header-only; needs the CUDA toolkit alone (cooperative
// groups, libcu++). docs/YOUR-STRUCTURE.md, "Oracles", walks through it.
//
//   // device: your kernel, one call per tile, your structure's calls as lambdas
//   __global__ void oracles(my_ref m, gfsl::oracles::launch l) {
//     auto tile = cg::tiled_partition<8>(cg::this_thread_block());
//     gfsl::oracles::run(tile, m, l,
//         [](auto& t, my_ref& m, unsigned k, unsigned v) { return m.insert(t, k, v); },
//         [](auto& t, my_ref& m, unsigned k) { return m.erase(t, k); },
//         [](auto& t, my_ref& m, unsigned k, unsigned& v) { return m.find(t, k, &v); });
//   }
//   // host: a harness per oracle; each round is three launches of your kernel
//   gfsl::oracles::harness h({gfsl::oracles::kind::owned_keys, tiles});
//   for (int r = 0; r < 4; ++r) { reset(m); if (!h.round([&](auto l) { oracles<<<blocks, threads>>>(m, l); })) break; }  // false: a hang
//   h.print(stdout, "my map");                    // exit status: h.clean() ? 0 : 1
//
// The oracles (one per harness; each round runs one of them on a structure
// you reset before the round):
// - stable_keys: keys base + i * stride are inserted in the prefill phase and
//   never erased; reader tiles look them up (each must be found, with its
//   value) while writer tiles insert and erase keys that collide with them:
//   by default their neighbours (base + i * stride + 1 ..: the same node of
//   an ordered structure), or the keys your `collide(stable_key, j)` names
//   (the same bucket of your hash). Catches torn and stale reads of a
//   node or bucket that a writer is changing.
// - owned_keys: tile t owns keys base + t + j * tiles (j < per_tile), starts
//   with none of them, and alone inserts, erases and finds them, so it knows
//   every answer: insert true iff absent, erase true iff present, find iff
//   present (with the value). With `churn` > 0, half of the operations insert
//   and erase shared keys that every tile races on (unjudged, counted by the
//   accounting): the races that lose or duplicate the owned keys beside them.
// - publication: tile p (p < tiles / 2) inserts its key, then release-stores
//   a flag; tile p + tiles / 2 (another block, on another SM as a rule; the
//   summary counts the pairs that were) acquire-loads the flag, then its
//   find must succeed; it release-stores an acknowledgement, which the
//   producer acquires before it erases the key and starts again. Catches
//   inserts that are not yet visible when they return (a missing release or
//   a write left in a cache).
// Every oracle also keeps final-state accounting: each successful insert
// and erase of a key in the round's key span (prefill included) is counted
// on the device; after the run phase the final phase looks every key up, and
// the host checks that its inserts and erases alternated: inserts - erases
// is 0 or 1, and 1 exactly when the key is found. Catches lost inserts and
// erases, and keys inserted twice, whatever answers the operations gave.
// Only keys a final find ran on are judged, and a run that judged nothing
// at all is refused (summary::refused; never clean).
// The host side (configuration, summary, accounting, report) is plain C++,
// in gfsl/oracles_host.hpp.
//
// The callables. Every lane of the tile calls them together, with the same
// arguments, as your API wants; lane 0's answer is taken:
//   bool insert(const Tile&, Handle&, unsigned key, unsigned value)  insert if absent: true iff it inserted
//     (config::insert: insert_kind::or_assign for an insert-or-assign, whose answer is not judged;
//     insert_kind::multiset for a multiset's or multimap's insert, which always adds and answers true)
//   bool erase(const Tile&, Handle&, unsigned key)                   true iff the key was there
//   bool find(const Tile&, Handle&, unsigned key, unsigned& value)   true iff found; value: the one found
//   or find(const Tile&, Handle&, unsigned key, unsigned& value, seen& read): the same, and the words it
//     read (up to 8) in `read`, which a violation report prints as the words the failing read saw
// Values are value_of(key) (never ~0u), so that every reader knows them.
// Keys are base .. base + span() - 1; choose `base` clear of the keys your
// structure reserves (an empty slot's key, a tombstone's).
#pragma once

#include <cooperative_groups.h>
#include <cuda/atomic>
#include <cuda/std/type_traits>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "oracles_host.hpp"

namespace gfsl::oracles {

// What a launch of your kernel gets: plain data, passed by value.
struct launch {
  config cfg;
  phase ph = phase::prefill;
  std::uint32_t span = 0;  // the round's keys: base .. base + span - 1
  std::uint32_t round = 0;
  std::uint64_t origin_ns = 0, end_ns = 0;
  unsigned long long* counts = nullptr;
  unsigned long long* first_ns = nullptr;
  violation* records = nullptr;
  unsigned long long* recorded = nullptr;
  unsigned* inserted = nullptr;  // per key of the span: successful inserts
  unsigned* erased = nullptr;    // and erases
  unsigned* found = nullptr;     // final phase: a found_state (0: no find ran on the key)
  unsigned long long* flags = nullptr;  // publication: two words a pair (flag, acknowledgement)
};

// The default collision pattern of stable_keys: the keys just above a stable
// key, before the next one (stride - 1 of them).
struct neighbours {
  std::uint32_t stride = 2;
  __host__ __device__ unsigned operator()(unsigned stable_key, unsigned j) const { return stable_key + 1 + j % (stride - 1); }
};

namespace detail {

__device__ inline std::uint64_t now_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ inline unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
__host__ __device__ inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A tile's view of one launch: its id, its random numbers (every lane draws
// the same ones, so the tile never diverges), its counters in registers.
template <class Tile>
struct tile_run {
  const Tile& tile;
  const launch& l;
  std::uint32_t id;
  std::uint64_t rng;
  unsigned long long n[c_count] = {};
  seen last;  // what the latest find read, when its callable reports it

  __device__ tile_run(const Tile& t, const launch& la, std::uint32_t i)
      : tile(t), l(la), id(i), rng(mix(la.cfg.seed ^ (0x9E3779B97F4A7C15ull * (i + 1)) ^ (std::uint64_t(la.round) << 40))) {}
  __device__ std::uint64_t next() { return mix(rng += 0x9E3779B97F4A7C15ull); }
  __device__ bool leader() const { return tile.thread_rank() == 0; }
  // A value of lane 0 for every lane.
  template <class T>
  __device__ T bcast(T v) const { return tile.shfl(v, 0); }
  __device__ bool time_up() const { return l.end_ns != 0 && bcast(leader() ? now_ns() : std::uint64_t(0)) >= l.end_ns; }

  __device__ bool in_span(unsigned k) const { return k - l.cfg.base < l.span; }
  __device__ void count_success(op o, unsigned k) {
    if (!in_span(k) || !leader()) return;
    atomicAdd(o == op::insert ? l.inserted + (k - l.cfg.base) : l.erased + (k - l.cfg.base), 1u);
  }
  // Judge one answer; the leader counts a violation at once and takes a
  // record slot (rare), the rest stays in registers until flush().
  __device__ void judge(op o, unsigned k, bool expected, bool given, unsigned v_expected, unsigned v_given) {
    ++n[c_judged];
    const bool wrong_value = expected && given && o == op::find && v_given != v_expected;
    if (given == expected && !wrong_value) return;
    if (!leader()) return;
    const std::uint64_t at = now_ns() - l.origin_ns;
    atomicAdd(l.counts + c_violations, 1ull);
    atomicAdd(l.counts + (wrong_value ? c_value : expected ? c_missing : c_extra), 1ull);
    atomicMin(l.first_ns, static_cast<unsigned long long>(at));
    const unsigned long long slot = atomicAdd(l.recorded, 1ull);
    if (slot < l.cfg.reports) {
      violation& r = l.records[slot];
      r.tile = id;
      r.key = k;
      r.oracle = static_cast<std::uint8_t>(l.cfg.oracle);
      r.operation = static_cast<std::uint8_t>(o);
      r.expected = expected;
      r.given = given;
      r.value_expected = v_expected;
      r.value_given = v_given;
      r.sm = sm_id();
      r.time_ns = at;
      r.read.count = o == op::find && last.count <= 8 ? last.count : 0;
      for (std::uint32_t i = 0; i < r.read.count; ++i) r.read.words[i] = last.words[i];
    }
  }
  __device__ void flush() {
    if (!leader()) return;
    for (int i = 0; i < c_count; ++i) {
      if (n[i] && i != c_violations) atomicAdd(l.counts + i, n[i]);
    }
  }
};

// Release: every lane's writes of the operation it just finished, then the
// leader's flag. Each lane's release fence at GPU scope orders its own
// earlier writes before what follows it; the tile barrier then orders the
// lanes before the leader's store, and PTX release is cumulative (it covers
// what the releasing thread has observed through the barrier), so a reader
// that acquires the flag sees the whole insert, whichever lanes wrote it.
__device__ inline void release_store(unsigned long long* word, unsigned long long v, bool leader) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> w(*word);
  if (leader) w.store(v, cuda::std::memory_order_release);
}
template <class Tile>
__device__ void release_fence(const Tile& tile) {
  cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_device);
  tile.sync();
}
// Acquire, the mirror: the leader's acquire load, the barrier, and each
// lane's acquire fence before it reads the structure, so that every lane's
// find happens after the producer's insert.
template <class Tile>
__device__ void acquire_fence(const Tile& tile) {
  tile.sync();
  cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_device);
}

}  // namespace detail

// The oracles, run by every tile of your kernel with your structure's handle
// and callables; `collide` (stable_keys only) names the j-th key that
// collides with a stable key (any j: reduce it modulo your choice); a stable
// key it returns is skipped.
template <class Tile, class Handle, class Insert, class Erase, class Find, class Collide = neighbours>
__device__ void run(const Tile& tile, Handle& h, const launch& l, Insert&& insert, Erase&& erase, Find&& find,
                    Collide collide = neighbours{}) {
  // The tile's id: its rank in the grid (blocks and tiles in order).
  const std::uint64_t block = blockIdx.x + static_cast<std::uint64_t>(gridDim.x) * (blockIdx.y + static_cast<std::uint64_t>(gridDim.y) * blockIdx.z);
  const std::uint64_t in_block = threadIdx.x + blockDim.x * (threadIdx.y + static_cast<std::uint64_t>(blockDim.y) * threadIdx.z);
  const std::uint64_t id64 = (block * blockDim.x * blockDim.y * blockDim.z + in_block) / tile.num_threads();
  if (id64 >= l.cfg.tiles) return;
  detail::tile_run<Tile> t(tile, l, static_cast<std::uint32_t>(id64));
  const config& c = l.cfg;
  if constexpr (std::is_same_v<Collide, neighbours>) collide.stride = c.stride;
  // An insert-or-assign's insert leaves the key in whatever it answered:
  // the accounting counts every one, and its answer is never judged.
  const bool assigns = c.insert == insert_kind::or_assign;
  auto do_insert = [&](unsigned k) {
    const bool ok = t.bcast(insert(tile, h, k, value_of(k)) ? 1 : 0) != 0;
    ++t.n[c_inserts];
    if (ok || assigns) t.count_success(op::insert, k);
    return ok;
  };
  // An insert whose answer is known: true (the key absent, or a multiset's).
  auto insert_known_true = [&](unsigned k) {
    const bool ok = do_insert(k);
    if (!assigns) t.judge(op::insert, k, true, ok, 0, 0);
  };
  auto do_erase = [&](unsigned k) {
    const bool ok = t.bcast(erase(tile, h, k) ? 1 : 0) != 0;
    ++t.n[c_erases];
    if (ok) t.count_success(op::erase, k);
    return ok;
  };
  auto do_find = [&](unsigned k, unsigned& v) {
    unsigned got = 0;
    bool found;
    if constexpr (cuda::std::is_invocable_v<Find&, const Tile&, Handle&, unsigned, unsigned&, seen&>) {
      t.last.count = 0;
      found = find(tile, h, k, got, t.last);
    } else {
      found = find(tile, h, k, got);
    }
    const bool ok = t.bcast(found ? 1 : 0) != 0;
    v = t.bcast(got);
    ++t.n[c_finds];
    return ok;
  };

  if (l.ph == phase::prefill) {
    // stable_keys only: the stable keys, spread over the tiles. Each must
    // insert (the structure starts empty).
    if (c.oracle == kind::stable_keys) {
      for (std::uint32_t i = t.id; i * c.stride < c.range; i += c.tiles) {
        insert_known_true(c.base + i * c.stride);
      }
    }
  } else if (l.ph == phase::final_state) {
    // Every key of the span looked up once; the host does the accounting.
    for (std::uint32_t i = t.id; i < l.span; i += c.tiles) {
      unsigned v = 0;
      const unsigned k = c.base + i;
      const bool ok = do_find(k, v);
      if (t.leader()) l.found[i] = ok ? looked_up_present : looked_up_absent;
      if (ok) t.judge(op::find, k, true, true, value_of(k), v);  // a found key has its value
    }
  } else if (c.oracle == kind::stable_keys) {
    const bool writer = t.id % c.writer_every == 0;
    const std::uint32_t stables = (c.range + c.stride - 1) / c.stride;
    for (std::uint64_t i = 0; i < c.ops_per_tile; ++i) {
      if ((i & 15) == 0 && t.time_up()) break;
      const std::uint64_t r = t.next();
      const unsigned s = c.base + static_cast<unsigned>((r >> 32) % stables) * c.stride;
      if (writer) {
        const unsigned k = collide(s, static_cast<unsigned>(r >> 8));
        if (k >= c.base && (k - c.base) % c.stride == 0 && k - c.base < c.range) continue;  // a stable key: never written
        (r & 1) ? (void)do_insert(k) : (void)do_erase(k);
      } else {
        unsigned v = 0;
        const bool ok = do_find(s, v);
        t.judge(op::find, s, true, ok, value_of(s), v);
      }
    }
  } else if (c.oracle == kind::owned_keys) {
    const std::uint32_t per = c.per_tile < 32 ? c.per_tile : 32;
    std::uint32_t present = 0;  // bit j: the tile's key j is in (it starts with none)
    // multiset: bits 2j, 2j + 1: how many occurrences of key j are in (at
    // most 3: an insert at 3 erases instead).
    std::uint64_t occurrences = 0;
    const bool multiset = c.insert == insert_kind::multiset;
    for (std::uint64_t i = 0; i < c.ops_per_tile; ++i) {
      if ((i & 15) == 0 && t.time_up()) break;
      const std::uint64_t r = t.next();
      if (c.churn != 0 && (r & 2) != 0) {
        const unsigned k = c.base + c.tiles * c.per_tile + static_cast<unsigned>((r >> 32) % c.churn);
        (r & 1) ? (void)do_insert(k) : (void)do_erase(k);
        continue;
      }
      const std::uint32_t j = static_cast<std::uint32_t>((r >> 32) % per);
      const unsigned k = c.base + t.id + j * c.tiles;
      const unsigned held = static_cast<unsigned>(occurrences >> (2 * j)) & 3u;
      const bool in = multiset ? held > 0 : ((present >> j) & 1) != 0;
      unsigned which = static_cast<unsigned>((r >> 8) % 3);
      if (multiset && which == 0 && held == 3) which = 1;
      if (which == 0) {
        const bool ok = do_insert(k);
        if (!assigns) t.judge(op::insert, k, multiset || !in, ok, 0, 0);
        present |= 1u << j;
        if (multiset) occurrences += std::uint64_t{1} << (2 * j);
      } else if (which == 1) {
        t.judge(op::erase, k, in, do_erase(k), 0, 0);
        present &= ~(1u << j);
        if (multiset && held > 0) occurrences -= std::uint64_t{1} << (2 * j);
      } else {
        unsigned v = 0;
        const bool ok = do_find(k, v);
        t.judge(op::find, k, in, ok, value_of(k), v);
      }
    }
  } else {  // publication
    const std::uint32_t pairs = c.tiles / 2;
    if (t.id >= 2 * pairs) {
      t.flush();
      return;
    }
    const bool producer = t.id < pairs;
    const std::uint32_t pair = producer ? t.id : t.id - pairs;
    const unsigned k = c.base + pair;
    unsigned long long* flag = l.flags + 2 * pair;  // (trip << 32) | producer's SM; trip ~0u: the producer is done
    unsigned long long* ack = flag + 1;             // the last trip the consumer finished
    const std::uint64_t patience = static_cast<std::uint64_t>(c.wait_seconds * 1e9);
    // Wait until *w, acquired, satisfies done(); false after `patience`.
    auto await = [&](unsigned long long* w, auto done, unsigned long long& seen) {
      bool ok = false;
      if (t.leader()) {
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> a(*w);
        const std::uint64_t until = detail::now_ns() + patience;
        while (!(ok = done(seen = a.load(cuda::std::memory_order_acquire))) && detail::now_ns() < until) __nanosleep(100);
      }
      seen = t.bcast(seen);
      ok = t.bcast(ok ? 1 : 0) != 0;
      detail::acquire_fence(tile);
      return ok;
    };
    const unsigned long long finished = 0xFFFFFFFFull << 32;
    if (producer) {
      std::uint64_t trip = 1;
      for (; trip <= c.ops_per_tile && trip < 0xFFFFFFFFull; ++trip) {
        if (t.time_up()) break;
        // The key is this pair's alone and erased at the end of every trip:
        // absent now, so the insert must succeed.
        insert_known_true(k);
        detail::release_fence(tile);
        detail::release_store(flag, trip << 32 | detail::sm_id(), t.leader());
        unsigned long long seen = 0;
        if (!await(ack, [&](unsigned long long a) { return a == trip; }, seen)) {
          ++t.n[c_timeouts];
          break;
        }
        t.judge(op::erase, k, true, do_erase(k), 0, 0);
      }
      detail::release_store(flag, finished, t.leader());
    } else {
      for (std::uint64_t trip = 1;; ++trip) {
        unsigned long long seen = 0;
        if (!await(flag, [&](unsigned long long f) { return (f >> 32) >= trip; }, seen)) {
          ++t.n[c_timeouts];
          break;
        }
        if (seen == finished) break;
        // The flag is acquired: the producer's insert happened before, and
        // its erase waits for our acknowledgement, so k is present now.
        unsigned v = 0;
        const bool ok = do_find(k, v);
        t.judge(op::find, k, true, ok, value_of(k), v);
        if ((seen & 0xFFFFFFFFull) != detail::sm_id()) ++t.n[c_cross_sm];
        detail::release_fence(tile);
        detail::release_store(ack, trip, t.leader());
      }
    }
  }
  t.flush();
}

namespace detail {
template <int = 0>
__global__ void read_clock(unsigned long long* out) { *out = now_ns(); }

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("gfsl::oracles: ") + what + ": " + cudaGetErrorString(e));
}
template <class T>
T* device_alloc(std::size_t n) {
  T* p = nullptr;
  check(cudaMalloc(&p, std::max<std::size_t>(1, n) * sizeof(T)), "cudaMalloc");
  check(cudaMemset(p, 0, std::max<std::size_t>(1, n) * sizeof(T)), "cudaMemset");
  return p;
}
}  // namespace detail

// The host side: device memory for one oracle's counters and records, and
// the rounds. Not copyable (it owns device memory).
class harness {
 public:
  explicit harness(const config& c) : c_(c), span_(span_of(c)) {
    if (c.tiles == 0) throw std::invalid_argument("gfsl::oracles: config.tiles is 0");
    if (c.oracle == kind::stable_keys && (c.stride < 2 || c.range < c.stride || c.writer_every == 0))
      throw std::invalid_argument("gfsl::oracles: stable_keys needs stride >= 2, range >= stride, writer_every >= 1");
    if (c.oracle == kind::owned_keys && (c.per_tile == 0 || c.per_tile > 32))
      throw std::invalid_argument("gfsl::oracles: owned_keys needs per_tile in 1..32");
    if (c.oracle == kind::publication && c.tiles < 2) throw std::invalid_argument("gfsl::oracles: publication needs 2 tiles or more");
    l_.cfg = c;
    l_.span = span_;
    l_.counts = detail::device_alloc<unsigned long long>(c_count);
    l_.first_ns = detail::device_alloc<unsigned long long>(1);
    detail::check(cudaMemset(l_.first_ns, 0xFF, sizeof(unsigned long long)), "cudaMemset");
    l_.records = detail::device_alloc<violation>(c.reports);
    l_.recorded = detail::device_alloc<unsigned long long>(1);
    l_.inserted = detail::device_alloc<unsigned>(span_);
    l_.erased = detail::device_alloc<unsigned>(span_);
    l_.found = detail::device_alloc<unsigned>(span_);
    l_.flags = detail::device_alloc<unsigned long long>(2 * (c.tiles / 2 + 1));
  }
  harness(const harness&) = delete;
  harness& operator=(const harness&) = delete;
  ~harness() {
    // After a hang every cudaFree would wait for the kernel: the memory is
    // left to the process's end.
    if (s_.hung()) return;
    for (void* p : {static_cast<void*>(l_.counts), static_cast<void*>(l_.first_ns), static_cast<void*>(l_.records),
                    static_cast<void*>(l_.recorded), static_cast<void*>(l_.inserted), static_cast<void*>(l_.erased),
                    static_cast<void*>(l_.found), static_cast<void*>(l_.flags)})
      cudaFree(p);
  }

  const config& cfg() const { return c_; }
  std::uint32_t span() const { return span_; }

  // One round on a structure you have just reset (empty): `launch_kernel(l)`
  // launches your kernel with l, three times (prefill, run, final state), on
  // the default stream (the plain <<<blocks, threads>>>) or one that
  // synchronizes with it; the harness waits for each, at most
  // config::deadline_seconds (the run phase: `seconds` more), and does the
  // accounting. False: a launch missed its deadline (summary::hang says
  // which); every later round returns false at once. The kernel cannot be
  // stopped from the host: print the summary and end the process
  // (std::_Exit), since freeing device memory would wait for it.
  template <class Launcher>
  bool round(Launcher&& launch_kernel) {
    if (s_.hung()) return false;
    const std::size_t bytes = std::max<std::size_t>(1, span_) * sizeof(unsigned);
    detail::check(cudaMemset(l_.inserted, 0, bytes), "cudaMemset");
    detail::check(cudaMemset(l_.erased, 0, bytes), "cudaMemset");
    detail::check(cudaMemset(l_.found, 0, bytes), "cudaMemset");
    detail::check(cudaMemset(l_.flags, 0, 2 * (c_.tiles / 2 + 1) * sizeof(unsigned long long)), "cudaMemset");
    l_.round = s_.rounds;
    if (!step(launch_kernel, phase::prefill, 0)) return false;
    const std::uint64_t now = device_now();
    if (s_.rounds == 0) l_.origin_ns = now;
    l_.end_ns = c_.seconds > 0 ? now + static_cast<std::uint64_t>(c_.seconds * 1e9) : 0;
    if (!step(launch_kernel, phase::run, c_.seconds)) return false;
    l_.end_ns = 0;
    if (!step(launch_kernel, phase::final_state, 0)) return false;
    account();
    ++s_.rounds;
    return true;
  }

  // The figures so far (device counters and records copied back).
  summary result() const {
    summary s = s_;
    if (s.hung()) return s;  // the device's figures are behind the running kernel
    detail::check(cudaMemcpy(s.n, l_.counts, sizeof s.n, cudaMemcpyDeviceToHost), "cudaMemcpy");
    unsigned long long first = ~0ull, recorded = 0;
    detail::check(cudaMemcpy(&first, l_.first_ns, sizeof first, cudaMemcpyDeviceToHost), "cudaMemcpy");
    detail::check(cudaMemcpy(&recorded, l_.recorded, sizeof recorded, cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (first != ~0ull && (s.first_s < 0 || first / 1e9 < s.first_s)) s.first_s = first / 1e9;
    std::vector<violation> device(std::min<unsigned long long>(recorded, c_.reports));
    if (!device.empty())
      detail::check(cudaMemcpy(device.data(), l_.records, device.size() * sizeof(violation), cudaMemcpyDeviceToHost), "cudaMemcpy");
    // The device's records first, then the accounting's, up to `reports`.
    std::vector<violation> all = device;
    for (const violation& v : s_.records) {
      if (all.size() < c_.reports) all.push_back(v);
    }
    s.records = all;
    return s;
  }
  // No violation, and something judged (summary::refused: a run that
  // judged nothing is never clean).
  bool clean() const { return result().clean(); }

  // The summary, in the words of `gfsl stress` (print_summary).
  void print(std::FILE* out, const char* subject) const {
    const summary s = result();
    cudaDeviceProp prop{};
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    print_summary(out, subject, prop.name, c_, span_, s);
  }

  static std::string describe(const violation& v) { return oracles::describe(v); }

 private:
  static std::uint64_t device_now() {
    unsigned long long* t = detail::device_alloc<unsigned long long>(1);
    detail::read_clock<<<1, 1>>>(t);
    unsigned long long v = 0;
    detail::check(cudaMemcpy(&v, t, sizeof v, cudaMemcpyDeviceToHost), "reading the device clock");
    cudaFree(t);
    return v;
  }
  // One launch, waited for against the host's clock (wait_for): an event
  // recorded after it on the default stream, polled. `extra`: seconds the
  // launch may take beyond the deadline. False: it missed the deadline,
  // recorded in s_.hang.
  template <class Launcher>
  bool step(Launcher& launch_kernel, phase p, double extra) {
    l_.ph = p;
    cudaEvent_t began, done;
    detail::check(cudaEventCreate(&began), "cudaEventCreate");
    detail::check(cudaEventCreate(&done), "cudaEventCreate");
    detail::check(cudaEventRecord(began, 0), "cudaEventRecord");
    launch_kernel(l_);
    detail::check(cudaGetLastError(), "launching your kernel");
    detail::check(cudaEventRecord(done, 0), "cudaEventRecord");
    const double allowed = c_.deadline_seconds > 0 ? c_.deadline_seconds + extra : 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto host_seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    const wait_result w = wait_for(
        [&] {
          const cudaError_t e = cudaEventQuery(done);
          if (e == cudaErrorNotReady) return false;
          detail::check(e, "your kernel");
          return true;
        },
        host_seconds, [](std::uint64_t i) { std::this_thread::sleep_for(std::chrono::microseconds(i < 100 ? 20 : 1000)); }, allowed);
    if (w == wait_result::deadline) {
      s_.hang = hang_text(s_.rounds, p, host_seconds());
      return false;  // the events stay: destroying them is safe, but nothing here needs it
    }
    detail::check(cudaDeviceSynchronize(), "your kernel");
    if (p == phase::run) {
      float ms = 0;
      cudaEventElapsedTime(&ms, began, done);
      s_.seconds += ms / 1000.0;
    }
    cudaEventDestroy(began);
    cudaEventDestroy(done);
    return true;
  }
  // Final-state accounting (account_round): only keys a final find ran on
  // are judged.
  void account() {
    std::vector<unsigned> ins(span_), era(span_), found(span_);
    detail::check(cudaMemcpy(ins.data(), l_.inserted, span_ * sizeof(unsigned), cudaMemcpyDeviceToHost), "cudaMemcpy");
    detail::check(cudaMemcpy(era.data(), l_.erased, span_ * sizeof(unsigned), cudaMemcpyDeviceToHost), "cudaMemcpy");
    detail::check(cudaMemcpy(found.data(), l_.found, span_ * sizeof(unsigned), cudaMemcpyDeviceToHost), "cudaMemcpy");
    account_round(c_, span_, ins.data(), era.data(), found.data(), s_);
  }

  config c_;
  std::uint32_t span_;
  launch l_{};
  summary s_{};
};

}  // namespace gfsl::oracles
