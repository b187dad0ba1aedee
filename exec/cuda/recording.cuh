// How a device team records an operation of its history: through the public
// recorder (include/gfsl/record.cuh), the one every user kernel includes, so
// that the testbed's runner, its benchmark kernel (bench/evaluation_kernels.cuh)
// and a user's structure share one stamp protocol and one record layout. This
// file only maps the testbed's types onto it: a device_team as the recorder's
// tile, model::op_record as its entry, operation j of the run as record j.
// The stamp protocol, its order argument and stamp groups are argued in the
// header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../../include/gfsl/record.cuh"
#include "../../model/history.hpp"
#include "../../core/cuda/device_team.cuh"

namespace gfsl {

// What a recorder writes (record::parts): the runner writes all of it; the
// benchmark kernel also measures each part alone, to say what recording's
// cost is made of.
using recording_parts = record::parts;

// The recorder's view of a device team: its barrier, shuffle and ballot,
// with the team's own constant lane masks (a mask computed at run time wraps
// every shuffle in convergence tests; core/cuda/device_team.cuh).
template <int N>
struct team_tile {
  device_team<N>* team;
  __device__ unsigned thread_rank() const { return static_cast<unsigned>(team->lane()); }
  __device__ void sync() const { team->sync(); }
  __device__ std::uint64_t shfl(std::uint64_t v, int src) const { return team->shfl(typename device_team<N>::lanes{v}, src); }
  __device__ unsigned ballot(bool p) const {
    return team->ballot(typename device_team<N>::lanes{p ? 1u : 0u}, [](int, std::uint64_t x) { return x != 0; });
  }
};

// A team's records, operation j of the run in record j, each written pending
// at the call (its return stamp stays no_stamp: every record starts as 0xFF
// bytes, the runner's memset and the benchmark's before each recorded kernel)
// and completed at the return, so a team that leaves a hung run keeps its
// operation in flight as pending. `group` > 1: stamp groups (the header;
// `gfsl run --stamp-group`). The recorder's state lives in shared memory,
// one slot per thread (record::in_shared): kept in registers, it was live
// across every operation of a kernel held to 32 registers, and the recorded
// kernels spilled more in their searches (docs/BENCHMARKS.md, "Stamp
// groups"). `Threads`: the most threads a block of the kernel has.
// clock_kind::none (the prefill, whose stamps the host assigns afterwards):
// no stamp is taken, the records are numbered as record::parts::records_only
// numbers them.
template <int N, int Threads>
class team_recorder {
 public:
  __device__ team_recorder(device_team<N>& team, model::op_record* records, model::clock_kind clock,
                           std::uint64_t* counter, recording_parts parts = recording_parts::all,
                           std::uint32_t group = 1)
      : rec_(team_tile<N>{&team}, log_of(records, clock, counter), team.id(), group,
             clock == model::clock_kind::none ? recording_parts::records_only : parts) {}

  __device__ void call(std::uint64_t j, const model::operation& op) {
    rec_.call_at(j, static_cast<std::uint8_t>(op.kind), op.key, op.value);
  }
  // The answer word as model::op_record lays it out (status, found, value;
  // the header's `known` byte is op_record's padding, left 0).
  __device__ void ret(std::uint64_t j, const op_result& r) {
    rec_.ret_word(record::handle{j}, static_cast<std::uint8_t>(r.st), r.ok, r.value, 0);
  }
  // After the team's last operation (or its early stop): closes an open group.
  __device__ void finish(std::uint64_t first) { rec_.finish(first); }

 private:
  static_assert(sizeof(model::op_record) == sizeof(record::entry) && alignof(model::op_record) == 8, "a record is five aligned 8-byte words");
  static_assert(offsetof(model::op_record, team) == offsetof(record::entry, who) && sizeof(team_id) == 4 &&
                    offsetof(model::op_record, op) + offsetof(model::operation, kind) == offsetof(record::entry, kind) &&
                    sizeof(op_kind) == 1,
                "word 0: team, then kind");
  static_assert(offsetof(model::op_record, op) + offsetof(model::operation, key) == offsetof(record::entry, key) &&
                    offsetof(model::op_record, op) + offsetof(model::operation, value) == offsetof(record::entry, arg) &&
                    sizeof(key_type) == 4 && sizeof(value_type) == 4,
                "word 1: key, then argument");
  static_assert(offsetof(model::op_record, st) == offsetof(record::entry, status) && sizeof(status) == 1 &&
                    offsetof(model::op_record, ok) == offsetof(record::entry, ok) && sizeof(bool) == 1 &&
                    offsetof(model::op_record, value) == offsetof(record::entry, value),
                "word 2: status, found, then value");
  static_assert(offsetof(model::op_record, call) == offsetof(record::entry, call) &&
                    offsetof(model::op_record, ret) == offsetof(record::entry, ret) && model::no_stamp == record::never,
                "words 3 and 4: the stamps, no_stamp for pending");

  // Records named by operation number: no tile ranges (per_tile 0), so
  // nothing is ever claimed from one.
  __device__ static record::log_ref log_of(model::op_record* records, model::clock_kind clock, std::uint64_t* counter) {
    record::log_ref log;
    log.records = reinterpret_cast<record::entry*>(records);
    log.clock = counter;
    log.clock_source = clock == model::clock_kind::globaltimer ? record::clock_kind::globaltimer : record::clock_kind::counter;
    return log;
  }

  record::recorder<N, record::in_shared<Threads, false>, team_tile<N>> rec_;
};

// The device counter's first value for a run whose prefill took stamps below
// `first_free` (stamps are twice the counter's values, plus one for a call).
constexpr std::uint64_t device_counter_start(std::uint64_t first_free) { return (first_free + 1) / 2; }

}  // namespace gfsl
