// Executes a workload on the GPU: the same operations as the CPU runners
// (operation_at is computed on the device), one team per N lanes. Callable
// from host code compiled without nvcc.
#pragma once

#include <atomic>
#include <string>

#include "../../model/history.hpp"
#include "../host_runner.hpp"
#include "../../core/gfsl/mutants.hpp"
#include "../../core/slabhash/layout.hpp"

namespace gfsl {

struct device_options {
  std::uint32_t pool_chunks = 0;  // 0: sized from the workload
  model::clock_kind clock = model::clock_kind::device_counter;  // device_counter or globaltimer
  bool keep_records = true;       // false: recording off (no stamps, no records)
  // Operations of a team per stamp group, 1 to the chunk size (1: a stamp at
  // every call and return). In a group every operation is called at the
  // group's opening stamp and returns at its closing one; a group never holds
  // two operations on one key (exec/cuda/recording.cuh).
  std::uint32_t stamp_group = 1;
  // The most operations of the concurrent phase a team takes at a time from
  // one cursor (fewer where a team's share is under eight batches); 0: each
  // team its fixed block of ops / teams.
  std::uint32_t batch = 64;
  double hang_seconds = 30.0;     // a lock wait past this ends the run on the device
  double watchdog_seconds = 120.0;  // the host's bound on each kernel
  // The launch configuration chosen by `gfsl bench --suite launch` (thesis
  // Table 5.1; docs/BENCHMARKS.md): the kernel is compiled with
  // __launch_bounds__(max_threads_per_block, min_blocks_per_sm), which caps it
  // at 32 registers so that 64 warps fit on an SM.
  static constexpr int max_threads_per_block = 512;
  static constexpr int min_blocks_per_sm = 4;
  int threads_per_block = max_threads_per_block;
  // Fault injection for testing the hang bound: this chunk starts locked by a
  // team that does not exist (no_chunk: none).
  chunk_index locked_at_start = no_chunk;
  // Group the history by key (then call stamp) on the device with CUB's radix
  // sort before copying it back, so that the checker's per-key partition is
  // done; `compare_host_partition` also times the same grouping on the host.
  bool partition_on_device = true;
  // The workload's subject's variant (prefill included) and the seeded bug of
  // the concurrent phase (core/subject.hpp).
  subject_choice choice;
  // The structural event log of the concurrent phase (with the structure
  // before it as the initial snapshot). Capacity in events (40 bytes each);
  // 0: sized from the workload. A log that fills keeps an exact prefix.
  bool events = false;
  std::uint64_t event_capacity = 0;
  // false: skip copying the final structure back and inspecting it (benchmarks).
  bool inspect_final = true;
  bool compare_host_partition = false;
  // Read while a kernel runs (set by a SIGINT or SIGTERM handler): once true,
  // every team stops at its next operation (or its next check in a lock
  // wait) and the run ends with what it recorded (device_run::interrupted).
  const std::atomic<bool>* interrupt = nullptr;
};

struct device_run {
  host_run run;              // same report, records and final state as a CPU run
  std::string device_name;
  model::clock_kind clock = model::clock_kind::none;
  bool hung = false;         // the hang bound stopped the run on the device
  std::string hang_detail;   // one line: who waited on which chunk, held by whom
  bool timed_out = false;    // a kernel outlived the host's watchdog
  bool interrupted = false;  // device_options::interrupt stopped the run: its records are those of the operations that started
  bool interrupted_in_prefill = false;  // ... before the concurrent phase began: nothing of it was recorded
  // The run was stopped before its end (interrupted, or the hang bound):
  // teams may have left operations in flight, so the final structure is a
  // mid-run state, judged by the invariants that hold at every step.
  bool stopped_mid_run = false;
  double partition_ms_device = 0;  // CUB sort by (key, call), device time
  double partition_ms_host = 0;    // the same grouping on the host (compare_host_partition)
};

// After a device fault (an illegal address from a corrupt structure), makes
// the device usable again for the next run of this process.
void reset_device_after_fault();

// Empty when a CUDA device can be used; otherwise one line saying why not.
std::string cuda_unavailable_reason();
// The CUDA devices this process sees (CUDA_VISIBLE_DEVICES respected); 0
// without a device or a driver.
int cuda_device_count();

// Throws std::runtime_error with one line naming the failing CUDA call. A run
// whose kernel outlives the watchdog reports timed_out (the process must then
// exit: the kernel still occupies the device).
// The workload's subject is reached through the device registry
// (exec/cuda/device_registry.hpp): slabhash counts pool_chunks in slabs, and
// events are GFSL's only; a subject with no device policy is refused with
// std::invalid_argument.
device_run run_on_device(const model::workload& w, const device_options& o = {});

}  // namespace gfsl
