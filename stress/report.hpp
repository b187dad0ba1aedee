// The result of one stress configuration, and its three renderings: text for
// people, JSON and CSV for scripts.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "stress/stress.hpp"

namespace gfsl::stress {

struct config_result {
  std::string backend;
  std::string device;          // cuda: the GPU's name; else "cpu"
  std::string shape;
  std::string variant;         // thesis | robust
  bool reraise = false;        // the upper levels' re-raise rule (off: the thesis')
  std::string mutant = "none";
  std::string mutant_role;     // "amplifier", "seeded bug" or empty
  std::string granularity;     // host only
  std::string sched;           // host only
  int chunk = 32;
  std::uint32_t range = 0;
  std::uint32_t teams = 0;
  std::uint32_t writers = 0;   // writer teams
  double seconds = 0;          // the time teams ran (cuda: kernel time of the slices)
  double wall_seconds = 0;     // the configuration's wall time, structure oracle and rebuilds included
  counters totals;
  std::uint64_t structures = 0;       // fresh structures built
  std::uint64_t rebuilt_early = 0;    // of them, ended early because the pool ran low
  std::uint64_t structure_checks = 0; // structures judged by the structure oracle
  std::uint64_t structure_violations = 0;
  std::vector<std::string> structure_problems;  // the first few, one line each, each led by "structure N: "
  std::string invariants_checked;     // e.g. "13 snapshot invariants"
  std::vector<violation_record> reports;        // the first K violations with what the read saw
  struct structure_replay {
    std::uint32_t structure = 0;  // the structure's index, as violations and problems name it
    std::string line;             // gfsl-stress1:..., which runs that structure again
  };
  std::vector<structure_replay> replays;        // host: one per structure with a violation (the first few)
  // The replay line of structure `s`, or nullptr when none was kept.
  const std::string* replay_of(std::uint32_t s) const {
    for (const structure_replay& r : replays) {
      if (r.structure == s) return &r.line;
    }
    return nullptr;
  }
  bool hung = false;
  std::string hang_detail;
  std::string error;                  // the run's own error (exit 4)
  // SIGINT/SIGTERM stopped the configuration: the figures cover what ran
  // (the structure under way judged as its teams left it).
  bool interrupted = false;

  // The other subjects' (empty for gfsl, whose report is unchanged).
  std::string subject = "gfsl";
  std::uint32_t buckets = 0;
  std::uint32_t churn = 0;             // owned-keys: shared keys range+1..range+churn
  std::uint32_t low_churn = 0;         // stable-contains: writers churn keys 1..low_churn (params::low_churn)
  std::uint64_t ops_per_round = 0;     // per team (0: rounds end by time only)
  std::uint32_t levels = 0;            // lideng: the list's levels
  // How a violation report's words read, for a subject whose describer is
  // its own (lideng: a node); null: gfsl's chunk, or slabhash's slab.
  std::string (*describe_line)(const violation_record&) = nullptr;
  // The full scan after each round (stress/slab_oracle.hpp), summed over rounds.
  std::uint64_t duplicates = 0, lost_keys = 0, unexpected_keys = 0, malformed = 0;
  // Seconds from the configuration's start to the first of each kind (< 0:
  // none): answers judged on the device (missing, extra) by the device's
  // clock, full-scan findings at the end of their round by the host's.
  double first_missing_s = -1, first_extra_s = -1, first_duplicate_s = -1, first_lost_s = -1;
  double per_1e9_answers(std::uint64_t n) const {
    return totals.reads ? static_cast<double>(n) * 1e9 / static_cast<double>(totals.reads) : 0;
  }

  std::uint64_t violations() const { return totals.violations + structure_violations; }
  // No answer and no structure judged: the configuration tested nothing.
  bool judged_nothing() const { return totals.reads == 0 && structure_checks == 0; }
  double ops_per_second() const { return seconds > 0 ? static_cast<double>(totals.ops()) / seconds : 0; }
  double rate_per_1e9_ops() const {
    return totals.ops() ? static_cast<double>(totals.violations) * 1e9 / static_cast<double>(totals.ops()) : 0;
  }
};

// One line: what the failing read answered and the chunk it saw, the
// 128-byte line boundary marked `||`, EMPTY as `.`:
//   false contains(20)  level-0 chunk:  0 1 2 ... 19 || . . . | NEXT(max 20) LOCK held
std::string describe_read(const violation_record& v, std::string (*describe_line)(const violation_record&) = nullptr);
// The slabhash lines of the text report (answers by kind, full-scan
// findings), each with its rate per 10^9 answers and time to first.
std::vector<std::string> slab_summary_lines(const config_result& r);
std::string describe_chunk(const std::uint64_t* words, int n);

void print_text(std::FILE* out, const std::vector<config_result>& results);
void print_json(std::FILE* out, const std::vector<config_result>& results);
void print_csv(std::FILE* out, const std::vector<config_result>& results);

}  // namespace gfsl::stress
