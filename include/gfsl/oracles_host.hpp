// gfsl/oracles_host.hpp: the host side of gfsl/oracles.cuh, plain C++ (no
// CUDA): the oracles' configuration, the violation records, the summary
// and its verdict, the final-state accounting and the report. oracles.cuh
// includes it; a host program (a test of the accounting, a reader of a
// summary) may include it alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#define GFSL_ORACLES_HD __host__ __device__
#else
#define GFSL_ORACLES_HD
#endif

namespace gfsl::oracles {

enum class kind : std::uint8_t { stable_keys = 0, owned_keys = 1, publication = 2 };
enum class phase : std::uint8_t { prefill = 0, run = 1, final_state = 2 };
// The operation a violation names; final_state is the host's accounting.
enum class op : std::uint8_t { insert = 0, erase = 1, find = 2, final_state = 3 };

inline const char* kind_name(kind k) {
  return k == kind::stable_keys ? "stable-keys" : k == kind::owned_keys ? "owned-keys" : "publication";
}
inline const char* op_name(op o) {
  return o == op::insert ? "insert" : o == op::erase ? "erase" : o == op::find ? "find" : "final-state";
}

// The value stored with key k: a function of k, so that a reader knows it;
// never ~0u (a common "erased" marker).
GFSL_ORACLES_HD constexpr unsigned value_of(unsigned k) { return ((k * 2654435761u) ^ 0x5BD1E995u) & 0x7FFFFFFFu; }

// What your insert does with a key that is already in (docs/YOUR-STRUCTURE.md,
// "Insert semantics"):
// - if_absent (the default): nothing, and it answers false; true iff it
//   inserted. Every insert's answer is judged where it is known.
// - or_assign: it assigns (an insert-or-assign, a B-tree's insert); the
//   key is in afterwards whatever it answered, and its answer is never
//   judged. The accounting counts every insert.
// - multiset: it adds one more occurrence (a multiset's or multimap's
//   insert); it always answers true (return true from a callable whose
//   insert returns nothing), an erase removes one occurrence, a find is
//   true while one is in.
enum class insert_kind : std::uint8_t { if_absent = 0, or_assign = 1, multiset = 2 };
inline const char* insert_kind_name(insert_kind m) {
  return m == insert_kind::or_assign ? "insert-or-assign" : m == insert_kind::multiset ? "multiset" : "insert-if-absent";
}

struct config {
  kind oracle = kind::owned_keys;
  insert_kind insert = insert_kind::if_absent;  // your insert's semantics
  std::uint32_t tiles = 0;        // tiles in your launch (tiles past it return at once)
  std::uint32_t base = 1;         // the smallest key used
  // stable_keys: keys base .. base + range - 1, stable ones base + i * stride.
  std::uint32_t range = 1024;
  std::uint32_t stride = 2;
  std::uint32_t writer_every = 4;  // stable_keys: tile t writes iff t % writer_every == 0
  // owned_keys: keys a tile owns (at most 32), and the shared keys.
  std::uint32_t per_tile = 8;
  std::uint32_t churn = 0;
  std::uint64_t ops_per_tile = 1024;  // the run phase's operations a tile (publication: rounds trips of a pair)
  double seconds = 0;                 // and at most this long (0: no time limit)
  double wait_seconds = 1.0;          // publication: a flag not seen this long ends the pair (counted, not a violation)
  // A launch of your kernel not finished this long after the harness
  // started waiting for it (the run phase: `seconds` longer) is reported
  // as a hang, and the round fails (harness::round returns false). 0: wait
  // for ever.
  double deadline_seconds = 60;
  std::uint32_t reports = 8;          // violations recorded in full (the others counted)
  std::uint64_t seed = 1;
};

// What a find read, where your find callable says (its optional fifth
// parameter, `seen&`): up to 8 words of the node or bucket it answered from,
// as it read them. The oracle keeps lane 0's copy; fill it in every lane, or
// at least in lane 0.
struct seen {
  unsigned long long words[8];
  std::uint32_t count = 0;  // words filled (at most 8)
};

// One violation: who, what, the answer expected and given, when, and what
// the failing find read (when its callable reports it).
struct violation {
  std::uint32_t tile = 0;  // ~0u: the host's final-state accounting
  std::uint32_t key = 0;
  std::uint8_t oracle = 0;    // kind
  std::uint8_t operation = 0; // op
  std::uint8_t expected = 0;  // final_state: the key's inserts - erases (0 or 1 expected)
  std::uint8_t given = 0;     // final_state: whether the final find found it
  std::uint32_t value_expected = 0;  // final_state: successful inserts
  std::uint32_t value_given = 0;     // final_state: successful erases
  std::uint32_t sm = 0;
  std::uint64_t time_ns = 0;  // since the first run phase began
  seen read;                  // find: the words the failing read saw (count 0: not reported)
  std::uint8_t insert = 0;    // final_state: the insert_kind it was judged under
};

// Device counters, one word each (the host sums them).
enum counter : int {
  c_judged = 0,   // answers an oracle knew
  c_violations,
  c_missing,      // false where true was known (a key missing)
  c_extra,        // true where false was known (a key present twice, or inserted over itself)
  c_value,        // found, with another value
  c_inserts,
  c_erases,
  c_finds,
  c_cross_sm,     // publication: flags acquired on another SM than the producer's
  c_timeouts,     // publication: pairs ended by a flag not seen in time
  c_count
};

// The keys a round of this configuration uses (base .. base + span - 1).
inline std::uint32_t span_of(const config& c) {
  switch (c.oracle) {
    case kind::stable_keys: return c.range;
    case kind::owned_keys: return c.tiles * c.per_tile + c.churn;
    case kind::publication: return c.tiles / 2;
  }
  return 0;
}

// What the final phase did with a key (launch::found): no find ran on it,
// or one ran and missed it, or found it. Only a key a find ran on is judged
// by the accounting.
enum found_state : unsigned { not_looked_up = 0, looked_up_absent = 1, looked_up_present = 2 };

// What a harness measured, summed over its rounds.
struct summary {
  unsigned long long n[c_count] = {};
  std::uint64_t accounted_keys = 0;   // keys judged by the final-state accounting (a final find ran on them)
  std::uint64_t unlooked_keys = 0;    // keys of the span no final find ran on: not judged
  std::uint64_t accounting_violations = 0;
  std::uint32_t rounds = 0;
  double seconds = 0;                 // run phases, device time
  double first_s = -1;                // the first violation (online or accounting), since the first run phase began
  std::vector<violation> records;
  // A launch that missed config::deadline_seconds: "round R, the P phase:
  // ..." (empty: none). The device's counters are then out of reach (every
  // copy would wait for the kernel): the figures are those of the rounds
  // before it.
  std::string hang;

  unsigned long long judged() const { return n[c_judged] + accounted_keys; }
  unsigned long long violations() const { return n[c_violations] + accounting_violations; }
  unsigned long long operations() const { return n[c_inserts] + n[c_erases] + n[c_finds]; }
  double per_1e9_judged() const { return judged() ? 1e9 * static_cast<double>(violations()) / static_cast<double>(judged()) : 0; }
  // A run that judged nothing (no answer, no key: a kernel that never
  // called run(), one compiled to an empty body, rounds never run) says
  // nothing about the structure: refused, never clean.
  bool refused() const { return judged() == 0; }
  bool hung() const { return !hang.empty(); }
  bool clean() const { return !hung() && !refused() && violations() == 0; }
};

// Whether a key's counts fit its insert semantics, the key absent at the
// start: `inserted` successful inserts (or_assign: every insert), `erased`
// successful erases, `present` what the final find answered.
// - if_absent: inserts and erases alternated: inserted - erased is 0 or 1,
//   and 1 exactly when present.
// - or_assign: every successful erase follows an insert since the erase
//   before it, so erased <= inserted; present: an insert came after the
//   last successful erase (inserted > erased); absent after any insert: an
//   erase succeeded (erased >= 1).
// - multiset: inserted - erased occurrences are left, never fewer than 0,
//   and present exactly when some are.
inline bool accounting_holds(insert_kind m, unsigned inserted, unsigned erased, bool present) {
  const long long d = static_cast<long long>(inserted) - erased;
  switch (m) {
    case insert_kind::if_absent: return (d == 0 || d == 1) && (d == 1) == present;
    case insert_kind::or_assign: return d >= 0 && (present ? d >= 1 : (inserted == 0 || erased >= 1));
    case insert_kind::multiset: return d >= 0 && (d > 0) == present;
  }
  return false;
}

// Final-state accounting of one round (accounting_holds, key by key).
// `found[i]` is a found_state: a key no final find ran on is counted as not
// looked up, not judged. Adds to s; `reports` bounds s.records.
inline void account_round(const config& c, std::uint32_t span, const unsigned* inserted, const unsigned* erased, const unsigned* found,
                          summary& s) {
  for (std::uint32_t i = 0; i < span; ++i) {
    if (found[i] == not_looked_up) {
      ++s.unlooked_keys;
      continue;
    }
    ++s.accounted_keys;
    const bool present = found[i] == looked_up_present;
    const long long d = static_cast<long long>(inserted[i]) - erased[i];
    if (accounting_holds(c.insert, inserted[i], erased[i], present)) continue;
    ++s.accounting_violations;
    if (s.first_s < 0) s.first_s = s.seconds;
    if (s.records.size() < c.reports) {
      violation v;
      v.tile = ~0u;
      v.key = c.base + i;
      v.oracle = static_cast<std::uint8_t>(c.oracle);
      v.operation = static_cast<std::uint8_t>(op::final_state);
      v.expected = d == 1;
      v.insert = static_cast<std::uint8_t>(c.insert);
      v.given = present;
      v.value_expected = inserted[i];
      v.value_given = erased[i];
      v.time_ns = static_cast<std::uint64_t>(s.seconds * 1e9);
      s.records.push_back(v);
    }
  }
}

namespace detail {
inline std::string fmt(double v, const char* f) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
}  // namespace detail

// One violation in words.
inline std::string describe(const violation& v) {
  using detail::fmt;
  std::string s;
  if (static_cast<op>(v.operation) == op::final_state) {
    const bool every = static_cast<insert_kind>(v.insert) == insert_kind::or_assign;
    s = "round end, at " + fmt(v.time_ns / 1e9, "%.6f") + " s: key " + std::to_string(v.key) + ": " + std::to_string(v.value_expected) +
        (every ? " inserts, " : " successful inserts, ") + std::to_string(v.value_given) + " successful erases, final find " +
        (v.given ? "true" : "false");
    if (v.insert != 0) s += std::string(" (") + insert_kind_name(static_cast<insert_kind>(v.insert)) + ")";
    return s;
  }
  s = "tile " + std::to_string(v.tile) + " (SM " + std::to_string(v.sm) + "), at " + fmt(v.time_ns / 1e9, "%.6f") + " s: " +
      (v.given ? "true " : "false ") + op_name(static_cast<op>(v.operation)) + "(" + std::to_string(v.key) + ")";
  if (v.given && v.expected && static_cast<op>(v.operation) == op::find) s += " value " + std::to_string(v.value_given);
  s += " (expected " + std::string(v.expected ? "true" : "false");
  if (v.expected && static_cast<op>(v.operation) == op::find) s += ", value " + std::to_string(v.value_expected);
  s += ")";
  if (v.read.count > 0 && v.read.count <= 8) {
    s += "; the read saw";
    char w[24];
    for (std::uint32_t i = 0; i < v.read.count; ++i) {
      std::snprintf(w, sizeof w, " %016llx", v.read.words[i]);
      s += w;
    }
  }
  return s;
}

// Waiting for a launch against a host clock: `done()` polled (true: the
// launch finished; it may throw), `now()` in seconds, `pause(i)` between
// polls i and i + 1. deadline: `seconds` passed first (0: none).
enum class wait_result : std::uint8_t { done, deadline };
template <class Done, class Now, class Pause>
wait_result wait_for(Done&& done, Now&& now, Pause&& pause, double seconds) {
  const double start = now();
  for (std::uint64_t i = 0;; ++i) {
    if (done()) return wait_result::done;
    if (seconds > 0 && now() - start >= seconds) return wait_result::deadline;
    pause(i);
  }
}

inline const char* phase_name(phase p) { return p == phase::prefill ? "prefill" : p == phase::run ? "run" : "final"; }

// The hang line of a launch that missed its deadline.
inline std::string hang_text(std::uint32_t round, phase p, double waited) {
  return "round " + std::to_string(round + 1) + ", the " + phase_name(p) + " phase: your kernel did not finish within " +
         detail::fmt(waited, "%.1f") +
         " s (config::deadline_seconds); a running kernel cannot be stopped from the host: report, then end the process "
         "(std::_Exit: freeing device memory would wait for the kernel)";
}

// The verdict line's words: a refused run (nothing judged) is not clean.
inline const char* verdict_text(const summary& s) {
  if (s.hung()) return "HUNG: a launch did not finish (the hang line above)";
  if (s.refused())
    return "REFUSED: nothing was judged (0 answers, 0 keys looked up by a final find); a kernel that never calls "
           "gfsl::oracles::run, or one compiled to an empty body, proves nothing";
  return s.violations() ? "VIOLATIONS FOUND" : "no violation";
}

// The summary, in the words of `gfsl stress`. `device`: the device's name.
inline void print_summary(std::FILE* out, const char* subject, const char* device, const config& c, std::uint32_t span, const summary& s) {
  using detail::fmt;
  std::fprintf(out, "configuration: subject %s, oracle %s, device %s, %u tiles, keys %u..%u, %u rounds", subject, kind_name(c.oracle),
               device, c.tiles, c.base, c.base + span - 1, s.rounds);
  if (c.oracle == kind::stable_keys)
    std::fprintf(out, " (stable every %u of %u keys, 1 tile in %u writing)", c.stride, c.range, c.writer_every);
  if (c.oracle == kind::owned_keys) std::fprintf(out, " (%u keys a tile, %u shared)", c.per_tile, c.churn);
  if (c.insert != insert_kind::if_absent) std::fprintf(out, ", inserts %s", insert_kind_name(c.insert));
  std::fprintf(out, "\n");
  std::fprintf(out, "  %llu operations in %.3f s of running tiles (%.2f M/s): %llu finds, %llu inserts, %llu erases\n", s.operations(),
               s.seconds, s.seconds > 0 ? s.operations() / s.seconds / 1e6 : 0.0, s.n[c_finds], s.n[c_inserts], s.n[c_erases]);
  auto rate = [&](unsigned long long v) { return s.judged() ? 1e9 * static_cast<double>(v) / s.judged() : 0.0; };
  std::fprintf(out,
               "  answers judged: %llu; false where true was known (a key missing) %llu, %.4g per 10^9; true where false was "
               "known (a key present twice or inserted over itself) %llu, %.4g per 10^9; another value %llu\n",
               s.n[c_judged], s.n[c_missing], rate(s.n[c_missing]), s.n[c_extra], rate(s.n[c_extra]), s.n[c_value]);
  std::fprintf(out, "  final-state accounting: %llu keys judged, %llu whose inserts and erases did not alternate",
               static_cast<unsigned long long>(s.accounted_keys), static_cast<unsigned long long>(s.accounting_violations));
  if (s.unlooked_keys)
    std::fprintf(out, "; %llu keys no final find ran on (not judged)", static_cast<unsigned long long>(s.unlooked_keys));
  std::fprintf(out, "\n");
  if (c.oracle == kind::publication)
    std::fprintf(out, "  publication: %llu flags acquired on another SM than their producer's, %llu pairs ended waiting\n",
                 s.n[c_cross_sm], s.n[c_timeouts]);
  std::fprintf(out, "  violations: %llu (%.4g per 10^9 judged answers), %s\n", s.violations(), s.per_1e9_judged(),
               s.first_s < 0 ? "none" : ("first at " + fmt(s.first_s, "%.6f") + " s").c_str());
  for (std::size_t i = 0; i < s.records.size(); ++i) std::fprintf(out, "  violation %zu: %s\n", i + 1, describe(s.records[i]).c_str());
  if (s.violations() > s.records.size())
    std::fprintf(out, "  (%llu more violations counted, not shown)\n", s.violations() - s.records.size());
  if (s.hung()) std::fprintf(out, "  hang: %s\n", s.hang.c_str());
  std::fprintf(out, "  verdict: %s\n", verdict_text(s));
}

}  // namespace gfsl::oracles
