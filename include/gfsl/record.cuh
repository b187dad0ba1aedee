// gfsl/record.cuh: record the history of your own GPU structure, for
// `gfsl check`. Header-only; needs the CUDA toolkit alone (cooperative groups,
// libcu++). docs/YOUR-STRUCTURE.md walks through it.
//
//   gfsl::record::device_log log(tiles, ops_per_tile);           // host: device memory, every record pending
//   // in the kernel, one recorder per tile:
//   gfsl::record::recorder<32> rec(tile, log.ref(), tile_id);
//   auto h = rec.call(gfsl::record::op::insert, key, value);
//   bool ok = my_ref.insert(tile, key, value);              // your call, unchanged
//   rec.ret(h, ok);
//   // host, after the kernel:
//   log.write_json_lines("trace.jsonl");                   // gfsl check trace.jsonl
//
// Stamps. Every call and return of an operation takes a stamp from one
// 64-bit counter in device memory, by an acq_rel fetch_add of the tile's
// leader, between two tile barriers (tile.sync()). The fetch_adds on one word
// are totally ordered (its modification order, which real time cannot
// contradict: an RMW that starts after another finished reads its result), so
// if operation A returned before B was called, A's return RMW precedes B's
// call RMW and A.ret < B.call. The barriers keep every lane's accesses of the
// operation after its call stamp and before its return stamp (tile.sync()
// orders the memory accesses of the tile's threads), so an operation's
// interval on the stamps contains all of its shared accesses. And since the
// RMWs are acq_rel, an earlier return synchronizes with every later call:
// the stamp order is one the memory model itself guarantees, not one a clock
// happened to show. One RMW serves as a tile's return and its next call
// (stamps 2s and 2s + 1), as the project's own runner does
// (exec/cuda/recording.cuh): it halves the traffic on the contended word.
//
// Records. A call writes the record's operation, key, argument and call
// stamp before the operation starts; its return stamp stays "never returned"
// (every record starts as 0xFF bytes) until ret() writes the answer and the
// return stamp. A kernel stopped mid-run (a flag the host raises, a watchdog)
// therefore leaves its unfinished operations pending, which the checker
// treats as "may or may not have taken effect": never a false answer.
// Records are written with streaming stores (st.global.cs), read once on the
// host after the kernel.
#pragma once

#include <cooperative_groups.h>
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace gfsl::record {

// The operations a record names. insert, erase and find are GFSL's insert,
// delete and contains (gfsl check's default model: insert-if-absent, erase
// answering the value removed, find answering the value found); upsert is
// insert-or-assign (--model upsert-map); count answers how many times a key
// is in (--model multiset). range and snapshot are an ordered map's
// (--model ordered-map, ordered-upsert-map): a range answers the pairs in
// [lo, hi) (call_range, ret_range), a snapshot a handle (call_snapshot,
// ret_snapshot); a find or range may read at a handle (call_find_at,
// call_range_at). traces/FORMAT.md, "Ordered maps".
enum class op : std::uint8_t { insert = 0, erase = 1, find = 2, upsert = 3, count = 4, range = 5, snapshot = 6 };
// Set in a record's kind: the find or range read at the snapshot handle in
// its record (find: `arg`; range: its pair block's header).
inline constexpr std::uint8_t at_handle = 0x80;

// One record: five 8-byte words, the layout of the project's
// model::op_record, so that a trace writer may take them as they are.
struct alignas(8) entry {
  std::uint32_t who;    // the tile (tile ops) or tile * 32 + lane (lane ops)
  std::uint8_t kind;    // op
  std::uint8_t pad0[3];
  std::uint32_t key;
  std::uint32_t arg;    // insert, upsert: the value given; range: hi; a find at a handle: the handle
  std::uint8_t status;  // 0: returned normally; else it ended in an error, and may or may not have taken effect
  std::uint8_t ok;
  std::uint8_t known;   // bit 0: ok was recorded; bit 1: value was recorded
  std::uint8_t pad1;
  std::uint32_t value;  // erase, find: the value answered; count: the count; snapshot: the handle; range: its pair block
  std::uint64_t call;
  std::uint64_t ret;    // ~0: never returned (pending)
};
static_assert(sizeof(entry) == 40, "a record is five 8-byte words");

inline constexpr std::uint64_t never = ~0ull;

// How an operation that ended in an error ended (ret_error): it may or may
// not have taken effect, and gfsl check treats it as pending. The names are
// those of the trace format's `status` (traces/FORMAT.md).
enum class error : std::uint8_t { key_out_of_range = 1, pool_exhausted = 2, stopped = 3, corrupt = 4 };

// What the stamps read. counter: one 64-bit word of device memory, advanced
// by an acq_rel fetch_add (the order argument above; the default).
// globaltimer: the %globaltimer register between two fences, no shared word
// at all, sound only where the timer is one clock for every SM (the project's
// `gfsl run --clock globaltimer` documents when): equal readings count as
// concurrent.
enum class clock_kind : std::uint8_t { counter = 0, globaltimer = 1 };

// What a recorder writes, for measuring what recording costs part by part
// (the project's `gfsl bench --suite recording`). all: everything; a trace
// is only ever made of these. records_only: the records, stamped from their
// slot numbers with no ordering at all; stamps_only: every stamp, and no
// record (finish() stores their sum, so that none is optimized away).
enum class parts : std::uint8_t { all = 0, records_only = 1, stamps_only = 2 };

// The sequential object a history is of, as the trace names it (its
// metadata's "model", which gfsl check reads: traces/FORMAT.md, "Models").
// inferred: from the operations recorded (count: multiset; upsert:
// upsert-map; else map). Declare multiset for a multiset or multimap whose
// operations are insert, erase and find alone, and where an insert returns
// nothing (ret(h)): a multiset's insert always adds, and is written as
// having answered true.
// A log with ranges, snapshots or reads at a handle is an ordered map's:
// ordered-map, or ordered-upsert-map where it holds upserts.
enum class trace_model : std::uint8_t { inferred = 0, map = 1, upsert_map = 2, multiset = 3, ordered_map = 4, ordered_upsert_map = 5 };
inline const char* trace_model_name(trace_model m) {
  switch (m) {
    case trace_model::multiset: return "multiset";
    case trace_model::upsert_map: return "upsert-map";
    case trace_model::ordered_map: return "ordered-map";
    case trace_model::ordered_upsert_map: return "ordered-upsert-map";
    default: return "map";
  }
}

// The device side of a log: trivially copyable, passed to kernels by value.
// Tile t owns records [t * per_tile, (t + 1) * per_tile) (call() takes them
// in order; call_at() names its record itself).
//
// Several launches, one history: `taken[t]` counts the records tile t's
// recorders have taken so far, so a recorder of tile t continues after
// them, in this launch or a later one (a prefill kernel, the run, a kernel
// of final finds), and the stamps come from the one counter. Bit 31 of
// taken[t] marks a recorder of tile t that is live; a second recorder that
// finds it set (two tiles given one id, two kernels of one log running at
// once) records nothing and is counted in `clashes`, and records() refuses
// the log: never a silent overwrite.
struct log_ref {
  entry* records = nullptr;
  std::uint32_t per_tile = 0;
  std::uint32_t tiles = 0;
  std::uint64_t* clock = nullptr;          // the stamp counter, in device (global) memory
  unsigned int* overflow = nullptr;        // calls that found their tile's records full
  unsigned int* clashes = nullptr;         // recorders that found their tile's id held by a live recorder
  std::uint32_t* taken = nullptr;          // per tile: records taken by its recorders (bit 31: one is live); null: none kept
  clock_kind clock_source = clock_kind::counter;
  // Range answers: blocks of 8-byte words, each a header (the pair count,
  // and the handle of a range read at one) and its pairs (value << 32 |
  // key), taken from `pair_words` by a fetch_add on `pairs_taken`. A range
  // whose block does not fit is counted in `pairs_overflow` and records()
  // refuses the log.
  std::uint64_t* pairs = nullptr;
  std::uint64_t pair_words = 0;
  unsigned long long* pairs_taken = nullptr;
  unsigned int* pairs_overflow = nullptr;
};

// What call() hands back, for ret(): the record's index (no_slot: the call
// was not recorded, its tile's records were full).
struct handle {
  std::uint64_t slot;
  std::uint32_t snapshot = 0;  // a range read at a handle: that handle, for ret_range
};
inline constexpr std::uint64_t no_slot = ~0ull;

namespace detail {
__device__ inline void store_word(entry* e, int word, std::uint64_t w) {
  __stcs(reinterpret_cast<unsigned long long*>(e) + word, static_cast<unsigned long long>(w));
}
__device__ inline std::uint64_t word0(std::uint32_t who, std::uint8_t o) { return static_cast<std::uint64_t>(o) << 32 | who; }
__device__ inline std::uint64_t word1(std::uint32_t key, std::uint32_t arg) { return static_cast<std::uint64_t>(arg) << 32 | key; }
__device__ inline std::uint64_t word2(std::uint8_t status, bool ok, std::uint32_t value, std::uint8_t known) {
  return static_cast<std::uint64_t>(value) << 32 | static_cast<std::uint64_t>(known) << 16 | (ok ? 1u << 8 : 0u) | status;
}
// The counter's acq_rel fetch_add of 1, at device scope, as
// cuda::atomic_ref's. The counter is global memory (log_ref::clock), so the
// RMW names that space: through the generic pointer, ptxas tested every RMW
// for a shared-memory address and emulated that case with a compare-and-swap
// loop, about 25 more instructions and a local store and load around each of
// the recorder's inlined stamps (sm_90 SASS of the project's recording
// benchmark kernel).
__device__ inline std::uint64_t counter_fetch_add(std::uint64_t* counter) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  std::uint64_t v;
  asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(__cvta_generic_to_global(counter)) : "memory");
  return v;
#else
  return cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device>(*counter).fetch_add(1, cuda::std::memory_order_acq_rel);
#endif
}
__device__ inline std::uint64_t global_timer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
}  // namespace detail

// Where a recorder keeps what it carries from one call to the next: the last
// return's RMW value, its next record, and the open stamp group (its call
// stamp, its size, and lane i: the key and record of its i-th operation).
// Each thread keeps its own copy of the tile's values, so no slot is written
// by one lane and read by another.
//
// in_registers (the default) keeps them in the recorder object.
struct in_registers {
  static constexpr bool ranges = true;  // call() and call_lanes() may take records from the tile's range
  std::uint64_t stamp_ = never, seen_ = 0;
  std::uint32_t in_group_ = 0, key_ = 0, record_ = 0, next_ = 0;
  __device__ std::uint64_t& stamp() { return stamp_; }
  __device__ std::uint64_t& seen() { return seen_; }
  __device__ std::uint32_t& in_group() { return in_group_; }
  __device__ std::uint32_t& key() { return key_; }
  __device__ std::uint32_t& record() { return record_; }
  __device__ std::uint32_t& next() { return next_; }
};
// in_shared<Threads> keeps them in shared memory, one slot per thread of a
// one-dimensional block of at most Threads threads: for a kernel held to few
// registers, where the recorder's values would be live across the whole
// operation and push the structure's own into local memory (the project's
// kernels are held to 32; docs/BENCHMARKS.md, "Stamp groups").
// Ranges = false: the kernel names every record itself (call_at only), and
// the slots of the tile's next record are not kept: 4 bytes a thread of
// shared memory less, which is L1 cache more (docs/BENCHMARKS.md, "One
// recorder"). Every handle is then a record the kernel named, never no_slot,
// and the recorder leaves out the no_slot tests of its calls and returns.
template <int Threads, bool Ranges = true>
struct in_shared {
  static constexpr bool ranges = Ranges;
  struct slots {
    std::uint64_t stamp[Threads], seen[Threads];
    std::uint32_t in_group[Threads], key[Threads], record[Threads], next[Ranges ? Threads : 1];
  };
  __device__ static slots& s() {
    __shared__ slots all;
    return all;
  }
  __device__ std::uint64_t& stamp() { return s().stamp[threadIdx.x]; }
  __device__ std::uint64_t& seen() { return s().seen[threadIdx.x]; }
  __device__ std::uint32_t& in_group() { return s().in_group[threadIdx.x]; }
  __device__ std::uint32_t& key() { return s().key[threadIdx.x]; }
  __device__ std::uint32_t& record() { return s().record[threadIdx.x]; }
  __device__ std::uint32_t& next() {
    static_assert(Ranges, "call() and call_lanes() take records from the tile's range: in_shared<Threads, true>");
    return s().next[threadIdx.x];
  }
};

// A recorder for one tile of N threads (N = 1 to 32). Every call and ret is
// made by all of the tile's threads together (they sync the tile); keep one
// recorder per tile for the whole kernel, so that its records stay in the
// order the tile ran them.
//
// Stamp groups (`stamp_group` > 1, tile operations): one stamp opens a group
// of up to stamp_group consecutive operations of the tile and the next one
// closes it; every operation of the group is called at the opening stamp and
// returns at the closing one. Each operation's interval then contains its
// true one, so a linearizable history stays linearizable: the checker judges
// a weaker real-time order, never a false one. What the widening could hide
// is the tile's own order on a key (two operations of a group on one key
// would overlap, and the checker could swap them), so a group never holds two
// operations on one key: an operation whose key the open group holds closes
// it first. gfsl check decides key by key, and on one key every tile's
// operations keep their program order in the stamps. It divides the RMWs on
// the log's one contended word by up to stamp_group. The closing stamp is
// written into the group's records at the close, by the lanes that hold them,
// so N must be at least stamp_group; call finish() after the tile's last
// operation to close the last group (a group never closed stays pending,
// which says less than the tile knew, never something false). Group records
// are numbered in 32 bits.
//
// Tile: cooperative_groups::thread_block_tile<N>, or any type with the same
// thread_rank(), sync(), shfl(value, lane) and ballot(predicate).
template <int N, class State = in_registers, class Tile = cooperative_groups::thread_block_tile<N>>
class recorder {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a tile of 1, 2, 4, 8, 16 or 32 threads");

 public:
  using tile_type = Tile;

  __device__ recorder(const tile_type& tile, const log_ref& log, std::uint32_t tile_id, std::uint32_t stamp_group = 1,
                      parts what = parts::all)
      : tile_(tile), log_(log), id_(tile_id), group_(stamp_group > static_cast<std::uint32_t>(N) ? N : stamp_group), parts_(what) {
    state_.stamp() = never;
    state_.seen() = 0;
    state_.in_group() = 0;
    if constexpr (State::ranges) {
      // The tile's range continues after the records its earlier recorders
      // took (log_ref, "Several launches"); a live one of the same id keeps it.
      std::uint32_t start = 0;
      if (log_.taken != nullptr && id_ < log_.tiles) {
        std::uint32_t old = 0;
        if (tile_.thread_rank() == 0) {
          old = atomicOr(log_.taken + id_, live_bit);
          if (old & live_bit) atomicAdd(log_.clashes, 1u);
        }
        old = tile_.shfl(old, 0);
        owner_ = (old & live_bit) == 0;
        start = old & ~live_bit;
      }
      state_.next() = start;
    }
  }
  // Hands the tile's count back to the log, for the tile's next recorder.
  __device__ ~recorder() {
    if constexpr (State::ranges) {
      if (owner_ && log_.taken != nullptr && id_ < log_.tiles && tile_.thread_rank() == 0) atomicExch(log_.taken + id_, state_.next());
    }
  }
  recorder(const recorder&) = delete;
  recorder& operator=(const recorder&) = delete;

  // Before the tile's own operation (every lane, the same arguments): the
  // tile's next record.
  __device__ handle call(op o, std::uint32_t key, std::uint32_t arg = 0) {
    return call_record(claim(1), static_cast<std::uint8_t>(o), key, arg);
  }
  // The same, into record `slot` of the log, which the caller owns (a kernel
  // whose operation j is record j; a record of the log, never no_slot).
  // `kind` is an op, or the caller's own operation code in a log it reads
  // itself.
  __device__ handle call_at(std::uint64_t slot, std::uint8_t kind, std::uint32_t key, std::uint32_t arg = 0) {
    return call_record(slot, kind, key, arg);
  }
  __device__ handle call_at(std::uint64_t slot, op o, std::uint32_t key, std::uint32_t arg = 0) {
    return call_record(slot, static_cast<std::uint8_t>(o), key, arg);
  }

  // After it: ret(h) when nothing of the answer is known (an upsert that
  // returns nothing; a multiset's or multimap's insert that returns nothing,
  // in a log whose model is multiset: written as true, since such an insert
  // always adds), ret(h, ok), or ret(h, ok, value) (erase's value removed,
  // find's value found, count's count). ret_error(h, e): the operation
  // ended in an error and may or may not have taken effect; the checker
  // treats it as pending.
  __device__ void ret(handle h) { finish_op(h, detail::word2(0, false, 0, 0)); }
  __device__ void ret(handle h, bool ok) { finish_op(h, detail::word2(0, ok, 0, 1)); }
  __device__ void ret(handle h, bool ok, std::uint32_t value) { finish_op(h, detail::word2(0, ok, value, 3)); }
  __device__ void ret_error(handle h, error e) { finish_op(h, detail::word2(static_cast<std::uint8_t>(e), false, 0, 0)); }
  // The answer word as the caller composes it (status, ok, known, value:
  // the layout of entry's third word), for a log the caller reads itself.
  __device__ void ret_word(handle h, std::uint8_t status, bool ok, std::uint32_t value, std::uint8_t known) {
    finish_op(h, detail::word2(status, ok, value, known));
  }

  // After the tile's last operation (or its early stop): closes an open
  // stamp group. `sink`: under parts::stamps_only, the record that receives
  // the stamps' sum.
  __device__ void finish(std::uint64_t sink = no_slot) {
    const std::uint32_t n = state_.in_group();
    if (group_ > 1 && parts_ != parts::records_only && n > 0) close_group(take(), n);
    if (parts_ == parts::stamps_only && sink != no_slot && tile_.thread_rank() == 0) log_.records[sink].ret = state_.seen();
  }

  // The per-lane form, for APIs that take one operation per lane and serve
  // them with the whole tile (SlabHash-style): every lane calls, `active`
  // says whether it has an operation. One stamp opens all of them and one
  // closes them: each lane's interval contains its operation's true one,
  // which can only make more orders valid, never fewer. An open stamp group
  // is closed first. Every lane reaches call_lanes and ret_lanes at the same
  // place of your code, not in a branch on its own operation (they shuffle
  // the stamp across the tile): pass a value of 0 where a lane's operation
  // answers none, as in ret_lanes(h, ok, o == op::insert ? 0 : value).
  __device__ handle call_lanes(bool active, op o, std::uint32_t key, std::uint32_t arg = 0) {
    if (group_ > 1 && state_.in_group() > 0) close_group(take(), state_.in_group());
    const std::uint64_t s = ungrouped_call_stamp();
    const unsigned mask = tile_.ballot(active);
    const unsigned rank = static_cast<unsigned>(tile_.thread_rank());
    const std::uint64_t first = claim(static_cast<std::uint32_t>(__popc(mask)));
    if (!active || first == no_slot) return {no_slot};
    const std::uint64_t slot = first + static_cast<std::uint64_t>(__popc(mask & ((1u << rank) - 1u)));
    entry* e = log_.records + slot;
    detail::store_word(e, 0, detail::word0(id_ * 32u + rank, static_cast<std::uint8_t>(o)));
    detail::store_word(e, 1, detail::word1(key, arg));
    detail::store_word(e, 3, s);
    return {slot};
  }
  __device__ void ret_lanes(handle h) { finish_lanes(h, detail::word2(0, false, 0, 0)); }
  __device__ void ret_lanes(handle h, bool ok) { finish_lanes(h, detail::word2(0, ok, 0, 1)); }
  __device__ void ret_lanes(handle h, bool ok, std::uint32_t value) { finish_lanes(h, detail::word2(0, ok, value, 3)); }

  // An ordered map's operations (trace model ordered-map or
  // ordered-upsert-map). Each is stamped on its own, never in a stamp group
  // (an open group is closed first): a range reads many keys, and a group
  // widened around it could reorder it with the tile's own later update of
  // one of them.
  //
  // A snapshot: call_snapshot(), your take_snapshot, ret_snapshot(h, the
  // handle it returned). Handles are 32 bits here.
  __device__ handle call_snapshot() { return call_alone(static_cast<std::uint8_t>(op::snapshot), 0, 0); }
  __device__ void ret_snapshot(handle h, std::uint32_t snapshot) { finish_alone(h, detail::word2(0, true, snapshot, 3)); }
  // A find that reads at a snapshot: answered with ret(h, ok, value) as a find.
  __device__ handle call_find_at(std::uint32_t key, std::uint32_t snapshot) {
    return call_alone(static_cast<std::uint8_t>(op::find) | at_handle, key, snapshot);
  }
  // A range over [lo, hi) (half-open, as traces/FORMAT.md says), now or at a
  // snapshot. Answer it with ret_range: the n pairs the structure returned,
  // in increasing key order, from memory every thread of the tile can read
  // (global or shared; not one thread's registers or local array): keys[i]
  // and values[i], or pairs[i].first and .second (MVGpuBTree's pair_type,
  // std::pair-like types). The tile copies them into the log's pair area
  // together. A range whose pairs do not fit in the log's pair area
  // (device_log's pair_words) is counted, and records() refuses the log.
  __device__ handle call_range(std::uint32_t lo, std::uint32_t hi) {
    return call_alone(static_cast<std::uint8_t>(op::range), lo, hi);
  }
  __device__ handle call_range_at(std::uint32_t lo, std::uint32_t hi, std::uint32_t snapshot) {
    handle h = call_alone(static_cast<std::uint8_t>(op::range) | at_handle, lo, hi);
    h.snapshot = snapshot;
    return h;
  }
  __device__ void ret_range(handle h, const std::uint32_t* keys, const std::uint32_t* values, std::uint32_t n) {
    ret_range_with(h, n, [&](std::uint32_t i) { return static_cast<std::uint64_t>(values[i]) << 32 | keys[i]; });
  }
  template <class Pair>
  __device__ void ret_range(handle h, const Pair* pairs, std::uint32_t n) {
    ret_range_with(h, n, [&](std::uint32_t i) {
      return static_cast<std::uint64_t>(static_cast<std::uint32_t>(pairs[i].second)) << 32 | static_cast<std::uint32_t>(pairs[i].first);
    });
  }

 private:
  // A stamp, read by the leader between two tile barriers and shared: the
  // barriers order it after every lane's earlier accesses and before every
  // lane's later ones. On the counter, an acq_rel RMW (seq_cst would add a
  // full fence per stamp and no guarantee the checker uses); on the timer,
  // fences keep the reading from moving across the operation's accesses.
  __device__ std::uint64_t take() {
    tile_.sync();
    std::uint64_t v = 0;
    if (tile_.thread_rank() == 0) {
      // The counter is the default and the timer the exception; told so, the
      // compiler lays the timer's fences out of the way, and ptxas kept the
      // recording benchmark kernel's operation key in a register through its
      // search loops, where without the hint it reloaded it from local
      // memory at every step (nvcc 13.0, sm_90).
      if (__builtin_expect(log_.clock_source == clock_kind::counter, 1)) {
        v = detail::counter_fetch_add(log_.clock);
      } else {
        __threadfence();
        v = detail::global_timer();
        __threadfence();
      }
    }
    v = tile_.shfl(v, 0);
    tile_.sync();
    return v;
  }
  // On the counter, the last return's RMW serves as this call's: RMW value s
  // gives the return stamp 2s and the next call's 2s + 1. The order argument
  // holds for every pair of stamps of different RMWs (2s + 1 < 2t whenever
  // s < t), and the two stamps of one RMW order one tile's consecutive
  // operations, which its program order orders anyway. It halves the RMWs on
  // the contended word. Timer readings are not distinct, so there each call
  // and return reads its own.
  __device__ std::uint64_t ungrouped_call_stamp() {
    if (log_.clock_source != clock_kind::counter) return take();
    const std::uint64_t boundary = state_.stamp();
    state_.stamp() = never;
    return 2 * (boundary != never ? boundary : take()) + 1;
  }
  __device__ std::uint64_t ret_stamp() {
    const std::uint64_t v = take();
    if (log_.clock_source != clock_kind::counter) return v;
    state_.stamp() = v;
    return 2 * v;
  }
  // Whether a handle's record is to be written: no_slot is not, which call()
  // and call_lanes() hand back when the tile's records are full (a
  // stamps_only handle is no_slot too, but that part writes no record).
  // Where there are no ranges (State::ranges false), every handle that
  // reaches a store names a record the kernel gave call_at, and the test is
  // left out.
  __device__ static bool recorded(std::uint64_t slot) { return !State::ranges || slot != no_slot; }
  // n records of the tile's range, or no_slot (counted once per call; a
  // tile id beyond the log's tiles has no range).
  __device__ std::uint64_t claim(std::uint32_t n) {
    if (!owner_) return no_slot;  // counted once, as a clash
    const std::uint32_t next = state_.next();
    if (id_ >= log_.tiles || next + n > log_.per_tile) {
      if (tile_.thread_rank() == 0 && n > 0) atomicAdd(log_.overflow, 1u);
      return no_slot;
    }
    state_.next() = next + n;
    return static_cast<std::uint64_t>(id_) * log_.per_tile + next;
  }
  __device__ handle call_record(std::uint64_t slot, std::uint8_t kind, std::uint32_t key, std::uint32_t arg) {
    std::uint64_t s;
    if (parts_ == parts::records_only) {
      s = 2 * slot + 1;
    } else if (group_ > 1) {
      s = group_call(slot, key);
    } else {
      s = ungrouped_call_stamp();
    }
    if (parts_ == parts::stamps_only) {
      state_.seen() += s;
      return {no_slot};
    }
    if (recorded(slot) && tile_.thread_rank() == 0) {
      entry* e = log_.records + slot;
      detail::store_word(e, 0, detail::word0(id_, kind));
      detail::store_word(e, 1, detail::word1(key, arg));
      detail::store_word(e, 3, s);
    }
    return {slot};
  }
  __device__ void finish_op(handle h, std::uint64_t answer) {
    if (parts_ == parts::records_only) {
      if (recorded(h.slot) && tile_.thread_rank() == 0) {
        entry* e = log_.records + h.slot;
        detail::store_word(e, 2, answer);
        detail::store_word(e, 4, 2 * h.slot + 2);
      }
      return;
    }
    if (group_ > 1) {  // the return stamp comes at the group's close
      if (parts_ == parts::all && recorded(h.slot) && tile_.thread_rank() == 0) detail::store_word(log_.records + h.slot, 2, answer);
      return;
    }
    const std::uint64_t s = ret_stamp();
    if (parts_ == parts::stamps_only) {
      state_.seen() += s;
      return;
    }
    if (recorded(h.slot) && tile_.thread_rank() == 0) {
      entry* e = log_.records + h.slot;
      detail::store_word(e, 2, answer);
      detail::store_word(e, 4, s);
    }
  }
  __device__ void finish_lanes(handle h, std::uint64_t answer) {
    const std::uint64_t s = ret_stamp();
    if (h.slot != no_slot) {
      entry* e = log_.records + h.slot;
      detail::store_word(e, 2, answer);
      detail::store_word(e, 4, s);
    }
  }
  // The call stamp of an operation on `key` into record `slot`, in a group:
  // the open group's, or a new group's after closing the open one (full, or
  // holding `key`).
  __device__ std::uint64_t group_call(std::uint64_t slot, std::uint32_t key) {
    const std::uint32_t n = state_.in_group();
    const std::uint32_t held = state_.key();
    const bool holds = tile_.ballot(static_cast<std::uint32_t>(tile_.thread_rank()) < n && held == key) != 0;
    std::uint32_t at = n;
    if (n == 0 || n >= group_ || holds) {
      std::uint64_t v = take();
      if (n > 0) {
        close_group(v, n);
        // A timer reading may equal the one before it: the next group opens
        // on a reading of its own, never before the close.
        if (log_.clock_source != clock_kind::counter) v = take();
      }
      state_.stamp() = log_.clock_source == clock_kind::counter ? 2 * v + 1 : v;
      at = 0;
    }
    if (static_cast<std::uint32_t>(tile_.thread_rank()) == at) {
      state_.key() = key;
      state_.record() = static_cast<std::uint32_t>(slot);
    }
    state_.in_group() = at + 1;
    return state_.stamp();
  }
  // The call stamp of an operation stamped on its own: after closing an open
  // group (its closing RMW serves as this call's boundary, as a return's
  // does), or the ungrouped call stamp.
  __device__ handle call_alone(std::uint8_t kind, std::uint32_t key, std::uint32_t arg) {
    const std::uint64_t slot = claim(1);
    std::uint64_t s;
    if (group_ > 1) {
      const std::uint32_t n = state_.in_group();
      const std::uint64_t v = take();
      if (n > 0) close_group(v, n);
      s = log_.clock_source == clock_kind::counter ? 2 * v + 1 : (n > 0 ? take() : v);
    } else {
      s = ungrouped_call_stamp();
    }
    if (recorded(slot) && tile_.thread_rank() == 0) {
      entry* e = log_.records + slot;
      detail::store_word(e, 0, detail::word0(id_, kind));
      detail::store_word(e, 1, detail::word1(key, arg));
      detail::store_word(e, 3, s);
    }
    return {slot};
  }
  // Its return: in a grouped recorder the stamp is its own, and the next
  // grouped call opens a new group.
  __device__ void finish_alone(handle h, std::uint64_t answer) {
    std::uint64_t s;
    if (group_ > 1) {
      const std::uint64_t v = take();
      s = log_.clock_source == clock_kind::counter ? 2 * v : v;
      state_.stamp() = never;
    } else {
      s = ret_stamp();
    }
    if (recorded(h.slot) && tile_.thread_rank() == 0) {
      entry* e = log_.records + h.slot;
      detail::store_word(e, 2, answer);
      detail::store_word(e, 4, s);
    }
  }
  // A range's answer: its block (header, then the pairs) taken by the leader
  // and shared, filled by the tile's threads together, then the return. The
  // pairs are written before the return stamp is taken, so a record that
  // returned has its block whole (the host reads both after the kernel).
  template <class PairAt>
  __device__ void ret_range_with(handle h, std::uint32_t n, PairAt pair_at) {
    unsigned long long at = ~0ull;
    if (recorded(h.slot) && tile_.thread_rank() == 0) {
      if (log_.pairs_taken != nullptr) at = atomicAdd(log_.pairs_taken, static_cast<unsigned long long>(n) + 1ull);
      if (at == ~0ull || at + n + 1 > log_.pair_words || at >= 0xFFFFFFFFull) {
        if (log_.pairs_overflow != nullptr) atomicAdd(log_.pairs_overflow, 1u);
        at = ~0ull;
      }
    }
    at = tile_.shfl(at, 0);
    if (at != ~0ull) {
      const std::uint32_t rank = static_cast<std::uint32_t>(tile_.thread_rank());
      if (rank == 0) log_.pairs[at] = static_cast<std::uint64_t>(h.snapshot) << 32 | n;
      for (std::uint32_t i = rank; i < n; i += N) log_.pairs[at + 1 + i] = pair_at(i);
    }
    // An unrecorded answer (no room) leaves the range pending: it claims
    // nothing, and records() refuses the log anyway.
    if (at == ~0ull) {
      finish_alone(handle{no_slot}, 0);
      return;
    }
    finish_alone(h, detail::word2(0, true, static_cast<std::uint32_t>(at), 3));
  }

  // Writes the closing stamp (RMW value or reading v) into the records of the
  // open group's n operations.
  __device__ void close_group(std::uint64_t v, std::uint32_t n) {
    const std::uint64_t s = log_.clock_source == clock_kind::counter ? 2 * v : v;
    if (parts_ == parts::stamps_only) {
      state_.seen() += s;
    } else if (static_cast<std::uint32_t>(tile_.thread_rank()) < n &&
               (!State::ranges || state_.record() != static_cast<std::uint32_t>(no_slot))) {
      detail::store_word(log_.records + state_.record(), 4, s);
    }
    state_.in_group() = 0;
  }

  static constexpr std::uint32_t live_bit = 0x80000000u;

  tile_type tile_;
  log_ref log_;
  std::uint32_t id_;
  std::uint32_t group_;
  parts parts_;
  bool owner_ = true;  // false: another recorder of this tile id was live; this one records nothing
  State state_;
};

// The host side: the log's device memory, and the trace it becomes.
class device_log {
 public:
  // Room for `per_tile` operations of each of `tiles` tiles (lane ops count
  // one per active lane). Throws std::runtime_error when CUDA refuses.
  // `source`: what the stamps read (clock_kind; the counter unless you know
  // the timer is one clock for every SM).
  // `pair_words`: room for range answers (each range takes one word more
  // than its pairs); 0 for a log without ranges.
  device_log(std::uint32_t tiles, std::uint32_t per_tile, clock_kind source = clock_kind::counter, std::uint64_t pair_words = 0) {
    ref_.tiles = tiles;
    ref_.per_tile = per_tile;
    ref_.clock_source = source;
    const std::size_t n = static_cast<std::size_t>(tiles) * per_tile;
    if (n >= 0xFFFFFFFFull) throw std::runtime_error("gfsl::record::device_log: at most 2^32 - 1 records (stamp groups number them in 32 bits)");
    if (per_tile >= 0x80000000u) throw std::runtime_error("gfsl::record::device_log: at most 2^31 - 1 records a tile");
    check(cudaMalloc(&ref_.records, n * sizeof(entry) + 16 + static_cast<std::size_t>(tiles) * sizeof(std::uint32_t)), "cudaMalloc");
    ref_.clock = reinterpret_cast<std::uint64_t*>(reinterpret_cast<char*>(ref_.records) + n * sizeof(entry));
    ref_.overflow = reinterpret_cast<unsigned int*>(ref_.clock + 1);
    ref_.clashes = ref_.overflow + 1;
    ref_.taken = reinterpret_cast<std::uint32_t*>(ref_.clashes + 1);
    // The pair area and its two counters, apart from the records (the
    // counters first: 8-byte aligned).
    check(cudaMalloc(&pair_block_, 16 + pair_words * sizeof(std::uint64_t)), "cudaMalloc");
    ref_.pairs_taken = reinterpret_cast<unsigned long long*>(pair_block_);
    ref_.pairs_overflow = reinterpret_cast<unsigned int*>(ref_.pairs_taken + 1);
    ref_.pairs = pair_words ? reinterpret_cast<std::uint64_t*>(pair_block_) + 2 : nullptr;
    ref_.pair_words = pair_words;
    reset();
  }
  ~device_log() {
    cudaFree(ref_.records);
    cudaFree(pair_block_);
  }
  device_log(const device_log&) = delete;
  device_log& operator=(const device_log&) = delete;

  log_ref ref() const { return ref_; }

  // The model the trace names (trace_model; inferred unless declared).
  void set_model(trace_model m) { model_ = m; }
  trace_model model() const { return model_; }

  // Every record pending and unused again (every tile's range from its
  // start), the clock at 1. Between launches that make one history, do not
  // reset: each launch's recorders continue after the records taken.
  void reset() {
    const std::size_t n = static_cast<std::size_t>(ref_.tiles) * ref_.per_tile;
    check(cudaMemset(ref_.records, 0xFF, n * sizeof(entry)), "cudaMemset");
    const std::uint64_t init[2] = {1, 0};
    check(cudaMemcpy(ref_.clock, init, sizeof init, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemset(ref_.taken, 0, static_cast<std::size_t>(ref_.tiles) * sizeof(std::uint32_t)), "cudaMemset");
    check(cudaMemset(pair_block_, 0, 16), "cudaMemset");
  }

  // The records of operations that were called, in tile order (each tile's
  // in the order it ran them). Throws when a tile ran out of records: a
  // history with operations missing could make a correct run look wrong.
  // Throws too when a recorder found its tile's id held by another live
  // recorder (log_ref, "Several launches"): its operations are missing.
  std::vector<entry> records() const {
    unsigned int counts[2] = {0, 0};  // overflow, clashes
    check(cudaMemcpy(counts, ref_.overflow, sizeof counts, cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (counts[1]) {
      throw std::runtime_error("gfsl::record::device_log: " + std::to_string(counts[1]) +
                               " recorders found their tile id held by another recorder still live (two tiles given one id, or two "
                               "kernels of this log running at once); their operations were not recorded");
    }
    if (counts[0]) {
      throw std::runtime_error("gfsl::record::device_log: " + std::to_string(counts[0]) + " calls found their tile's " +
                               std::to_string(ref_.per_tile) + " records full; make per_tile larger");
    }
    unsigned int pair_overflow = 0;
    check(cudaMemcpy(&pair_overflow, ref_.pairs_overflow, sizeof pair_overflow, cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (pair_overflow) {
      throw std::runtime_error("gfsl::record::device_log: " + std::to_string(pair_overflow) + " range answers found the pair area of " +
                               std::to_string(ref_.pair_words) + " words full; make pair_words larger");
    }
    const std::size_t n = static_cast<std::size_t>(ref_.tiles) * ref_.per_tile;
    std::vector<entry> all(n);
    check(cudaMemcpy(all.data(), ref_.records, n * sizeof(entry), cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::vector<entry> out;
    for (const entry& e : all) {
      if (e.call != never) out.push_back(e);
    }
    return out;
  }

  // The JSON-lines trace gfsl check reads (traces/FORMAT.md): a metadata line
  // naming the model (set_model; gfsl check needs no --model), then one
  // record per line. insert, erase and find are written as insert, delete
  // and contains, which every model takes; upsert and count by their names.
  // Throws, writing nothing, where the records cannot be a history of the
  // model: an upsert or count outside its model, both in one log, or an
  // insert, erase or find that answered nothing (ret(h)) outside a
  // multiset's inserts.
  void write_json_lines(const std::string& path, const std::string& device = "") const {
    write_json_lines_of(records(), pairs(), path, device, model_);
  }
  // The pair area as the ranges left it (the words taken; range records
  // name their blocks in it).
  std::vector<std::uint64_t> pairs() const {
    unsigned long long taken = 0;
    check(cudaMemcpy(&taken, ref_.pairs_taken, sizeof taken, cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::vector<std::uint64_t> out(static_cast<std::size_t>(taken < ref_.pair_words ? taken : ref_.pair_words));
    if (!out.empty()) check(cudaMemcpy(out.data(), ref_.pairs, out.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return out;
  }
  // The model a log of these records names: `declared`, or the one its
  // operations need; throws where none takes them all.
  static trace_model model_of(const std::vector<entry>& recs, trace_model declared = trace_model::inferred) {
    bool upserts = false, counts = false, ordered = false;
    for (const entry& e : recs) {
      upserts |= e.kind == static_cast<std::uint8_t>(op::upsert);
      counts |= e.kind == static_cast<std::uint8_t>(op::count);
      ordered |= e.kind == static_cast<std::uint8_t>(op::range) || e.kind == static_cast<std::uint8_t>(op::snapshot) || (e.kind & at_handle);
    }
    if (upserts && counts) throw std::runtime_error("gfsl::record: the records hold upserts and counts; no model takes both");
    if (ordered && counts) throw std::runtime_error("gfsl::record: the records hold ranges or snapshots and counts; no model takes both");
    const bool ordered_model = declared == trace_model::ordered_map || declared == trace_model::ordered_upsert_map;
    if (ordered && declared != trace_model::inferred && !ordered_model)
      throw std::runtime_error(std::string("gfsl::record: the records hold ranges or snapshots, which model ") + trace_model_name(declared) +
                               " does not take (ordered-map and ordered-upsert-map do)");
    if (ordered_model && counts)
      throw std::runtime_error(std::string("gfsl::record: the records hold counts, which model ") + trace_model_name(declared) + " does not take");
    if (upserts && declared == trace_model::ordered_map)
      throw std::runtime_error("gfsl::record: the records hold upserts, which model ordered-map does not take (ordered-upsert-map does)");
    if (ordered_model) return declared;
    if (ordered) return upserts ? trace_model::ordered_upsert_map : trace_model::ordered_map;
    if (declared == trace_model::inferred) return counts ? trace_model::multiset : upserts ? trace_model::upsert_map : trace_model::map;
    if (upserts && declared != trace_model::upsert_map)
      throw std::runtime_error(std::string("gfsl::record: the records hold upserts, which model ") + trace_model_name(declared) +
                               " does not take (upsert-map does)");
    if (counts && declared != trace_model::multiset)
      throw std::runtime_error(std::string("gfsl::record: the records hold counts, which model ") + trace_model_name(declared) +
                               " does not take (multiset does)");
    return declared;
  }
  static void write_json_lines_of(const std::vector<entry>& recs, const std::string& path, const std::string& device = "",
                                  trace_model declared = trace_model::inferred) {
    write_json_lines_of(recs, {}, path, device, declared);
  }
  // `pairs`: the log's pair area (pairs()), which its range records name.
  static void write_json_lines_of(const std::vector<entry>& recs, const std::vector<std::uint64_t>& pairs, const std::string& path,
                                  const std::string& device = "", trace_model declared = trace_model::inferred) {
    const trace_model model = model_of(recs, declared);
    for (const entry& e : recs) {
      const bool pending = e.ret == never || e.status == 0xFF;
      const std::uint8_t kind = e.kind & static_cast<std::uint8_t>(~at_handle);
      if (!pending && e.status == 0 && kind == static_cast<std::uint8_t>(op::range)) {
        const std::uint64_t at = e.value;
        if (at >= pairs.size() || (pairs[at] & 0xFFFFFFFFull) > pairs.size() - at - 1)
          throw std::runtime_error("gfsl::record: the range [" + std::to_string(e.key) + ", " + std::to_string(e.arg) + ") of tile " +
                                   std::to_string(e.who) + " names pair block " + std::to_string(at) + ", outside the " +
                                   std::to_string(pairs.size()) + " words of the pair area given");
      }
      if (kind == static_cast<std::uint8_t>(op::range) || kind == static_cast<std::uint8_t>(op::snapshot)) continue;
      if (pending || e.status != 0 || (e.known & 1) || kind == static_cast<std::uint8_t>(op::upsert) || kind > 4) continue;
      if (kind == static_cast<std::uint8_t>(op::insert) && model == trace_model::multiset) continue;  // written as true
      static const char* const what[] = {"an insert", "an erase", "a find", "", "a count"};
      throw std::runtime_error(std::string("gfsl::record: ") + what[kind] + " of key " + std::to_string(e.key) +
                               " answered nothing (ret(h)); only upserts and a multiset's inserts may (set_model(trace_model::multiset) "
                               "for a multiset's or multimap's inserts)");
    }
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error(path + ": cannot write");
    std::string line = "{\"format\":\"gfsl-history\",\"version\":1,\"backend\":\"cuda\",\"clock\":\"device_counter\"";
    line += ",\"delete_value\":true,\"recorder\":\"gfsl/record.cuh\",\"model\":\"";
    line += trace_model_name(model);
    line += "\"";
    if (!device.empty() && device.find_first_of("\"\\") == std::string::npos) line += ",\"device\":\"" + device + "\"";
    line += "}\n";
    static const char* const names[] = {"insert", "delete", "contains", "upsert", "count"};
    char buf[256];
    for (const entry& e : recs) {
      // Pending: never returned, or called in a stamp group that finish()
      // closed before its ret() wrote an answer (the answer word is still
      // the 0xFF fill).
      const bool ok_known = e.known & 1, value_known = e.known & 2, pending = e.ret == never || e.status == 0xFF;
      static const char* const errors[] = {"", "key_out_of_range", "pool_exhausted", "stopped", "corrupt"};
      const bool errored = !pending && e.status != 0;
      const std::uint8_t kind = e.kind & static_cast<std::uint8_t>(~at_handle);
      const bool read_at_handle = e.kind & at_handle;
      if (kind == static_cast<std::uint8_t>(op::range) || kind == static_cast<std::uint8_t>(op::snapshot)) {
        int n;
        if (kind == static_cast<std::uint8_t>(op::snapshot)) {
          n = std::snprintf(buf, sizeof buf, "{\"team\":%u,\"op\":\"snapshot\"", e.who);
          if (!pending && !errored) n += std::snprintf(buf + n, sizeof buf - n, ",\"handle\":%u", e.value);
          line.append(buf, static_cast<std::size_t>(n));
        } else {
          const std::uint64_t header = !pending && !errored ? pairs[e.value] : 0;
          n = std::snprintf(buf, sizeof buf, "{\"team\":%u,\"op\":\"range\",\"lo\":%u,\"hi\":%u", e.who, e.key, e.arg);
          if (read_at_handle && !pending && !errored) n += std::snprintf(buf + n, sizeof buf - n, ",\"handle\":%u", static_cast<unsigned>(header >> 32));
          line.append(buf, static_cast<std::size_t>(n));
          if (!pending && !errored) {
            line += ",\"pairs\":[";
            const std::uint64_t count = header & 0xFFFFFFFFull;
            for (std::uint64_t i = 0; i < count; ++i) {
              const std::uint64_t w = pairs[e.value + 1 + i];
              n = std::snprintf(buf, sizeof buf, "%s[%u,%u]", i ? "," : "", static_cast<unsigned>(w & 0xFFFFFFFFull), static_cast<unsigned>(w >> 32));
              line.append(buf, static_cast<std::size_t>(n));
            }
            line += "]";
          }
        }
        if (errored) {
          n = std::snprintf(buf, sizeof buf, ",\"status\":\"%s\"", errors[e.status <= 4 ? e.status : 4]);
          line.append(buf, static_cast<std::size_t>(n));
        }
        n = pending ? std::snprintf(buf, sizeof buf, ",\"call\":%llu,\"ret\":null}\n", static_cast<unsigned long long>(e.call))
                    : std::snprintf(buf, sizeof buf, ",\"call\":%llu,\"ret\":%llu}\n", static_cast<unsigned long long>(e.call),
                                    static_cast<unsigned long long>(e.ret));
        line.append(buf, static_cast<std::size_t>(n));
        if (line.size() > (1u << 20)) {
          if (std::fwrite(line.data(), 1, line.size(), f) != line.size()) break;
          line.clear();
        }
        continue;
      }
      const char* name = kind < 5 ? names[kind] : "unknown";
      int n = std::snprintf(buf, sizeof buf, "{\"team\":%u,\"op\":\"%s\",\"key\":%u", e.who, name, e.key);
      if (read_at_handle) n += std::snprintf(buf + n, sizeof buf - n, ",\"handle\":%u", e.arg);
      if (kind == static_cast<std::uint8_t>(op::insert) || kind == static_cast<std::uint8_t>(op::upsert)) {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"value\":%u", e.arg);
      } else if (!pending && value_known) {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"value\":%u", e.value);
      }
      if (errored) {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"ok\":false,\"status\":\"%s\"", errors[e.status <= 4 ? e.status : 4]);
      } else if (!pending && !ok_known && kind == static_cast<std::uint8_t>(op::insert)) {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"ok\":true");  // a multiset's insert always adds (model_of checked)
      } else if (pending || !ok_known) {
        n += std::snprintf(buf + n, sizeof buf - n, pending ? ",\"ok\":false" : ",\"ok\":null");
      } else {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"ok\":%s", e.ok ? "true" : "false");
      }
      if (pending) {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"call\":%llu,\"ret\":null}\n", static_cast<unsigned long long>(e.call));
      } else {
        n += std::snprintf(buf + n, sizeof buf - n, ",\"call\":%llu,\"ret\":%llu}\n", static_cast<unsigned long long>(e.call),
                           static_cast<unsigned long long>(e.ret));
      }
      line.append(buf, static_cast<std::size_t>(n));
      if (line.size() > (1u << 20)) {
        if (std::fwrite(line.data(), 1, line.size(), f) != line.size()) break;
        line.clear();
      }
    }
    const bool written = std::fwrite(line.data(), 1, line.size(), f) == line.size();
    if (std::fclose(f) != 0 || !written) throw std::runtime_error(path + ": cannot write");
  }

 private:
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("gfsl::record::device_log: ") + what + ": " + cudaGetErrorString(e));
  }
  log_ref ref_;
  void* pair_block_ = nullptr;  // the pair area's counters and words (log_ref::pairs)
  trace_model model_ = trace_model::inferred;
};

}  // namespace gfsl::record
