// GFSL under gfsl stress on the CPU backends: its host stress policy for the
// generic runner (stress/cpu_stress.hpp), one instance per chunk size,
// variant and with or without the seeded bug. Its structure oracle is the 13
// snapshot invariants and level 0 against what the shape implies
// (stress::judge_structure).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/gfsl/algorithm.hpp"
#include "core/gfsl/invariants.hpp"
#include "core/gfsl/subject.hpp"
#include "exec/host_structure.hpp"
#include "stress/cpu_stress.hpp"

namespace gfsl {

namespace {

template <int N, bool Mutable, variant V>
struct gfsl_stress_policy {
  static constexpr int width = N;
  static constexpr const char* pool_unit = "chunks";
  static constexpr bool batches = false, one_kind_per_batch = false, rounds = false;
  static constexpr bool judges_exhausted = false;  // an operation stopped half-way: not a state the oracle can judge

  template <class Team>
  using algorithm = gfsl::algorithm<Team, Mutable, V>;

  struct structure {
    host_structure<N> s;
    structure(const stress::options&, const stress::params&, std::uint32_t pool) : s(pool) {}
  };

  static std::uint32_t pool(const stress::options& o, const stress::params& p, bool host) {
    if (host) {
      // Every update may split; merged chunks are never reused. Bounded as
      // on the GPU (2^20 chunks): the pool is written whole before any team
      // runs, so a pool sized for 10^9 operations took seconds and gigabytes
      // that --seconds and SIGINT could not cut; a structure that fills it
      // ends early and the next one is built (counted in the report).
      const std::uint64_t chunks = 4ull * N + 64 + 2 * p.teams * o.ops_per_team + 2 * p.range;
      return static_cast<std::uint32_t>(std::min<std::uint64_t>(chunks, 1u << 20));
    }
    return N == 32 ? (1u << 20) : (1u << 21);  // 256 MiB; a full pool ends the structure's life early
  }
  static std::uint64_t* words(const structure& s) { return s.s.words(); }
  static std::size_t word_count(const structure& s) { return s.s.word_count(); }
  static const std::uint64_t* pool_start(const structure& s) { return s.s.view().chunk(0); }
  static const std::uint64_t* error_word(const structure& s) { return s.s.view().error_word(); }

  // A structure's first keys, inserted by one team in ascending order before
  // the concurrent phase (the measured setup: one team fills, then all run).
  static bool prefill(structure& s, const stress::options& o, std::uint64_t seed,
                      const std::vector<std::pair<key_type, value_type>>& keys, std::string& error) {
    host_team<N> filler(0, seed ^ 0xF1F1F1F1ull, s.s.words());
    gfsl::algorithm<host_team<N>, false, V> a(filler, s.s.view(), shape_rule_of(o.p_chunk, o.reraise));
    for (const auto& [k, v] : keys) {
      const op_result r = a.insert(k, v);
      if (r.st != status::ok || !r.ok) {
        error = "prefill insert(" + std::to_string(k) + ") " + (r.st != status::ok ? status_name(r.st) : "returned false");
        return false;
      }
    }
    return true;
  }

  template <class Team>
  static std::unique_ptr<algorithm<Team>> make(Team& team, structure& s, const stress::options& o) {
    return std::make_unique<algorithm<Team>>(team, s.s.view(), shape_rule_of(o.p_chunk, o.reraise), gfsl_subject::mutant_of(o.choice));
  }

  static void describe(stress::config_result& res, const stress::options& o, const stress::params&) {
    res.variant = variant_name(V);
    res.reraise = o.reraise;
    res.mutant = mutant_label(o.subject, o.choice);
    res.mutant_role = stress::mutant_role(gfsl_subject::mutant_of(o.choice));
    res.invariants_checked = std::to_string(invariants::snapshot_invariant_names().size()) + " snapshot invariants";
  }
  static void on_violation(stress::violation_record&, const stress::step&, const structure&) {}

  // What level 0 must hold at the end of a structure's life. stable-contains:
  // the stable keys, plus whatever the writers left of the other keys (read
  // from the structure itself: the oracle knows only the stable ones).
  static stress::structure_verdict judge(const structure& s, const stress::options&, const stress::params& p,
                                         const std::vector<stress::team_state>& states, stress::config_result&, double) {
    std::vector<std::pair<key_type, value_type>> expected;
    if (p.sh == stress::shape::stable_contains) {
      for (std::uint32_t i = 0; i < stress::stable_count(p); ++i) {
        expected.emplace_back(stress::stable_key(p, i), stress::value_of(stress::stable_key(p, i)));
      }
      for (const auto& kv : level_entries(s.s.view(), 0)) {
        if (kv.first <= p.range && !stress::is_stable(p, kv.first)) expected.emplace_back(kv.first, stress::value_of(kv.first));
      }
    } else {
      expected = stress::owned_present(p, states);
    }
    std::sort(expected.begin(), expected.end());
    stress::structure_verdict v;
    v.problems = stress::judge_structure(take_snapshot(s.s.view()), expected);
    v.violated = !v.problems.empty();
    return v;
  }
};

template <int N, bool Mutable>
stress::config_result run_variant(const stress::options& o, std::uint32_t range, const stress::progress_fn& progress,
                                  const stress::fatal_fn& fatal) {
  return with_variant(gfsl_subject::variant_of(o.choice), [&](auto v) {
    return stress::run_cpu_stress<gfsl_stress_policy<N, Mutable, decltype(v)::value>>(o, range, progress, fatal);
  });
}

}  // namespace

}  // namespace gfsl

namespace gfsl::stress {

template <>
config_result run_cpu_subject<subject_kind::gfsl>(const options& o, int chunk, std::uint32_t range, const progress_fn& progress,
                                                  const fatal_fn& fatal) {
  const bool mutated = o.choice.mutated();
  if (chunk == 16) return mutated ? run_variant<16, true>(o, range, progress, fatal) : run_variant<16, false>(o, range, progress, fatal);
  return mutated ? run_variant<32, true>(o, range, progress, fatal) : run_variant<32, false>(o, range, progress, fatal);
}

}  // namespace gfsl::stress
