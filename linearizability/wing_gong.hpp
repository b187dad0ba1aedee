// The generic linearizability search for any sequential_model: Wing and Gong's
// depth-first search over the operations that may go next, with Lowe's
// memoisation of configurations (set of operations linearized, model state),
// as in Porcupine. It knows nothing of the object, so it serves as the
// fallback for other models and as the oracle the fast checker is tested
// against.
//
// An operation may go next when no remaining completed operation returned
// before it was called, and, if it is optional, when its end is not before a
// call already linearized. Optional operations may also never take effect:
// the search succeeds once every completed operation is linearized.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "linearizability/model.hpp"
#include "linearizability/ops.hpp"

namespace gfsl::lin {

struct search_stats {
  std::uint64_t nodes = 0;
  std::uint64_t memo_hits = 0;
};

template <sequential_model M>
verdict wing_gong_check(const std::vector<model_op<M>>& ops, const deadline& d, std::vector<std::uint32_t>* order = nullptr,
                        search_stats* stats = nullptr) {
  using state = typename M::state;
  constexpr std::uint64_t inf = std::numeric_limits<std::uint64_t>::max();
  const std::size_t n = ops.size();
  const std::size_t words = (n + 63) / 64;
  std::size_t must = 0;
  for (const auto& o : ops) must += o.optional ? 0 : 1;

  std::vector<std::uint64_t> done(words, 0);
  auto is_done = [&](std::size_t i) { return (done[i / 64] >> (i % 64)) & 1; };
  auto flip = [&](std::size_t i) { done[i / 64] ^= std::uint64_t{1} << (i % 64); };
  auto bits_hash = [&] {
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (std::uint64_t w : done) h = (h ^ w) * 0x100000001B3ull, h ^= h >> 29;
    return h;
  };
  // Configurations already entered, bucketed by the hash of the set.
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::vector<std::uint64_t>, state>>> seen;
  auto visit = [&](const state& s) {  // true when new
    auto& bucket = seen[bits_hash()];
    for (const auto& [bits, st] : bucket) {
      if (bits == done && M::equal(st, s)) return false;
    }
    bucket.emplace_back(done, s);
    return true;
  };

  struct frame {
    state s;
    std::uint32_t op;  // the operation linearized to reach this frame (unused at the root)
    std::size_t next;  // next operation to try from here
    std::size_t linearized_must;
    std::uint64_t max_call;
  };
  std::vector<frame> stack;
  stack.push_back({M::init(), 0, 0, 0, 0});
  visit(stack.back().s);
  std::uint64_t nodes = 0;
  while (!stack.empty()) {
    frame& f = stack.back();
    if (f.linearized_must == must) {
      if (order) {
        order->clear();
        for (std::size_t k = 1; k < stack.size(); ++k) order->push_back(stack[k].op);
      }
      if (stats) stats->nodes = nodes;
      return verdict::linearizable;
    }
    if ((++nodes & 4095) == 0 && d.passed()) {
      if (stats) stats->nodes = nodes;
      return verdict::unknown;
    }
    std::uint64_t m = inf;  // earliest return among remaining completed operations
    for (std::size_t i = 0; i < n; ++i) {
      if (!ops[i].optional && !is_done(i)) m = std::min(m, ops[i].ret);
    }
    bool pushed = false;
    while (f.next < n) {
      const std::size_t i = f.next++;
      const auto& o = ops[i];
      if (is_done(i) || o.call > m || (o.optional && o.ret < f.max_call)) continue;
      std::optional<state> next = M::step(f.s, o.in, o.optional ? nullptr : &o.out);
      if (!next) continue;
      flip(i);
      if (!visit(*next)) {
        flip(i);
        if (stats) ++stats->memo_hits;
        continue;
      }
      const frame child{std::move(*next), static_cast<std::uint32_t>(i), 0, f.linearized_must + (o.optional ? 0 : 1),
                        std::max(f.max_call, o.call)};
      stack.push_back(child);
      pushed = true;
      break;
    }
    if (!pushed) {
      if (stack.size() > 1) flip(stack.back().op);
      stack.pop_back();
    }
  }
  if (stats) stats->nodes = nodes;
  return verdict::not_linearizable;
}

}  // namespace gfsl::lin
