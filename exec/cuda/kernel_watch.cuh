// The host's side of a device run that may be interrupted, used by the
// device runner of every subject (exec/cuda/device_runner.cuh): a
// device-wide abort flag that teams read
// at each operation (run_controls::abort_flag), and a wait on a kernel that
// never blocks past the watchdog and raises the flag on an interrupt.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "cuda_check.cuh"

namespace gfsl::cuda_util {

class kernel_watch {
 public:
  kernel_watch(const std::atomic<bool>* interrupt, double watchdog_seconds)
      : interrupt_(interrupt), watchdog_seconds_(watchdog_seconds) {
    check(cudaMemset(flag_.ptr, 0, sizeof(unsigned int)), "cudaMemset", __FILE__, __LINE__);
    // The copy that raises the flag goes on a stream that does not wait for
    // the default stream's kernel, so it lands while the kernel runs.
    if (interrupt_) check(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", __FILE__, __LINE__);
  }
  ~kernel_watch() {
    if (side_) cudaStreamDestroy(side_);
  }
  kernel_watch(const kernel_watch&) = delete;
  kernel_watch& operator=(const kernel_watch&) = delete;

  unsigned int* abort_flag() const { return flag_.ptr; }
  // The interrupt was seen and the flag raised.
  bool interrupted() const { return raised_; }

  // Waits for `done`: false when the watchdog ran out first (a hung kernel
  // must not hang the host).
  bool wait(cudaEvent_t done) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      const cudaError_t e = cudaEventQuery(done);
      if (e == cudaSuccess) return true;
      if (e != cudaErrorNotReady) check(e, "cudaEventQuery", __FILE__, __LINE__);
      if (interrupt_ && !raised_ && interrupt_->load()) {
        static const unsigned int raised_flag = 1;
        check(cudaMemcpyAsync(flag_.ptr, &raised_flag, sizeof raised_flag, cudaMemcpyHostToDevice, side_), "cudaMemcpyAsync",
              __FILE__, __LINE__);
        raised_ = true;
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > watchdog_seconds_) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

 private:
  device_buffer<unsigned int> flag_{1};
  cudaStream_t side_ = nullptr;
  const std::atomic<bool>* interrupt_;
  double watchdog_seconds_;
  bool raised_ = false;
};

}  // namespace gfsl::cuda_util
