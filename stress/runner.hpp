// The backends of gfsl stress. Each runs one configuration (a chunk size and
// a key range) for the options' time and returns its result; none of them
// keeps a history: every answer is judged where it is given.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/subject.hpp"
#include "invariants/snapshot.hpp"
#include "stress/options.hpp"
#include "stress/report.hpp"
#include "stress/stress.hpp"

namespace gfsl::stress {

// Called about once a second with the figures so far (progress lines).
using progress_fn = std::function<void(const config_result&)>;
// Called when a team stops making progress and cannot be stopped (threads:
// an OS thread in an endless loop; cuda: a kernel past the host's watchdog):
// prints what was recorded, then the process must exit.
using fatal_fn = std::function<void(const config_result&)>;

// host (the deterministic scheduler) and threads (one OS thread per team).
// Throws std::invalid_argument for a subject with no host stress policy. The
// subject's runner is reached through the CPU stress registry: one
// core/NAME/stress.cpp per subject, found by CMake and listed in the
// generated cpu_stress_subjects.inc.
config_result run_on_cpu(const options& o, int chunk, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal);
// Defined by the subject's core/NAME/stress.cpp, over its host stress
// policy (stress/cpu_stress.hpp).
template <subject_kind K>
config_result run_cpu_subject(const options& o, int chunk, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal);

// cuda: one persistent kernel per slice, all teams resident. Throws
// std::runtime_error with one line on a CUDA error, std::invalid_argument
// for a subject with no device policy. The subject's runner is reached
// through the device registry (exec/cuda/device_registry.hpp).
config_result run_on_gpu(const options& o, int chunk, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal);
// Defined by the subject's instance of stress/subject_gpu_stress.cu.
template <subject_kind K>
config_result run_gpu_subject(const options& o, int chunk, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal);
// A structure oracle's verdict on one structure at the end of its life.
struct structure_verdict {
  bool violated = false;
  std::vector<std::string> problems;  // one line each
};
// Empty when the cuda backend can run; otherwise one line saying why not.
std::string gpu_unavailable_reason();

// The structure oracle: the snapshot invariants (all 13) of a quiescent
// structure and its level-0 contents against what the shape says must be
// there. One line per problem; empty when it holds.
std::vector<std::string> judge_structure(const invariants::snapshot& snap,
                                         const std::vector<std::pair<key_type, value_type>>& expected_bottom);
// What level 0 must hold at the end: stable keys (stable-contains, churn keys
// unknown, so `exact` is false), or every team's present owned keys.
std::vector<std::pair<key_type, value_type>> prefill_keys(const params& p, std::uint64_t structure_seed);
// owned-keys: every team's present owned keys at the end of a structure's
// life, sorted.
inline std::vector<std::pair<key_type, value_type>> owned_present(const params& p, const std::vector<team_state>& states) {
  std::vector<std::pair<key_type, value_type>> out;
  for (team_id t = 0; t < p.teams; ++t) {
    for (std::uint32_t j = 0; j < owned_count(p, t); ++j) {
      if ((states[t].owned >> j) & 1) out.emplace_back(owned_key(p, t, j), value_of(owned_key(p, t, j)));
    }
  }
  return out;
}

}  // namespace gfsl::stress
