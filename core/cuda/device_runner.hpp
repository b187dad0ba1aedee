// Executes a workload on the GPU: the same operations as the CPU runners
// (operation_at is computed on the device), one team per N lanes. Callable
// from host code compiled without nvcc.
#pragma once

#include <string>

#include "../host_runner.hpp"

namespace gfsl {

struct device_run {
  host_run run;              // same report, records and final state as a CPU run
  std::string device_name;
  bool timed_out = false;    // a kernel did not finish within the watchdog time
};

// Empty when a CUDA device can be used; otherwise one line saying why not.
std::string cuda_unavailable_reason();

// Throws std::runtime_error with one line naming the failing CUDA call.
// `watchdog_seconds` bounds each kernel; a run that exceeds it reports
// timed_out (the process must then exit: the kernel still occupies the device).
device_run run_on_device(const model::workload& w, std::uint32_t pool_chunks = 0, bool keep_records = true,
                         double watchdog_seconds = 120.0, int threads_per_block = 256);

}  // namespace gfsl
