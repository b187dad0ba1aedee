// The plainest possible checker, for tests on tiny histories: every order of
// every subset of the operations that contains all completed ones, against
// the whole map (no split by key), built one operation at a time and abandoned
// as soon as an operation is placed after one that was called after it
// returned, or answers differently from the model. No memo, no reductions:
// nothing to get wrong but the definition.
#pragma once

#include <cstdint>
#include <vector>

#include "model/history.hpp"
#include "model/sequential_map.hpp"

namespace gfsl::lin {

// `value_unrecorded[i]`: record i is a delete whose removed value was not
// recorded (empty: all recorded). At most 64 records.
inline bool brute_force_linearizable(const std::vector<model::op_record>& h, const std::vector<bool>& value_unrecorded = {}) {
  const std::size_t n = h.size();
  std::size_t must = 0;
  for (const auto& r : h) must += r.pending() ? 0 : 1;
  std::vector<std::size_t> seq;
  std::vector<bool> used(n, false);

  auto answers = [&](std::size_t i, const model::outcome& got) {
    const auto& r = h[i];
    if (r.pending()) return true;
    if (got.ok != r.ok) return false;
    if (r.op.kind == op_kind::insert || !got.ok) return true;
    if (i < value_unrecorded.size() && value_unrecorded[i]) return true;
    return got.value == r.value;
  };
  // Depth-first over sequences, copying the map at each step (histories here
  // have a handful of operations).
  struct rec {
    static bool go(const std::vector<model::op_record>& h, std::vector<std::size_t>& seq, std::vector<bool>& used,
                   std::size_t placed_must, std::size_t must, const model::sequential_map& m,
                   const decltype(answers)& ans) {
      if (placed_must == must) return true;
      for (std::size_t i = 0; i < h.size(); ++i) {
        if (used[i]) continue;
        bool valid = true;
        for (std::size_t j : seq) valid = valid && h[j].call <= h[i].ret;
        if (!valid) continue;
        model::sequential_map next = m;
        if (!ans(i, next.apply(h[i].op))) continue;
        used[i] = true;
        seq.push_back(i);
        const bool ok = go(h, seq, used, placed_must + (h[i].pending() ? 0 : 1), must, next, ans);
        seq.pop_back();
        used[i] = false;
        if (ok) return true;
      }
      return false;
    }
  };
  return rec::go(h, seq, used, 0, must, model::sequential_map{}, answers);
}

}  // namespace gfsl::lin
