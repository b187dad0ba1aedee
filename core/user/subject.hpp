// The user slot of the registry (core/registry.hpp): a structure that is not
// in this tree, brought by a program that links gfsl::cpu_subject and
// registers it at run time (include/gfsl/cpu/subject.hpp,
// docs/YOUR-STRUCTURE.md). Its device code runs through the CUDA-on-CPU
// layer (docs/CUDA-ON-CPU.md): one warp of the launch per team, every lane a
// fiber, under the same scheduler as the subjects ported into core/.
//
// The descriptor is the one entry of the registry that is not a constant:
// its name is the user's (replay lines and traces carry it), and its run
// entry is the registering program's. In a program that registered nothing
// (gfsl itself) the slot is named "user" and a run of it says that no
// structure is registered; `gfsl check` names the slot after a trace's
// subject it does not know, so that a user's trace is checked as a set or
// a map (traces/trace.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../../model/workload.hpp"
#include "../subject.hpp"

namespace gfsl::invariants {
struct snapshot_report;
}

namespace gfsl::user {

// The model a user's structure is checked against: a set (answers only) or a
// map (a find returns the value stored).
enum class user_model : std::uint8_t { set, map };

// What the registering program says of its structure beyond its run entry.
struct slot_state {
  std::string name = "user";
  std::string summary = "a structure registered at run time (none in this program: docs/YOUR-STRUCTURE.md)";
  user_model model = user_model::map;
  std::uint32_t max_key = 0xFFFFFFFDu;  // largest key its operations take
  std::uint32_t max_warps = 32;         // warps (teams) of one launch
  bool has_erase = true;               // workloads without one have no deletes
  bool registered = false;
  bool named = false;  // registered, or named after a trace (gfsl check)
};
slot_state& slot();

// A name a user may give a structure: 1 to 40 of [a-z0-9_-], starting with a
// letter, and not a subject of the tree.
std::string check_user_name(std::string_view name);
// Names the slot after a trace's subject (gfsl check): true when the name is
// one a user may give, and no structure is registered under another name.
bool adopt_name(std::string_view name);

inline constexpr std::string_view variant_names[] = {"as-built"};

std::string_view mutant_name_of(int id);
std::optional<int> parse_mutant_name(std::string_view name);
std::vector<mutant_entry> mutant_entries();
inline std::string_view equivalence(int, int, bool, campaign_memory) { return {}; }
inline bool reraises(int) { return false; }

// The user's structure has no snapshot invariants here (its layout is its
// own); its contents at quiescence are checked against the history.
invariants::snapshot_report check_snapshot(const invariants::snapshot& s, bool quiescent,
                                           const std::vector<std::pair<std::uint32_t, std::uint32_t>>* expected,
                                           std::size_t max_violations);
std::string check_workload(const model::workload& w);
// Without a registered structure: one line saying so (an invalid_argument).
host_run run_host_unregistered(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records,
                               const sched::options* so, sched::outcome* outcome, const run_extras& extras);
std::string structure_summary(const host_run& r, const model::workload& w, const subject_choice& c, double ops_done);
inline std::uint32_t no_pool(double, const model::workload&) { return 0; }
inline std::uint32_t no_default_pool(const model::workload&) { return 0; }
void fit_generated(model::workload& w);

// Filled in once at start-up by the registering program
// (gfsl::cpu::main): name, summary, run_host.
inline subject_descriptor descriptor{
    subject_kind::user,
    "user",
    "a structure registered at run time (none in this program: docs/YOUR-STRUCTURE.md)",
    "your structure, through the CUDA-on-CPU layer",
    32,  // a warp
    variant_names,
    0,
    0,
    "as-built",
    &mutant_name_of,
    &parse_mutant_name,
    "a user's structure has no mutant catalog (its seeded bugs are builds of its own)",
    &mutant_entries,
    &equivalence,
    &reraises,
    {},
    "a user's structure runs on warps of 32 lanes (--chunk does not apply)",
    false,
    &check_snapshot,
    &check_workload,
    &run_host_unregistered,
    &no_pool,
    &no_default_pool,
    &structure_summary,
    &fit_generated,
};

}  // namespace gfsl::user
