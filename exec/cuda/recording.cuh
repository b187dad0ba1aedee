// How a device team records an operation of its history, shared by the
// testbed's runner (device_runner.cu) and the benchmark kernel that measures
// what recording costs (bench/evaluation_kernels.cuh): a stamp on the run's
// clock before the operation's first shared access and after its last, a
// pending record written at the call and completed at the return (so a team
// that leaves a hung run keeps its operation in flight as pending).
#pragma once

#include <cuda/atomic>
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

template <int N>
__device__ void record_call(device_team<N>& team, model::op_record& rec, const model::operation& op,
                            model::clock_kind clock, std::uint64_t* counter) {
  const std::uint64_t call = take_stamp(team, clock, counter);
  if (team.lane() == 0) rec = model::op_record{team.id(), op, status::ok, false, 0, call, model::no_stamp};
}

template <int N>
__device__ void record_return(device_team<N>& team, model::op_record& rec, const op_result& r, model::clock_kind clock,
                              std::uint64_t* counter) {
  const std::uint64_t ret = take_stamp(team, clock, counter);
  if (team.lane() == 0) {
    rec.st = r.st;
    rec.ok = r.ok;
    rec.value = r.value;
    rec.ret = ret;
  }
}

}  // namespace gfsl
