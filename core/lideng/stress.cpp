// Li and Deng's skiplist under gfsl stress on the CPU backends: its host
// stress policy for the generic runner (stress/cpu_stress.hpp).
//
// Its operations come in batches (README.md): operation j of every team is
// one batch, every team waits at the batch's barriers for all the others. So
// every team makes the same number of operations, and all stop after the same
// one (the runner's `batches`), and under `fixed` and `published` operation j
// of every team is of one kind, the batch's, drawn from the structure's seed
// (`one_kind_per_batch`, stress::lockstep_step): never a mixed batch. The
// `mixed` variant runs `fixed` with each team drawing its own kind, the mixed
// batches the paper does not allow: it must be reported failing. A
// structure's life is one round of --ops-per-team operations a team (nodes are
// never reused); its structure oracle is the list's snapshot invariants and
// level 0 against what the shape implies.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/lideng/algorithm.hpp"
#include "core/lideng/invariants.hpp"
#include "core/lideng/layout.hpp"
#include "core/lideng/subject.hpp"
#include "invariants/snapshot.hpp"
#include "stress/cpu_stress.hpp"

namespace gfsl {

namespace {

// The set operations gfsl stress calls, each one team's share of a batch.
template <class Team, lideng::lideng_variant V, bool Mutable>
class lideng_stress_ops {
 public:
  lideng_stress_ops(Team& team, std::uint64_t* words, const lideng::params& p, lideng::lideng_mutant m) : a_(team, words, p, m) {}
  op_result insert(key_type k, value_type v) { return a_.apply(op_kind::insert, k, v); }
  op_result remove(key_type k) { return a_.apply(op_kind::remove, k, 0); }
  op_result contains(key_type k) { return a_.apply(op_kind::contains, k, 0); }

 private:
  lideng::algorithm<Team, V, Mutable> a_;
};

// "node 5 (key 12, height 2): forward[0..1] 7 1": a node as a failing read saw it.
std::string describe_node(const stress::violation_record& v) {
  if (v.chunk == no_chunk) return "no node read";
  const key_type k = entry_key(v.words[lideng::entry_word]);
  const std::uint64_t h = v.words[lideng::height_word];
  std::string out = "node " + std::to_string(v.chunk) + " (key " +
                    (k == lideng::head_key ? std::string("head") : k == lideng::tail_key ? std::string("tail") : std::to_string(k)) +
                    ", height " + std::to_string(h) + ")";
  if (h >= 1 && h <= static_cast<std::uint64_t>(lideng::max_levels)) {
    out += ": forward[0.." + std::to_string(h - 1) + "]";
    for (std::uint64_t l = 0; l < h; ++l) {
      const std::uint64_t n = v.words[lideng::forward_word0 + l];
      out += " " + (n == lideng::no_node ? std::string("none") : std::to_string(n));
    }
  }
  return out;
}

template <lideng::lideng_variant V, bool Mutable, bool OneKindPerBatch>
struct lideng_stress_policy {
  static constexpr int width = lideng::node_words;
  static constexpr const char* pool_unit = "nodes";
  static constexpr bool batches = true, one_kind_per_batch = OneKindPerBatch;
  static constexpr bool rounds = true;            // nodes are never reused: a life bounded in operations
  static constexpr bool judges_exhausted = true;  // inserts past the pool fail whole; the list stays well formed

  template <class Team>
  using algorithm = lideng_stress_ops<Team, V, Mutable>;

  struct structure {
    lideng::params lp;
    std::size_t count;
    struct aligned_delete {
      void operator()(std::uint64_t* w) const { ::operator delete[](w, std::align_val_t{256}); }
    };
    std::unique_ptr<std::uint64_t[], aligned_delete> words;
    structure(const stress::options& o, const stress::params& p, std::uint32_t pool) {
      lp.levels = o.levels ? static_cast<int>(o.levels) : static_cast<int>(lideng::default_levels);
      lp.batch = p.teams;
      lp.pool_nodes = pool;
      if (const std::string bad = lideng::validate(lp); !bad.empty()) throw std::invalid_argument("lideng: " + bad);
      count = lideng::word_count(lp);
      words.reset(static_cast<std::uint64_t*>(::operator new[](count * sizeof(std::uint64_t), std::align_val_t{256})));
      for (std::size_t i = 0; i < count; ++i) words[i] = lideng::initial_word(i, lp);
    }
  };

  // A node for every prefill key and every operation of the round, each of
  // which may be an insert (a `fixed` loser of a key held twice in a batch
  // allocates its node too), plus head, tail and some room.
  static std::uint32_t pool(const stress::options& o, const stress::params& p, bool) {
    const std::uint64_t want = lideng::first_free_node + 16 + static_cast<std::uint64_t>(p.range) + p.teams * o.ops_per_team;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(want, 1u << 20));  // 128 MiB
  }
  static std::uint64_t* words(const structure& s) { return s.words.get(); }
  static std::size_t word_count(const structure& s) { return s.count; }
  // Node n starts at pool_offset + 16 n: the team wrapper's "chunk" is the node (slots are below it).
  static const std::uint64_t* pool_start(const structure& s) { return s.words.get() + lideng::pool_offset; }
  static const std::uint64_t* error_word(const structure& s) { return s.words.get() + lideng::error_word_index; }

  // One team alone: batches of one, which cross no barrier.
  static bool prefill(structure& s, const stress::options&, std::uint64_t seed, const std::vector<std::pair<key_type, value_type>>& keys,
                      std::string& error) {
    host_team<width> filler(0, seed ^ 0xF1F1F1F1ull, s.words.get(), nullptr, false, s.count);
    lideng::params one = s.lp;
    one.batch = 1;
    lideng::algorithm<host_team<width>, V, false> a(filler, s.words.get(), one);
    for (const auto& [k, v] : keys) {
      const op_result r = a.apply(op_kind::insert, k, v);
      if (r.st != status::ok || !r.ok) {
        error = "prefill insert(" + std::to_string(k) + ") " + (r.st != status::ok ? status_name(r.st) : "returned false");
        return false;
      }
    }
    return true;
  }

  template <class Team>
  static std::unique_ptr<algorithm<Team>> make(Team& team, structure& s, const stress::options& o) {
    return std::make_unique<algorithm<Team>>(team, s.words.get(), s.lp, lideng::mutant_of(o.choice));
  }

  static void describe(stress::config_result& res, const stress::options& o, const stress::params& p) {
    res.subject = "lideng";
    res.variant = variant_label(o.subject, o.choice);
    res.mutant = mutant_label(o.subject, o.choice);
    res.mutant_role = o.choice.mutated() ? "seeded bug" : "";
    res.levels = o.levels ? o.levels : lideng::default_levels;
    res.churn = p.churn;
    res.ops_per_round = o.ops_per_team;
    res.describe_line = &describe_node;
    res.invariants_checked = std::to_string(lideng::lideng_invariants().size()) + " list invariants";
  }
  static void on_violation(stress::violation_record& r, const stress::step&, const structure&) {
    r.subject = static_cast<std::uint8_t>(subject_kind::lideng);
  }

  // Level 0 must hold the keys the shape knows (stable keys; every team's
  // present owned keys), and the others it holds (the writers' churn keys,
  // the shared keys) once each, with their values.
  static stress::structure_verdict judge(const structure& s, const stress::options&, const stress::params& p,
                                         const std::vector<stress::team_state>& states, stress::config_result&, double) {
    invariants::snapshot snap;
    snap.subject = subject_kind::lideng;
    snap.chunk = width;
    snap.capacity = s.lp.pool_nodes;
    snap.buckets = static_cast<std::uint32_t>(s.lp.levels);
    snap.variant = static_cast<std::uint8_t>(V);
    snap.words.assign(s.words.get(), s.words.get() + s.count);
    std::vector<std::pair<key_type, value_type>> expected;
    if (p.sh == stress::shape::stable_contains) {
      for (std::uint32_t i = 0; i < stress::stable_count(p); ++i) {
        expected.emplace_back(stress::stable_key(p, i), stress::value_of(stress::stable_key(p, i)));
      }
    } else {
      expected = stress::owned_present(p, states);
    }
    const lideng::contents c = lideng::inspect(s.words.get(), s.count, s.lp);
    std::vector<key_type> unknown_seen;
    for (const auto& kv : c.entries) {
      const bool unknown = p.sh == stress::shape::stable_contains ? kv.first <= p.range && !stress::is_stable(p, kv.first)
                                                                   : kv.first > p.range && kv.first <= p.range + p.churn;
      if (unknown && std::find(unknown_seen.begin(), unknown_seen.end(), kv.first) == unknown_seen.end()) {
        unknown_seen.push_back(kv.first);
        expected.emplace_back(kv.first, stress::value_of(kv.first));
      }
    }
    std::sort(expected.begin(), expected.end());
    stress::structure_verdict v;
    v.problems = stress::judge_structure(snap, expected);
    v.violated = !v.problems.empty();
    return v;
  }
};

template <lideng::lideng_variant V, bool OneKind>
stress::config_result run_mutated(const stress::options& o, std::uint32_t range, const stress::progress_fn& progress,
                                  const stress::fatal_fn& fatal) {
  return o.choice.mutated() ? stress::run_cpu_stress<lideng_stress_policy<V, true, OneKind>>(o, range, progress, fatal)
                            : stress::run_cpu_stress<lideng_stress_policy<V, false, OneKind>>(o, range, progress, fatal);
}

}  // namespace

}  // namespace gfsl

namespace gfsl::stress {

template <>
config_result run_cpu_subject<subject_kind::lideng>(const options& o, int, std::uint32_t range, const progress_fn& progress,
                                                    const fatal_fn& fatal) {
  using lideng::lideng_variant;
  if (!lideng::phase_separated(o.choice)) return run_mutated<lideng_variant::fixed, false>(o, range, progress, fatal);
  return lideng::variant_of(o.choice) == lideng_variant::published
             ? run_mutated<lideng_variant::published, true>(o, range, progress, fatal)
             : run_mutated<lideng_variant::fixed, true>(o, range, progress, fatal);
}

}  // namespace gfsl::stress
