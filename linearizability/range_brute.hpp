// The plainest checker of ordered-map histories (range_model.hpp), for tests
// on tiny ones: every order of every subset of the operations that holds all
// completed ones, against a whole std::map (ranges and snapshots included),
// built one operation at a time and abandoned as soon as an operation is
// placed after one that was called after it returned, or answers otherwise
// than the map. Only a memo of dead ends (placed set, state): no reductions.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "linearizability/range_model.hpp"

namespace gfsl::lin::ranges {

// At most 64 records.
inline bool brute_force_range_linearizable(const range_history& h) {
  using map = std::map<key_type, value_type>;
  const std::size_t n = h.ops.size();
  std::vector<bool> skip(n, false);  // pending reads: they change nothing and say nothing
  std::uint64_t must = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const range_record& r = h.ops[i];
    const bool read = r.op == range_op::find || r.op == range_op::range || r.op == range_op::snapshot;
    if (r.pending() && read) skip[i] = true;
    if (!r.pending()) must |= std::uint64_t{1} << i;
  }
  std::set<std::pair<std::uint64_t, std::string>> dead;
  auto encode = [](const map& m, const std::map<std::uint64_t, map>& snaps) {
    std::string s;
    for (const auto& kv : m) s += std::to_string(kv.first) + ":" + std::to_string(kv.second) + ",";
    for (const auto& [hd, sm] : snaps) {
      s += "|" + std::to_string(hd) + "=";
      for (const auto& kv : sm) s += std::to_string(kv.first) + ":" + std::to_string(kv.second) + ",";
    }
    return s;
  };
  // Applies op i to (m, snaps); false when its answer differs.
  auto step = [&](std::size_t i, map& m, std::map<std::uint64_t, map>& snaps) {
    const range_record& r = h.ops[i];
    const bool done = !r.pending();
    const map& seen = r.handle != no_handle && r.op != range_op::snapshot ? snaps.at(r.handle) : m;
    switch (r.op) {
      case range_op::insert: {
        const bool absent = m.find(r.key) == m.end();
        if (done && r.ok != absent) return false;
        if (absent) m[r.key] = r.value;
        return true;
      }
      case range_op::upsert: {
        const bool absent = m.find(r.key) == m.end();
        if (done && r.ok_known && r.ok != absent) return false;
        m[r.key] = r.value;
        return true;
      }
      case range_op::erase: {
        auto it = m.find(r.key);
        const bool present = it != m.end();
        if (done && r.ok != present) return false;
        if (done && present && r.value_known && it->second != r.value) return false;
        if (present) m.erase(it);
        return true;
      }
      case range_op::find: {
        auto it = seen.find(r.key);
        const bool present = it != seen.end();
        if (r.ok != present) return false;
        return !present || it->second == r.value;
      }
      case range_op::range: {
        std::uint32_t p = 0;
        for (auto it = seen.lower_bound(r.key); it != seen.end() && it->first < r.hi; ++it, ++p) {
          if (p >= r.pairs_count || h.pairs[r.pairs_from + p].first != it->first || h.pairs[r.pairs_from + p].second != it->second) return false;
        }
        return p == r.pairs_count;
      }
      case range_op::snapshot: snaps[r.handle] = m; return true;
    }
    return false;
  };
  std::uint64_t snapshot_of_handle_mask = 0;
  (void)snapshot_of_handle_mask;
  struct rec {
    static bool go(const range_history& h, const std::vector<bool>& skip, std::uint64_t must, std::uint64_t placed, const map& m,
                   const std::map<std::uint64_t, map>& snaps, std::set<std::pair<std::uint64_t, std::string>>& dead,
                   const decltype(encode)& enc, const decltype(step)& st) {
      if ((placed & must) == must) return true;
      const std::pair<std::uint64_t, std::string> key{placed, enc(m, snaps)};
      if (dead.count(key)) return false;
      const std::size_t n = h.ops.size();
      for (std::size_t i = 0; i < n; ++i) {
        if (skip[i] || (placed >> i & 1)) continue;
        const range_record& r = h.ops[i];
        const std::uint64_t ret_i = r.ret;  // an error: before its return, or never
        bool valid = true;
        for (std::size_t j = 0; j < n && valid; ++j) {
          if (placed >> j & 1) valid = h.ops[j].call <= ret_i;
          // An unplaced completed operation that returned before i was called goes first.
          else if (j != i && (must >> j & 1) && h.ops[j].ret < r.call) valid = false;
        }
        if (!valid) continue;
        if (r.handle != no_handle && r.op != range_op::snapshot && !snaps.count(r.handle)) continue;
        map m2 = m;
        std::map<std::uint64_t, map> s2 = snaps;
        if (!st(i, m2, s2)) continue;
        if (go(h, skip, must, placed | (std::uint64_t{1} << i), m2, s2, dead, enc, st)) return true;
      }
      dead.insert(key);
      return false;
    }
  };
  return rec::go(h, skip, must, 0, map{}, {}, dead, encode, step);
}

}  // namespace gfsl::lin::ranges
