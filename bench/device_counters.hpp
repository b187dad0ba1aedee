// Hardware counters of one kernel, read in process through CUPTI's range
// profiler (the CUDA toolkit's libcupti, loaded at run time: a binary built
// with it still runs where CUPTI is missing, and only `gfsl bench --counters`
// needs it). This is what makes an instruction-count regression visible in a
// bench row without a profiler session.
//
// One profiled range around one kernel, in one pass (no replay: the measured
// kernel changes the structure, so it cannot run twice on the same input).
#pragma once

#include <memory>
#include <string>

namespace gfsl::bench {

// Totals over the whole kernel (every SM), as Nsight Compute reports them
// under the same metric names.
struct kernel_counters {
  double warp_instructions = 0;  // smsp__inst_executed.sum
  double local_loads = 0;        // smsp__inst_executed_op_local_ld.sum (warp-level local-memory loads)
  double local_stores = 0;       // smsp__inst_executed_op_local_st.sum
  double issue_active_pct = 0;   // smsp__issue_active.avg.pct_of_peak_sustained_elapsed: issue slots in use
};

class counter_session {
 public:
  // Loads CUPTI and prepares the counters for the current device; null with
  // `error` set (one line: what is missing, or what CUPTI refused) otherwise.
  static std::unique_ptr<counter_session> open(std::string& error);
  ~counter_session();
  counter_session(const counter_session&) = delete;
  counter_session& operator=(const counter_session&) = delete;

  // Opens the range. The device must be idle; the kernels launched until
  // end() are the ones counted.
  bool begin(std::string& error);
  // Waits for the device, closes the range and evaluates the counters.
  bool end(kernel_counters& out, std::string& error);

  struct state;

 private:
  explicit counter_session(std::unique_ptr<state> s);
  std::unique_ptr<state> s_;
};

}  // namespace gfsl::bench
