// The structures under test ("subjects"), what the testbed knows of each, and
// the choice of a subject's variant and seeded bug. Every command takes
// `--subject NAME`; gfsl is the default, so every command line, replay line
// and trace written before subjects existed still means what it meant.
//
// A subject is a structure written once against the team interface
// (core/team.hpp), in its own folder under core/, with a descriptor there
// (core/gfsl/subject.hpp, core/slabhash/subject.hpp) listed once in
// core/registry.hpp. The commands, runners, fuzzer and reports reach a
// structure only through its descriptor (docs/SUBJECTS.md): its name, team
// width, variants, mutant catalog and parameters. A variant or a mutant
// travels as an index of the subject's catalog (subject_choice); the subject
// alone casts it to its own enums, inside its folder. On the GPU the
// runners are templates over a device policy in the subject's folder
// (exec/cuda/device_runner.cuh and stress/gpu_stress.cuh over
// core/NAME/device_subject.cuh).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coverage.hpp"

namespace gfsl {

namespace model {
struct workload;
}
namespace sched {
struct options;
struct outcome;
}
namespace invariants {
struct snapshot;
struct snapshot_report;
}
struct host_run;
struct run_extras;
enum class host_mode;

// The registry's order (core/registry.hpp); the value is what binary traces store.
// `user` is the slot of a structure a program registers at run time
// (core/user/subject.hpp, include/gfsl/cpu/subject.hpp): a user's CUDA code
// through the CUDA-on-CPU layer, named by the user.
enum class subject_kind : std::uint8_t { gfsl = 0, slabhash = 1, lideng = 2, user = 3 };
inline constexpr subject_kind default_subject = subject_kind::gfsl;

// A subject's variant and seeded bug, as indices of its catalogs: `variant`
// an index of its descriptor's `variants`, `mutant` an id of its mutant
// catalog, 0 for none (the correct structure). The subject is the
// workload's (model::workload::subject). The default is the default
// subject's default variant (gfsl's robust, index 1; SlabHash's default,
// fixed, is index 1 too: core/registry.hpp checks both).
struct subject_choice {
  std::uint8_t variant = 1;
  std::uint8_t mutant = 0;
  bool mutated() const { return mutant != 0; }
  friend bool operator==(const subject_choice&, const subject_choice&) = default;
};

// One seeded bug of a subject's catalog, as the mutants command lists and runs it.
struct mutant_entry {
  int id = 0;  // the subject's catalog id (0: none, the control)
  std::string name, backends, variants, breaks, notes;
};

// What the loads of a campaign's runs see (gfsl fuzz --memory): every run
// under sc, some under ptx, or all under ptx.
enum class campaign_memory : std::uint8_t { sc, mixed, ptx };

// A parameter of a subject beyond the workload's common ones, declared once:
// its option (--NAME), its replay-line key and its trace-header field are its
// name; a replay line or trace header of another subject does not carry it.
struct subject_parameter {
  std::string_view name;
  std::string_view help;   // the option's help, after "NAME: "
  std::uint32_t max;       // largest value (0: the default)
  std::uint32_t (*get)(const model::workload& w);
  void (*set)(model::workload& w, std::uint32_t value);
  // The value when the option is absent or 0 (from the rest of the workload).
  std::uint32_t (*default_value)(const model::workload& w);
};

// The host run entry of a subject (exec/host_run.hpp, the generic runner
// instantiated over the subject's host policy): prefill, then the concurrent
// phase in `mode`; `so`/`outcome` for scheduled runs only.
using host_run_fn = host_run (*)(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records,
                                 const sched::options* so, sched::outcome* outcome, const run_extras& extras);

// What the testbed knows of one subject, with no template in sight: the
// commands are not templates over subjects.
struct subject_descriptor {
  subject_kind kind;
  std::string_view name;
  std::string_view summary;  // one line for --help and reports
  std::string_view nickname; // a few words for --subject's help ("the skiplist")
  // Lanes of the team that runs one operation on the CPU backends (0: chosen by --chunk).
  int team_width;
  std::span<const std::string_view> variants;  // by index
  std::uint8_t default_variant;
  // What a replay line without a variant field ran (lines from before the subject had variants).
  std::uint8_t unnamed_variant;
  std::string_view variants_text;  // for error lines: the default first, comma-separated
  // Its catalog: names by id ("none" for 0), names to ids (what --mutant accepts).
  std::string_view (*mutant_name)(int id);
  std::optional<int> (*parse_mutant)(std::string_view name);
  std::string_view no_such_mutant;  // the error line's tail for a name it does not know
  std::vector<mutant_entry> (*mutant_entries)();
  // Why mutant `id` behaves like the correct structure of `variant` when chunk
  // reads are whole (one instant) and the campaign's loads are `memory`;
  // empty when a campaign that does not kill it missed a bug.
  std::string_view (*equivalence)(int id, int variant, bool whole_chunk_reads, campaign_memory memory);
  // The upper levels' rule a variant runs by default (workload::reraise; false where it has none).
  bool (*reraises_by_default)(int variant);

  // Its parameters (empty: none beyond the workload's).
  std::span<const subject_parameter> parameters;
  // Why `--chunk N` does not apply, for a subject whose team reads a fixed
  // number of words (team_width > 0; empty otherwise).
  std::string_view fixed_chunk_note;
  // Its snapshots record its variant (invariants::snapshot::variant: its invariants differ by variant).
  bool snapshot_has_variant;
  // Its snapshot invariants (invariants/): at quiescence or mid-run, against
  // the model's contents when given (invariants::check_snapshot's arguments).
  invariants::snapshot_report (*check_snapshot)(const invariants::snapshot& s, bool quiescent,
                                                const std::vector<std::pair<std::uint32_t, std::uint32_t>>* expected,
                                                std::size_t max_violations);
  // workload::validate's part for this subject: empty, or one line.
  std::string (*check_workload)(const model::workload& w);

  // The host backends: the run entry, and a pool (chunks, slabs) large
  // enough for `keys` inserts or for the whole workload.
  host_run_fn run_host;
  std::uint32_t (*pool_for_keys)(double keys, const model::workload& w);
  std::uint32_t (*default_pool)(const model::workload& w);
  // gfsl run's summary lines of the structure a host run left (its statistics
  // and its shape), each ending in a newline; `ops_done` the operations run.
  std::string (*structure_summary)(const host_run& r, const model::workload& w, const subject_choice& c, double ops_done);
  // gfsl fuzz: makes a workload the generic generator drew (GFSL's shape)
  // one this subject runs: its subject, chunk, parameters and limits, drawn
  // from the workload's own fields so that it shrinks with them. Null: the
  // generator's own (gfsl; SlabHash's is in fuzz/generators.cpp).
  void (*fit_generated)(model::workload& w) = nullptr;
  // The most teams a run may have (0: no limit of its own).
  std::uint32_t max_teams = 0;
  // Its operations come in batches: operation j of every team is one batch,
  // and every team of a batch waits for all the others (so every team makes
  // the same number of operations). gfsl stress runs it in lockstep batches
  // of one kind, every team running the batch's kind.
  bool batched = false;
  // Its finds return the value an insert stored. False for a set of keys
  // only (a user's structure of model "set"): its histories carry value 0
  // for every operation, the prefill's included, so that a find's answer
  // is judged on presence alone.
  bool stores_values = true;
  // Its coverage windows and effects by name, in the order of its marks
  // (core/coverage.hpp; empty: it marks none).
  coverage_spec coverage = {};

  std::string_view variant_name(int v) const {
    return v >= 0 && static_cast<std::size_t>(v) < variants.size() ? variants[static_cast<std::size_t>(v)] : std::string_view("?");
  }
  std::optional<std::uint8_t> parse_variant(std::string_view text) const {
    for (std::size_t i = 0; i < variants.size(); ++i) {
      if (variants[i] == text) return static_cast<std::uint8_t>(i);
    }
    return std::nullopt;
  }
  subject_choice default_choice() const { return {default_variant, 0}; }
};

}  // namespace gfsl
