// gfsl stress's GPU runner for one subject of the device registry: compiled
// once per `gfsl_device_subject(NAME)` line of CMakeLists.txt, with
// GFSL_SUBJECT set to NAME, over the policies of core/NAME/device_subject.cuh.
#if defined(GFSL_SUBJECT_INLINED)
// A subject whose kernels are small is compiled inlined even in the quick
// device build: cicc and ptxas take seconds on it, and the race windows a
// stress measures depend on the speed of the real code, not of out-of-line
// calls through local memory.
#undef GFSL_DEVICE_NOINLINE_ALL
#endif

#define GFSL_SUBJECT_STR2(x) #x
#define GFSL_SUBJECT_STR(x) GFSL_SUBJECT_STR2(x)
#include GFSL_SUBJECT_STR(core/GFSL_SUBJECT/device_subject.cuh)
#include "stress/gpu_stress.cuh"

namespace gfsl::stress {

template <>
config_result run_gpu_subject<subject_kind::GFSL_SUBJECT>(const options& o, int chunk, std::uint32_t range,
                                                          const progress_fn& progress, const fatal_fn& fatal) {
  return device_subject<subject_kind::GFSL_SUBJECT>::with_policy(
      chunk, o, [&]<class P>() { return run_stress<P>(o, range, progress, fatal); });
}

}  // namespace gfsl::stress
