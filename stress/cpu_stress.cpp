// gfsl stress on the CPU: what every subject's runner shares (the runner
// itself is the template of stress/cpu_stress.hpp, instantiated in each
// subject's core/NAME/stress.cpp), and run_on_cpu, which reaches a subject's
// runner through the CPU stress registry.
#include <stdexcept>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "stress/runner.hpp"
#include "stress/stress.hpp"

namespace gfsl::stress {

std::vector<std::pair<key_type, value_type>> prefill_keys(const params& p, std::uint64_t structure_seed) {
  std::vector<std::pair<key_type, value_type>> out;
  for (std::uint64_t k = 1; k <= p.range; ++k) {
    if (initially_present(p, structure_seed, static_cast<key_type>(k))) {
      out.emplace_back(static_cast<key_type>(k), value_of(static_cast<key_type>(k)));
    }
  }
  return out;
}

std::vector<std::string> judge_structure(const invariants::snapshot& snap,
                                         const std::vector<std::pair<key_type, value_type>>& expected_bottom) {
  std::vector<std::string> out;
  const invariants::snapshot_report rep = invariants::check_snapshot(snap, true, &expected_bottom, 8);
  for (const invariants::violation& v : rep.violations) out.push_back(v.describe());
  return out;
}

// The CPU stress registry, as CMake generated it from the core/NAME/stress.cpp
// it found: each defines its subject's specialisation.
#define GFSL_CPU_STRESS_SUBJECT(name)                                                                         \
  template <>                                                                                                \
  config_result run_cpu_subject<subject_kind::name>(const options& o, int chunk, std::uint32_t range, const progress_fn& progress, \
                                                    const fatal_fn& fatal);
#include "cpu_stress_subjects.inc"
#undef GFSL_CPU_STRESS_SUBJECT

config_result run_on_cpu(const options& o, int chunk, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  switch (o.subject) {
#define GFSL_CPU_STRESS_SUBJECT(name) \
  case subject_kind::name:            \
    return run_cpu_subject<subject_kind::name>(o, chunk, range, progress, fatal);
#include "cpu_stress_subjects.inc"
#undef GFSL_CPU_STRESS_SUBJECT
    default:
      break;
  }
  throw std::invalid_argument(std::string("--subject ") + subject_name(o.subject) +
                              ": gfsl stress has no CPU runner for it (no core/" + subject_name(o.subject) + "/stress.cpp)");
}

}  // namespace gfsl::stress
