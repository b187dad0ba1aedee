// The structures under test ("subjects") and the one registry from a name to
// a subject. Every command takes `--subject NAME`; gfsl is the default, so
// every command line, replay line and trace written before subjects existed
// still means what it meant.
//
// A subject is a structure written once against the team interface
// (core/team.hpp), in its own folder under core/. What the testbed needs from
// it (docs/SUBJECTS.md): its parameters, its memory layout and initial words,
// `apply(kind, key, value)` on any team, the contents it holds at quiescence,
// its snapshot invariants, a describer of a word for reports, its variants
// and its mutant catalog. The runners are templates over a subject policy
// (exec/host_subjects.hpp, exec/cuda/device_runner.cu).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gfsl {

enum class subject_kind : std::uint8_t { gfsl = 0, slabhash = 1, lideng = 2 };
inline constexpr subject_kind default_subject = subject_kind::gfsl;

struct subject_info {
  subject_kind kind;
  std::string_view name;
  std::string_view summary;        // one line for --help and reports
  std::string_view variants;       // its variants, comma-separated, the default first
  std::string_view default_variant;
  int team_width;                  // lanes of the team that runs one operation on the CPU backends (0: chosen by --chunk)
};

inline constexpr subject_info subject_catalog[] = {
    {subject_kind::gfsl, "gfsl", "GFSL, the GPU-friendly skiplist (Moscovici, Cohen and Petrank, PACT 2017)",
     "robust,thesis", "robust", 0},
    {subject_kind::slabhash, "slabhash",
     "SlabHash, the warp-cooperative slab-list hash table (Ashkiani et al., IPDPS 2018)", "fixed,published", "fixed", 16},
    {subject_kind::lideng, "lideng",
     "Li and Deng's GPU skiplist, operations in phase-separated batches of one kind (Microelectronics & Computer, 2014)",
     "fixed,published", "fixed", 16},
};

constexpr const subject_info& info(subject_kind k) { return subject_catalog[static_cast<int>(k)]; }
constexpr const char* subject_name(subject_kind k) {
  return k == subject_kind::slabhash ? "slabhash" : k == subject_kind::lideng ? "lideng" : "gfsl";
}

// lideng is in the catalog (core/lideng/) but not yet in the runners'
// dispatch: until it is, its name is refused like an unknown one rather than
// run as GFSL.
inline constexpr bool plugged_in(subject_kind k) { return k != subject_kind::lideng; }

inline std::optional<subject_kind> parse_subject(std::string_view name) {
  for (const subject_info& s : subject_catalog) {
    if (s.name == name && plugged_in(s.kind)) return s.kind;
  }
  return std::nullopt;
}

// "gfsl, slabhash": for error lines.
inline constexpr std::string_view subject_names = "gfsl, slabhash";

}  // namespace gfsl
