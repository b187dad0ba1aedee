// The device registry: how the host side reaches a subject's GPU runners.
// CMakeLists.txt holds one line per subject that runs on the GPU,
// `gfsl_device_subject(NAME)`; the line compiles the device runner
// (exec/cuda/subject_device_runner.cu) and gfsl stress's GPU runner
// (stress/subject_gpu_stress.cu) once for that subject, over the policies of
// its core/NAME/device_subject.cuh, and adds NAME to the generated list
// device_subjects.inc that run_on_device and stress::run_on_gpu dispatch on.
//
// A subject's device_subject.cuh specialises device_subject<K> with
//   template <class Options, class F> static auto with_policy(int chunk, const Options& o, F&& f)
// which reads the options' choice of variant and seeded bug (Options is
// device_options or stress::options), picks the policy type P, and returns
// f.template operator()<P>() (docs/SUBJECTS.md, "The GPU side").
#pragma once

#include "../../core/subject.hpp"
#include "../../model/workload.hpp"
#include "device_runner.hpp"

namespace gfsl {

template <subject_kind K>
struct device_subject;

// Defined by the subject's instance of exec/cuda/subject_device_runner.cu.
template <subject_kind K>
device_run run_device_subject(const model::workload& w, const device_options& o);

}  // namespace gfsl
