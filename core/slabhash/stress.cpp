// SlabHash under gfsl stress on the CPU backends: its host stress policy for
// the generic runner (stress/cpu_stress.hpp), per variant and with or
// without the seeded bug. As on the GPU (device_subject.cuh), a structure's
// life is one round of at most --ops-per-team operations a team, and the
// round oracle (stress/slab_oracle.hpp) scans the table at its end.
#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/slabhash/algorithm.hpp"
#include "core/slabhash/layout.hpp"
#include "core/slabhash/subject.hpp"
#include "core/slabhash/invariants.hpp"
#include "stress/cpu_stress.hpp"
#include "stress/slab_oracle.hpp"

namespace gfsl {

namespace {

template <slabhash::slab_variant V, bool Mutable>
struct slabhash_stress_policy {
  static constexpr int width = slabhash::slab_words;
  static constexpr const char* pool_unit = "slabs";
  static constexpr bool batches = false, one_kind_per_batch = false;
  // Rounds bounded in operations on every backend: `fixed` never reuses a
  // deleted pair, so its chains grow with every insert, and a long life
  // would measure chain walks, not races.
  static constexpr bool rounds = true;
  static constexpr bool judges_exhausted = true;  // a full pool fails inserts whole: the table is still judged

  template <class Team>
  using algorithm = slabhash::algorithm<Team, V, Mutable>;

  static slabhash::params table_params(const stress::options& o, const stress::params& p, std::uint32_t pool) {
    slabhash::params sp;
    sp.buckets = o.buckets ? o.buckets : stress::slabhash_default_buckets(p.teams);
    sp.pool_slabs = pool;
    sp.hash_seed = o.seed;  // as on the GPU
    return sp;
  }

  struct structure {
    slabhash::params sp;
    std::size_t count;
    struct aligned_delete {
      void operator()(std::uint64_t* w) const { ::operator delete[](w, std::align_val_t{256}); }
    };
    std::unique_ptr<std::uint64_t[], aligned_delete> words;
    structure(const stress::options& o, const stress::params& p, std::uint32_t pool)
        : sp(table_params(o, p, pool)), count(slabhash::word_count(sp)) {
      if (sp.pool_slabs < sp.buckets) {
        throw std::invalid_argument("--pool " + std::to_string(sp.pool_slabs) + ": fewer slabs than buckets");
      }
      words.reset(static_cast<std::uint64_t*>(::operator new[](count * sizeof(std::uint64_t), std::align_val_t{256})));
      for (std::size_t i = 0; i < count; ++i) words[i] = slabhash::initial_word(i, sp);
    }
  };

  // Room for every key at once and for every operation of a round being an
  // insert that takes a fresh pair, plus a partly filled slab per bucket.
  static std::uint32_t pool(const stress::options& o, const stress::params& p, bool) {
    const std::uint64_t buckets = o.buckets ? o.buckets : stress::slabhash_default_buckets(p.teams);
    const std::uint64_t want = 2 * buckets + (static_cast<std::uint64_t>(p.range) + p.churn + p.teams * o.ops_per_team) /
                                                 slabhash::pairs_per_slab + 1024;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(want, 1u << 20));
  }
  static std::uint64_t* words(const structure& s) { return s.words.get(); }
  static std::size_t word_count(const structure& s) { return s.count; }
  // Slab s starts at header_words + 16 s: the team wrapper's "chunk" is the slab.
  static const std::uint64_t* pool_start(const structure& s) { return s.words.get() + slabhash::header_words; }
  static const std::uint64_t* error_word(const structure& s) { return s.words.get() + slabhash::error_word_index; }

  static bool prefill(structure& s, const stress::options&, std::uint64_t seed, const std::vector<std::pair<key_type, value_type>>& keys,
                      std::string& error) {
    host_team<width> filler(0, seed ^ 0xF1F1F1F1ull, s.words.get(), nullptr, false, s.count);
    slabhash::algorithm<host_team<width>, V, false> a(filler, s.words.get(), s.sp);
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
    return std::make_unique<algorithm<Team>>(team, s.words.get(), s.sp, slabhash::mutant_of(o.choice));
  }

  static void describe(stress::config_result& res, const stress::options& o, const stress::params& p) {
    res.subject = "slabhash";
    res.variant = slabhash::variant_name(V);
    res.mutant = mutant_label(o.subject, o.choice);
    res.mutant_role = o.choice.mutated() ? "seeded bug" : "";
    res.buckets = o.buckets ? o.buckets : stress::slabhash_default_buckets(p.teams);
    res.churn = p.churn;
    res.ops_per_round = o.ops_per_team;
    res.invariants_checked = std::to_string(slabhash::slab_invariants().size()) + " slab invariants, the expected keys";
  }
  static void on_violation(stress::violation_record& r, const stress::step& sp, const structure& s) {
    r.subject = static_cast<std::uint8_t>(subject_kind::slabhash);
    r.bucket = slabhash::bucket_of(sp.key, s.sp);
  }

  // The header and the slabs handed out, as the GPU runner copies them back.
  static stress::structure_verdict judge(const structure& s, const stress::options&, const stress::params& p,
                                         const std::vector<stress::team_state>& states, stress::config_result& res, double at) {
    const std::size_t n = std::min(s.count, slabhash::handed_out_words(s.words[slabhash::alloc_counter_word], s.sp));
    return stress::judge_slab_structure(s.words.get(), n, s.sp, V, p, states, res, at);
  }
};

template <slabhash::slab_variant V>
stress::config_result run_variant(const stress::options& o, std::uint32_t range, const stress::progress_fn& progress,
                                  const stress::fatal_fn& fatal) {
  return o.choice.mutated() ? stress::run_cpu_stress<slabhash_stress_policy<V, true>>(o, range, progress, fatal)
                            : stress::run_cpu_stress<slabhash_stress_policy<V, false>>(o, range, progress, fatal);
}

}  // namespace

}  // namespace gfsl

namespace gfsl::stress {

template <>
config_result run_cpu_subject<subject_kind::slabhash>(const options& o, int, std::uint32_t range, const progress_fn& progress,
                                                      const fatal_fn& fatal) {
  return slabhash::variant_of(o.choice) == slabhash::slab_variant::published
             ? run_variant<slabhash::slab_variant::published>(o, range, progress, fatal)
             : run_variant<slabhash::slab_variant::fixed>(o, range, progress, fatal);
}

}  // namespace gfsl::stress
