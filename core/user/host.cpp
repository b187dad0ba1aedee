// The user slot's parts that need no CUDA-on-CPU layer: names, the workload's
// rules, the fuzzer's workloads, the summary line. The run entry of a
// registered structure is the registering program's
// (exec/cuda_on_cpu/user_subject.cpp, linked into gfsl::cpu_subject).
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "../../exec/host_runner.hpp"
#include "../../invariants/snapshot.hpp"
#include "../registry.hpp"
#include "subject.hpp"

namespace gfsl::user {

slot_state& slot() {
  static slot_state s;
  return s;
}

std::string check_user_name(std::string_view name) {
  if (name.empty() || name.size() > 40) return "a structure's name is 1 to 40 characters";
  if (!(name[0] >= 'a' && name[0] <= 'z')) return "a structure's name starts with a letter a-z";
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
      return "a structure's name is made of a-z, 0-9, _ and -";
    }
  }
  for (std::size_t i = 0; i + 1 < subject_count; ++i) {
    if (subject_registry[i]->name == name) {
      std::string out(name);
      out += " is a subject of gfsl's own";
      return out;
    }
  }
  return {};
}

bool adopt_name(std::string_view name) {
  slot_state& s = slot();
  if (s.named) return s.name == name;  // one user structure a process
  if (!check_user_name(name).empty()) return false;
  s.name = std::string(name);
  s.named = true;
  s.summary = "a user's structure, named by its trace";
  descriptor.name = s.name;
  descriptor.summary = s.summary;
  return true;
}

std::string_view mutant_name_of(int id) { return id == 0 ? "none" : "?"; }
std::optional<int> parse_mutant_name(std::string_view name) {
  if (name == "none") return 0;
  return std::nullopt;
}
std::vector<mutant_entry> mutant_entries() { return {}; }

invariants::snapshot_report check_snapshot(const invariants::snapshot&, bool, const std::vector<std::pair<std::uint32_t, std::uint32_t>>*,
                                           std::size_t) {
  return {};
}

std::string check_workload(const model::workload& w) {
  const slot_state& s = slot();
  if (w.chunk != 32) return "chunk must be 32 for " + s.name + " (a user's structure runs on warps of 32 lanes)";
  if (w.teams < 1 || w.teams > s.max_warps) {
    return "teams must be in [1, " + std::to_string(s.max_warps) + "] for " + s.name + " (one warp per team)";
  }
  if (w.range > s.max_key) return "range must be in [1, " + std::to_string(s.max_key) + "] for " + s.name + " (its largest key)";
  if (w.reraise) return "upper=reraise is a gfsl rule; " + s.name + " has no upper levels";
  if (!s.has_erase && w.delete_pct > 0) return "mix: " + s.name + " has no erase (a delete share of 0)";
  return {};
}

host_run run_host_unregistered(const model::workload&, host_mode, std::uint32_t, bool, const sched::options*, sched::outcome*,
                               const run_extras&) {
  throw std::invalid_argument("subject '" + slot().name +
                              "' is a user's structure: it runs in the program built from it (docs/YOUR-STRUCTURE.md), not in gfsl");
}

std::string structure_summary(const host_run& r, const model::workload&, const subject_choice&, double) {
  return "structure: " + slot().name + " (a user's structure through the CUDA-on-CPU layer), " +
         std::to_string(r.final_entries.size()) + " keys at the end\n";
}

// The fuzzer's workloads: 2 to 6 warps and short runs (a lane is a fiber,
// an operation a few hundred scheduling points) of at most 24 operations
// over at most 32 keys, so that the warps' operations meet on keys and
// slots, as PCT's few change points need; the rest (kinds, mixes, key
// shapes, prefill) from GFSL's generator.
void fit_generated(model::workload& w) {
  const slot_state& s = slot();
  w.subject = subject_kind::user;
  w.chunk = 32;
  w.p_chunk = 1.0;
  w.reraise = false;
  w.teams = 2 + (w.teams - 2) % std::min<std::uint32_t>(5, std::max<std::uint32_t>(1, s.max_warps - 1));
  w.ops = std::clamp<std::uint64_t>(w.ops, w.teams, 24);
  w.range = std::min({w.range, s.max_key, std::uint32_t{32}});
  if (!s.has_erase) {
    w.insert_pct += w.delete_pct;
    w.delete_pct = 0;
  }
}

}  // namespace gfsl::user
