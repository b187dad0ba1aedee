// gfsl stress in a build without nvcc: the cuda backend says so.
#include "stress/runner.hpp"

namespace gfsl::stress {

std::string gpu_unavailable_reason() { return "not available in this build (configured without nvcc)"; }

config_result run_on_gpu(const options&, int, std::uint32_t, const progress_fn&, const fatal_fn&) {
  throw std::runtime_error("the cuda backend is not available in this build");
}

}  // namespace gfsl::stress
