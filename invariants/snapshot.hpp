// Snapshots and their reports, for every subject: a copy of a structure's
// words, taken at quiescence (after a run, between kernel launches) or in the
// middle of a scheduled run, judged by its subject's invariants (the
// descriptor's check_snapshot: core/gfsl/invariants.hpp, thesis 4.3;
// core/slabhash/invariants.hpp; core/lideng/invariants.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../core/subject.hpp"
#include "../core/types.hpp"

namespace gfsl::invariants {

// A copy of a structure's words (core/gfsl/layout.hpp for GFSL,
// core/slabhash/layout.hpp for SlabHash), with what its checks need to read them.
struct snapshot {
  subject_kind subject = subject_kind::gfsl;
  int chunk = 32;                  // N (SlabHash: 16, the words of a slab)
  std::uint32_t capacity = 0;      // chunks (slabs) in the pool
  std::uint32_t buckets = 0;       // SlabHash only
  std::uint8_t variant = 0;        // SlabHash only: slabhash::slab_variant (its invariants differ by variant)
  std::vector<std::uint64_t> words;
  std::uint64_t stamp = 0;         // when it was taken, on the history's clock
};

// One violated invariant: its name, the chunks involved, when (step or
// stamp), what is wrong, and the operations in flight then (filled by callers
// that have the history); the key it concerns, where there is one, and for a
// temporal invariant the event (its position in the log) and the team that
// wrote it, so that reports can show them as fields.
struct violation {
  std::string invariant;
  std::vector<std::uint32_t> chunks;
  std::uint64_t when = 0;
  std::string detail;  // one line, the reason
  std::vector<std::string> in_flight;
  std::optional<key_type> key;
  std::optional<std::uint64_t> event;
  std::optional<team_id> team;
  std::string describe() const;
};

struct snapshot_report {
  // The invariants that ran: model-state only with expected_bottom, and only
  // level-list and final-not-zombie when the level lists are broken (the
  // others walk them).
  std::vector<std::string> checked;
  std::vector<violation> violations;  // empty when all hold
  std::size_t chunks = 0, live_chunks = 0, keys = 0;
};

// Checks every snapshot invariant of the snapshot's subject (quiescent =
// true) or only those that hold mid-run. Never trusts the words: indexes are
// bounds-checked, walks bounded. With `expected_bottom` (sorted (key, value)
// pairs), also checks that the structure holds exactly those.
snapshot_report check_snapshot(const snapshot& s, bool quiescent = true,
                               const std::vector<std::pair<key_type, value_type>>* expected_bottom = nullptr,
                               std::size_t max_violations = 50);

}  // namespace gfsl::invariants
