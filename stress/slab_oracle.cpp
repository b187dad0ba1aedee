#include "stress/slab_oracle.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "core/slabhash/invariants.hpp"
#include "stress/runner.hpp"
#include "stress/stress.hpp"

namespace gfsl::stress {

slab_round_verdict judge_slab_round(const std::uint64_t* words, std::size_t word_count, const slabhash::params& p,
                                    slabhash::slab_variant v, const std::vector<std::pair<key_type, value_type>>& expected,
                                    key_type unknown_lo, key_type unknown_hi, std::size_t max_lines) {
  slab_round_verdict out;
  auto line = [&](const std::string& s) {
    if (out.problems.size() < max_lines) out.problems.push_back(s);
  };
  const slabhash::slab_report rep = slabhash::check_slab_snapshot(words, word_count, p, v, true, 1u << 20);
  out.slabs_allocated = rep.slabs_allocated;
  for (const slabhash::slab_violation& x : rep.violations) {
    if (x.invariant == "unique-keys") ++out.duplicates;
    else ++out.malformed;
    if (out.problems.size() < max_lines) out.problems.push_back(x.line());
  }
  // rep.live is sorted by key; a key twice was counted above.
  std::map<key_type, value_type> present;
  for (const auto& kv : rep.live) present.emplace(kv.first, kv.second);
  std::map<key_type, value_type> want(expected.begin(), expected.end());
  for (const auto& [k, val] : want) {
    const auto it = present.find(k);
    if (it == present.end()) {
      ++out.lost;
      line("key " + std::to_string(k) + " (bucket " + std::to_string(slabhash::bucket_of(k, p)) +
           ") is missing: its insert completed and no delete of it did (a lost insert)");
    } else if (it->second != val) {
      ++out.unexpected;
      line("key " + std::to_string(k) + " holds value " + std::to_string(it->second) + ", not " + std::to_string(val));
    }
  }
  for (const auto& [k, val] : present) {
    if (want.count(k)) continue;
    if (k >= unknown_lo && k <= unknown_hi) {
      if (val != value_of(k)) {
        ++out.unexpected;
        line("key " + std::to_string(k) + " holds value " + std::to_string(val) + ", not " + std::to_string(value_of(k)));
      }
      continue;
    }
    ++out.unexpected;
    line("key " + std::to_string(k) + " (bucket " + std::to_string(slabhash::bucket_of(k, p)) +
         ") is present though its owner deleted it or never inserted it");
  }
  return out;
}

structure_verdict judge_slab_structure(const std::uint64_t* words, std::size_t word_count, const slabhash::params& sp,
                                       slabhash::slab_variant v, const params& p, const std::vector<team_state>& states,
                                       config_result& res, double at) {
  std::vector<std::pair<key_type, value_type>> expected;
  key_type unknown_lo = 1, unknown_hi = 0;
  if (p.sh == shape::stable_contains) {
    for (std::uint32_t k = 0; k < stable_count(p); ++k) expected.emplace_back(stable_key(p, k), value_of(stable_key(p, k)));
    unknown_lo = 1;
    unknown_hi = p.range;
  } else {
    expected = owned_present(p, states);
    unknown_lo = p.range + 1;
    unknown_hi = p.range + p.churn;
  }
  std::sort(expected.begin(), expected.end());
  const slab_round_verdict r = judge_slab_round(words, word_count, sp, v, expected, unknown_lo, unknown_hi);
  res.duplicates += r.duplicates;
  res.lost_keys += r.lost;
  res.unexpected_keys += r.unexpected;
  res.malformed += r.malformed;
  if (r.duplicates && res.first_duplicate_s < 0) res.first_duplicate_s = at;
  if (r.lost && res.first_lost_s < 0) res.first_lost_s = at;
  return {!r.ok(), r.problems};
}

std::string describe_slab(const std::uint64_t* words) {
  std::ostringstream s;
  for (int i = 0; i < slabhash::pairs_per_slab; ++i) {
    const key_type k = slabhash::pair_key(words[i]);
    s << (i ? " " : "");
    if (k == slabhash::empty_key) s << '.';
    else if (k == slabhash::tombstone_key) s << 'T';
    else s << k;
  }
  const std::uint32_t next = slabhash::next_of(words[slabhash::next_word]);
  s << " | next " << (next == slabhash::no_slab ? std::string("none") : std::to_string(next));
  return s.str();
}

}  // namespace gfsl::stress
