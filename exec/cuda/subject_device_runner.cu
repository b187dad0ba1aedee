// The device runner of one subject of the device registry: compiled once per
// `gfsl_device_subject(NAME)` line of CMakeLists.txt, with GFSL_SUBJECT set to
// NAME, over the policies of core/NAME/device_subject.cuh (one translation
// unit per subject, so they build in parallel).
#if defined(GFSL_SUBJECT_INLINED)
// A subject whose kernels are small is compiled inlined even in the quick
// device build: cicc and ptxas take seconds on it, and a recorded run's
// interleavings depend on the speed of the real code.
#undef GFSL_DEVICE_NOINLINE_ALL
#endif

#define GFSL_SUBJECT_STR2(x) #x
#define GFSL_SUBJECT_STR(x) GFSL_SUBJECT_STR2(x)
#include GFSL_SUBJECT_STR(core/GFSL_SUBJECT/device_subject.cuh)
#include "device_runner.cuh"

namespace gfsl {

template <>
device_run run_device_subject<subject_kind::GFSL_SUBJECT>(const model::workload& w, const device_options& o) {
  return device_subject<subject_kind::GFSL_SUBJECT>::with_policy(w.chunk, o, [&]<class P>() { return run_device<P>(w, o); });
}

}  // namespace gfsl
