// How a device team records an operation of its history, shared by the
// testbed's runner (device_runner.cu) and the benchmark kernel that measures
// what recording costs (bench/evaluation_kernels.cuh): a stamp on the run's
// clock before the operation's first shared access and after its last, a
// pending record written at the call and completed at the return (so a team
// that leaves a hung run keeps its operation in flight as pending).
#pragma once

#include <cuda/atomic>
#include <cstddef>
#include <cstdint>

#include "../../model/history.hpp"
#include "../../core/cuda/device_team.cuh"

namespace gfsl {

// A stamp on the run's clock, taken by lane 0 and shared with the team. The
// warp barriers order it after every lane's earlier accesses and before every
// lane's later ones, so real-time order of operations implies stamp order.
template <int N>
__device__ std::uint64_t take_stamp(device_team<N>& team, model::clock_kind clock, std::uint64_t* counter) {
  std::uint64_t v = 0;
  __syncwarp();
  if (team.lane() == 0) {
    if (clock == model::clock_kind::device_counter) {
      // An acq_rel RMW on one device-wide word. The RMWs on one word are
      // totally ordered (its modification order), and every later RMW reads
      // from the release sequence of every earlier one: if A.ret < B.call,
      // A's return synchronizes with B's call, so all of A's accesses happen
      // before all of B's. That is the order the checker takes from the
      // stamps; seq_cst would add a full fence per stamp and no guarantee
      // the checker uses.
      v = cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device>(*counter).fetch_add(1, cuda::std::memory_order_acq_rel);
    } else if (clock == model::clock_kind::globaltimer) {
      // Fences keep the timer read from moving across the operation's
      // accesses; equal readings count as concurrent, which stays sound.
      __threadfence();
      v = global_timer_ns();
      __threadfence();
    }
  }
  v = team.shfl(typename device_team<N>::lanes{v}, 0);
  __syncwarp();
  return v;
}

// What a recorder writes. The runner writes all of it; the benchmark kernel
// also measures each part alone, to say what recording's cost is made of
// (records_only stamps from the team's own operation numbers, no ordering at
// all; stamps_only takes every stamp and writes one word per team).
enum class recording_parts : std::uint8_t { all, records_only, stamps_only };

// A team's records, in the order its operations run. On the device counter
// one RMW between two operations of a team serves as the return of the first
// and the call of the second: RMW value s gives the return stamp 2s and the
// call stamp 2s + 1. The order argument of take_stamp holds for every pair of
// stamps of different RMWs (2s + 1 < 2t whenever s < t), and the two stamps of
// one RMW order one team's consecutive operations, which its program order
// orders anyway. It halves the RMWs on the run's one contended word, what
// recording costs most on the device (docs/BENCHMARKS.md). globaltimer
// readings are not distinct, so there each call and return reads its own.
//
// Stamp groups (`group` > 1): one stamp opens a group of up to `group`
// consecutive operations of the team and the next one closes it; every
// operation of the group is called at the opening stamp and returns at the
// closing one. Each operation's interval then contains its true one, so a
// history that is linearizable in real time stays linearizable: the checkers
// judge a weaker real-time order, never a false one. What the widening could
// hide is a team's own order on a key (two operations of one group on one key
// would overlap, and the checker could swap them). So a group never holds two
// operations on one key: an operation whose key the open group already holds
// closes it first. Linearizability is checked key by key (linearizability/
// ops.hpp), and on one key every team's operations keep their program order
// in the stamps; across keys the checker never uses it. The closing stamp
// is written into the group's records at the close, by the lanes that hold
// them (lane i: the i-th operation's record and key); an operation whose
// group never closed (a kernel the host gave up on) stays pending, which
// says less than it knew, never something false. It divides the RMWs on
// the run's word by up to `group` (docs/BENCHMARKS.md, "Stamp groups").
// A group's records are numbered in 32 bits: a grouped history holds fewer
// than 2^32 operations (device_runner.cu refuses more).
//
// A record is five 8-byte words; the call and the return write only the
// words they change, each as a streaming store (st.global.cs):
// the history is written once and read on the host after the kernel, and
// written through the default policy its 40 bytes per operation pushed the
// structure's chunks out of L2 (docs/BENCHMARKS.md, "What recording costs,
// part by part"). The call writes team, operation and call stamp; the return
// stamp is already no_stamp (pending): every record starts as 0xFF bytes (the
// runner's memset, and the benchmark's before each recorded kernel). The
// return writes the answer and its stamp (in a group, the answer; the stamp
// at the close). Lane 0 stores each word, composed from its two 32-bit
// halves. A word per lane, picked from the composed record, took the
// compiler a branch per lane, about 40 warp instructions a call; two
// 32-bit selects per lane and lane 0's stores measured alike, and lane 0's
// are the simpler (docs/BENCHMARKS.md, "Cheaper record stores, a chunk's
// address in one instruction").
//
// What the recorder carries from one call to the next (the last RMW value,
// the open group, the keys and records of its operations) lives in shared
// memory, one slot per thread: kept in registers, it was live across every
// operation of a kernel held to 32 registers, and the recorded kernels spilled
// more in their searches (docs/BENCHMARKS.md, "Stamp groups"). Each thread
// keeps its own copy of the team's values, so no slot is written by one lane
// and read by another. `Threads`: the most threads a block of the kernel has.
template <int Threads>
struct recorder_slots {
  std::uint64_t stamp[Threads];     // one stamp a call: the last return's RMW value; in groups: the open group's call stamp
  std::uint64_t seen[Threads];      // stamps_only: the sum that keeps the stamps from being optimized away
  std::uint32_t in_group[Threads];  // operations in the open group
  key_type key[Threads];            // lane i: the key of the open group's i-th operation
  std::uint32_t record[Threads];    // lane i: the record of the open group's i-th operation
};

template <int N, int Threads>
class team_recorder {
 public:
  __device__ team_recorder(device_team<N>& team, model::op_record* records, model::clock_kind clock,
                           std::uint64_t* counter, recording_parts parts = recording_parts::all,
                           std::uint32_t group = 1)
      : team_(team), records_(records), clock_(clock), counter_(counter), parts_(parts), group_(group) {
    recorder_slots<Threads>& s = slots();
    s.stamp[me()] = model::no_stamp;
    s.seen[me()] = 0;
    s.in_group[me()] = 0;
  }

  __device__ void call(std::uint64_t j, const model::operation& op) {
    std::uint64_t stamp;
    if (parts_ == recording_parts::records_only) {
      stamp = 2 * j + 1;
    } else if (group_ > 1) {
      stamp = group_call(j, op.key);
    } else if (clock_ == model::clock_kind::device_counter) {
      const std::uint64_t boundary = slots().stamp[me()];
      stamp = 2 * (boundary != model::no_stamp ? boundary : take_stamp(team_, clock_, counter_)) + 1;
    } else {
      stamp = take_stamp(team_, clock_, counter_);
    }
    if (parts_ == recording_parts::stamps_only) {
      slots().seen[me()] += stamp;
      return;
    }
    // Team and kind, key and argument, the call stamp.
    if (team_.lane() == 0) {
      store_word(j, team_word, team_.id(), static_cast<std::uint32_t>(op.kind));
      store_word(j, op_word, op.key, op.value);
      store_word(j, call_word, low_half(stamp), high_half(stamp));
    }
  }

  __device__ void ret(std::uint64_t j, const op_result& r) {
    std::uint64_t stamp = 2 * j + 2;
    if (parts_ != recording_parts::records_only && group_ <= 1) {
      stamp = take_stamp(team_, clock_, counter_);
      if (clock_ == model::clock_kind::device_counter) {
        slots().stamp[me()] = stamp;  // the next call's stamp
        stamp *= 2;
      }
    }
    if (parts_ == recording_parts::stamps_only) {
      slots().seen[me()] += stamp;
      return;
    }
    // Status, found and value; the return stamp (in a group, written at its
    // close).
    const bool deferred = group_ > 1 && parts_ != recording_parts::records_only;
    if (team_.lane() == 0) {
      store_word(j, answer_word, static_cast<std::uint32_t>(r.st) | (r.ok ? 1u << 8 : 0u), r.value);
      if (!deferred) store_word(j, ret_word, low_half(stamp), high_half(stamp));
    }
  }

  // After the team's last operation (or its early stop): closes an open group.
  __device__ void finish(std::uint64_t first) {
    const std::uint32_t n = slots().in_group[me()];
    if (group_ > 1 && parts_ != recording_parts::records_only && n > 0) close_group(take_stamp(team_, clock_, counter_), n);
    if (parts_ == recording_parts::stamps_only && team_.lane() == 0) records_[first].ret = slots().seen[me()];
  }

 private:
  // The five 8-byte words of a record (model::op_record), each written whole
  // by one lane from two 32-bit halves; padding bytes are written as zero.
  static constexpr int team_word = 0, op_word = 1, answer_word = 2, call_word = 3, ret_word = 4;
  static_assert(sizeof(model::op_record) == 40 && alignof(model::op_record) == 8, "a record is five aligned 8-byte words");
  static_assert(offsetof(model::op_record, team) == 8 * team_word && sizeof(team_id) == 4 &&
                    offsetof(model::op_record, op) == 8 * team_word + 4 && offsetof(model::operation, kind) == 0 &&
                    sizeof(op_kind) == 1,
                "word 0: team, then kind");
  static_assert(offsetof(model::op_record, op) + offsetof(model::operation, key) == 8 * op_word &&
                    offsetof(model::op_record, op) + offsetof(model::operation, value) == 8 * op_word + 4 &&
                    sizeof(key_type) == 4 && sizeof(value_type) == 4,
                "word 1: key, then argument");
  static_assert(offsetof(model::op_record, st) == 8 * answer_word && sizeof(status) == 1 &&
                    offsetof(model::op_record, ok) == 8 * answer_word + 1 && sizeof(bool) == 1 &&
                    offsetof(model::op_record, value) == 8 * answer_word + 4,
                "word 2: status, found, then value");
  static_assert(offsetof(model::op_record, call) == 8 * call_word && offsetof(model::op_record, ret) == 8 * ret_word,
                "words 3 and 4: the stamps");
  __device__ static std::uint32_t low_half(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
  __device__ static std::uint32_t high_half(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

  __device__ static recorder_slots<Threads>& slots() {
    __shared__ recorder_slots<Threads> s;
    return s;
  }
  __device__ static int me() { return static_cast<int>(threadIdx.x); }

  // The call stamp of operation j on `key` in a group: the open group's, or a
  // new group's after closing the open one (full, or holding `key`).
  __device__ std::uint64_t group_call(std::uint64_t j, key_type key) {
    recorder_slots<Threads>& s = slots();
    const std::uint32_t n = s.in_group[me()];
    const key_type held = s.key[me()];
    const bool holds = team_.ballot(typename device_team<N>::lanes{0}, [&](int lane, std::uint64_t) {
      return static_cast<std::uint32_t>(lane) < n && held == key;
    }) != 0;
    std::uint32_t at = n;
    if (n == 0 || n >= group_ || holds) {
      std::uint64_t v = take_stamp(team_, clock_, counter_);
      if (n > 0) {
        close_group(v, n);
        // A reading of %globaltimer may equal the one before it: the next
        // group opens on a reading of its own, never before the close.
        if (clock_ != model::clock_kind::device_counter) v = take_stamp(team_, clock_, counter_);
      }
      s.stamp[me()] = clock_ == model::clock_kind::device_counter ? 2 * v + 1 : v;
      at = 0;
    }
    if (team_.lane() == static_cast<int>(at)) {
      s.key[me()] = key;
      s.record[me()] = static_cast<std::uint32_t>(j);
    }
    s.in_group[me()] = at + 1;
    return s.stamp[me()];
  }
  // Writes the closing stamp (RMW value or reading v) into the records of the
  // open group's n operations.
  __device__ void close_group(std::uint64_t v, std::uint32_t n) {
    const std::uint64_t stamp = clock_ == model::clock_kind::device_counter ? 2 * v : v;
    if (parts_ == recording_parts::stamps_only) {
      slots().seen[me()] += stamp;
    } else if (static_cast<std::uint32_t>(team_.lane()) < n) {
      __stcs(reinterpret_cast<unsigned long long*>(records_ + slots().record[me()]) + ret_word, static_cast<unsigned long long>(stamp));
    }
    slots().in_group[me()] = 0;
  }

  __device__ void store_word(std::uint64_t j, int word, std::uint32_t lo, std::uint32_t hi) {
    const unsigned long long w = static_cast<unsigned long long>(hi) << 32 | lo;
    __stcs(reinterpret_cast<unsigned long long*>(records_ + j) + word, w);
  }

  device_team<N>& team_;
  model::op_record* records_;
  model::clock_kind clock_;
  std::uint64_t* counter_;
  recording_parts parts_;
  std::uint32_t group_;
};

// The device counter's first value for a run whose prefill took stamps below
// `first_free` (stamps are twice the counter's values, plus one for a call).
constexpr std::uint64_t device_counter_start(std::uint64_t first_free) { return (first_free + 1) / 2; }

}  // namespace gfsl
