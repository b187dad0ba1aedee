// Host-side CUDA plumbing shared by the device runner and the benchmarks: a
// CUDA call that fails becomes one exception line naming the call and where,
// and device memory is owned by a scope.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <thread>

namespace gfsl::cuda_util {

inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + " at " + file + ":" + std::to_string(line) + ": " +
                             cudaGetErrorString(e));
  }
}

template <class T>
struct device_buffer {
  T* ptr = nullptr;
  explicit device_buffer(std::size_t n) {
    if (n) check(cudaMalloc(&ptr, n * sizeof(T)), "cudaMalloc", __FILE__, __LINE__);
  }
  ~device_buffer() {
    if (ptr) cudaFree(ptr);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

// Device time on the default stream from construction to stop(), in
// milliseconds (stop waits for the work launched in between).
class event_timer {
 public:
  event_timer() {
    check(cudaEventCreate(&start_), "cudaEventCreate", __FILE__, __LINE__);
    check(cudaEventCreate(&stop_), "cudaEventCreate", __FILE__, __LINE__);
    check(cudaEventRecord(start_), "cudaEventRecord", __FILE__, __LINE__);
  }
  ~event_timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  float stop() {
    check(cudaEventRecord(stop_), "cudaEventRecord", __FILE__, __LINE__);
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize", __FILE__, __LINE__);
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime", __FILE__, __LINE__);
    return ms;
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Waits for `done` without ever blocking longer than `seconds` (a hung kernel
// must not hang the host): false when the time ran out.
inline bool wait_for(cudaEvent_t done, double seconds) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaEventQuery(done);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) check(e, "cudaEventQuery", __FILE__, __LINE__);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace gfsl::cuda_util

#define GFSL_CUDA_CHECK(call) ::gfsl::cuda_util::check((call), #call, __FILE__, __LINE__)
