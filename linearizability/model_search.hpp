// The search `gfsl check --model upsert-map` and `--model multiset` decide a
// key with: the generic search of wing_gong.hpp made to scale with the
// history rather than with its square (linearizability/README.md, "The
// generic models' search"):
//
//   - the key's history is split at cuts (everything called so far has
//     returned) and carried across each as the set of states the model can
//     be in there (Lemma 1), so what is remembered is one segment's;
//   - inside a segment, every operation with an end (completed, or ended in
//     an error) is placed, an error's as its effect or as nothing (Lemma J0),
//     and the search looks only at the window of operations from the first
//     one not placed up to the earliest return among those left: a
//     configuration is stored as that window's bits, not the whole set;
//   - of operations with the same step function only the one returning
//     first is tried (J3), a read that holds is placed without branching
//     (J2, for models that say which operations only read), and of the
//     operations that never returned, the earliest called of each input
//     (J1), never one that changes nothing (J4).
//
// Bounded like the set checker's searches: a deadline (the check's, the
// key's), a memory budget (the memo takes at most a quarter of it and is
// forgotten when full, which is sound; the rest ends the search `unknown`).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/types.hpp"

#include "linearizability/model.hpp"
#include "linearizability/ops.hpp"

namespace gfsl::lin {

struct model_search_options {
  std::size_t memory_budget = 0;  // bytes (0: none)
  std::uint64_t node_budget = 0;  // configurations entered (0: none)
  // Steps per operation (at least 4,096 in all) that finding every end state
  // of a segment may take before it is searched together with the rest.
  std::uint64_t enumeration_steps_per_op = 64;
};

struct model_search_stats {
  std::uint64_t nodes = 0;
  std::uint64_t memo_hits = 0;
  std::uint64_t segments = 0;
  std::uint64_t memo_forgotten = 0;
  std::uint64_t doomed = 0;          // configurations R3 or R3' cut off
  std::uint64_t joined = 0;          // segments searched together with the rest (at most one)  // times the memo was emptied at its quarter of the budget
  bool out_of_memory = false;        // `unknown` because of memory_budget
};

// A model may say that an operation with this answer only reads: wherever it
// holds, it leaves the state as it was (find, count, a failed insert).
template <class M>
concept model_with_reads = requires(const typename M::input& in, const typename M::output& out) {
  { M::read_only(in, out) } -> std::same_as<bool>;
};

// Operations whose inputs and answers compare equal have the same step
// function; where the model's types cannot be compared, none is merged.
template <class M>
concept comparable_operations = requires(const typename M::input& a, const typename M::output& b) {
  { a == a } -> std::convertible_to<bool>;
  { b == b } -> std::convertible_to<bool>;
};

// A model may name values: the one an operation needs the state to hold
// (a find or erase that answered it), the one it may write, and the one a
// state holds. The search then knows when a state is the last period of
// its value (R3' below).
template <class M>
concept model_with_values = requires(const typename M::input& in, const typename M::output& out, const typename M::state& s) {
  { M::value_needed(in, out) } -> std::same_as<std::optional<value_type>>;
  { M::value_written(in) } -> std::same_as<std::optional<value_type>>;
  { M::value_of(s) } -> std::same_as<std::optional<value_type>>;
};

namespace model_search_detail {

inline std::uint64_t mix(std::uint64_t h, std::uint64_t w) {
  h = (h ^ w) * 0x100000001B3ull;
  return h ^ (h >> 29);
}

}  // namespace model_search_detail

// `ops` sorted by call stamp. Decides whether they have a linearization from
// M::init(); `unknown` only when the deadline, the node budget or the memory
// budget ended the search first.
template <sequential_model M>
verdict model_key_search(const std::vector<model_op<M>>& ops, const deadline& d, const model_search_options& opt = {},
                         model_search_stats* stats_out = nullptr) {
  using state = typename M::state;
  using model_search_detail::mix;
  model_search_stats stats;
  const std::size_t memo_budget = opt.memory_budget ? std::max<std::size_t>(1, opt.memory_budget / 4) : 0;

  struct move {
    std::uint32_t op;  // position in the segment's finite ops, or finite count + position among the open ones
    bool effect;       // an optional one: its effect (true) or nothing (false)
  };
  struct frame {
    state s;
    std::uint32_t lo = 0;         // first finite op not placed
    std::uint32_t hi = 0;         // one past the last finite op placed (0: none beyond lo)
    std::uint32_t placed = 0;     // finite ops placed
    std::uint32_t moves_from = 0, moves_to = 0, cursor = 0;  // its moves in `moves`
    std::uint32_t via = 0;        // the op placed to reach it
  };
  struct entry {
    std::uint64_t hash;
    std::uint32_t lo, off, len, next;
    state s;
  };
  constexpr std::uint32_t none = ~std::uint32_t{0};

  std::vector<state> starts{M::init()}, ends;
  std::vector<const model_op<M>*> fin, open;
  std::vector<std::uint32_t> fin_class, open_class;
  std::vector<std::uint8_t> fin_done, open_done;
  std::vector<frame> stack;
  std::vector<move> moves;
  std::vector<std::uint64_t> key, arena;
  std::vector<entry> entries;
  std::unordered_map<std::uint64_t, std::uint32_t> heads;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> best;  // (class, position in `moves`) of this frame

  auto finish = [&](verdict v) {
    if (stats_out) *stats_out = stats;
    return v;
  };
  auto memo_bytes = [&] {
    return entries.capacity() * sizeof(entry) + arena.capacity() * sizeof(std::uint64_t) +
           heads.size() * (sizeof(std::pair<const std::uint64_t, std::uint32_t>) + 2 * sizeof(void*)) +
           heads.bucket_count() * sizeof(void*);
  };
  std::size_t value_bytes = 0;  // the segment's R3' tables, roughly
  auto other_bytes = [&] {
    return value_bytes + stack.capacity() * sizeof(frame) + moves.capacity() * sizeof(move) + (starts.capacity() + ends.capacity()) * sizeof(state) +
           (fin.capacity() + open.capacity()) * (sizeof(void*) + sizeof(std::uint32_t) + 1) + ops.size() * sizeof(model_op<M>);
  };
  auto forget = [&] {
    entries.clear();
    arena.clear();
    heads.clear();
    ++stats.memo_forgotten;
  };
  // Class ids: operations with the same step function share one. Comparing
  // against every class seen would be quadratic in a segment of all-distinct
  // operations, so past 64 classes the rest get ids of their own.
  auto classify = [&](const std::vector<const model_op<M>*>& list, std::vector<std::uint32_t>& cls, bool with_answer) {
    cls.assign(list.size(), 0);
    std::vector<std::uint32_t> reps;
    std::uint32_t fresh = 0;
    for (std::uint32_t i = 0; i < list.size(); ++i) {
      std::uint32_t c = none;
      if constexpr (comparable_operations<M>) {
        for (std::uint32_t r : reps) {
          const model_op<M>& a = *list[r];
          const model_op<M>& b = *list[i];
          if (a.optional == b.optional && a.in == b.in && (a.optional || !with_answer || a.out == b.out)) {
            c = cls[r];
            break;
          }
        }
      }
      if (c == none) {
        c = fresh++;
        if (reps.size() < 64) reps.push_back(i);
      }
      cls[i] = c;
    }
  };

  // Every state a segment can end in is found by going through all of its
  // configurations, which a segment whose end is easy to reach but whose
  // configurations are many cannot afford (40 concurrent upserts of values
  // nobody reads, before a find: 2^40). Past 64 steps per operation, that
  // segment and every one after it are searched as one (Lemma 1 read
  // backwards), which stops at the first linearization found.
  bool joined = false;
  for (std::size_t a = 0; a < ops.size();) {
    // The segment [a, b): up to the next cut.
    std::size_t b = a;
    std::uint64_t last_ret = 0;
    while (b < ops.size() && (b == a || ops[b].call <= last_ret)) last_ret = std::max(last_ret, ops[b++].ret);
    if (joined) b = ops.size();
    const bool last = b == ops.size();
    const std::uint64_t nodes_before = stats.nodes;
    const std::uint64_t enumeration_budget =
        last ? 0 : std::max<std::uint64_t>(opt.enumeration_steps_per_op ? 4096 : 1, opt.enumeration_steps_per_op * (b - a));
    bool restart = false;
    ++stats.segments;
    fin.clear();
    open.clear();
    for (std::size_t i = a; i < b; ++i) (ops[i].optional && ops[i].ret == never_returned ? open : fin).push_back(&ops[i]);
    classify(fin, fin_class, true);
    classify(open, open_class, false);
    fin_done.assign(fin.size(), 0);
    open_done.assign(open.size(), 0);
    const auto nf = static_cast<std::uint32_t>(fin.size());
    // R3': for each value, the completed ops that need it (by call) and the
    // ops that may write it (finite ones as positions, open ones as nf + k).
    [[maybe_unused]] std::unordered_map<value_type, std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> by_value;
    if constexpr (model_with_values<M>) {
      for (std::uint32_t i = 0; i < nf; ++i) {
        if (!fin[i]->optional) {
          if (auto v = M::value_needed(fin[i]->in, fin[i]->out)) by_value[*v].first.push_back(i);
        }
        if (auto v = M::value_written(fin[i]->in)) by_value[*v].second.push_back(i);
      }
      for (std::uint32_t k = 0; k < open.size(); ++k) {
        if (auto v = M::value_written(open[k]->in)) by_value[*v].second.push_back(nf + static_cast<std::uint32_t>(k));
      }
      value_bytes = by_value.size() * (sizeof(value_type) + 2 * sizeof(std::vector<std::uint32_t>) + 4 * sizeof(void*)) +
                    (nf + open.size()) * 2 * sizeof(std::uint32_t);
    }
    if (heads.bucket_count() > 4096) heads = {};  // a big segment's buckets are not cleared at every small one after it
    entries.clear();
    arena.clear();
    heads.clear();
    ends.clear();
    auto add_end = [&](const state& s) {
      for (const state& e : ends) {
        if (M::equal(e, s)) return;
      }
      ends.push_back(s);
    };

    // R3, doomed states: a completed read x with ret(x) < E, E the earliest
    // call of an op that may change the state (not a completed read), goes
    // before every such op in any completion (whatever precedes x was called
    // by ret(x)), so it sees this state: if it fails here, so does every
    // completion. R3': when the state holds v and no op left may write v,
    // this is v's last period; it lasts until the last op left that needs v
    // (called at B) is placed, every completed op x with ret(x) < B goes
    // before that one, so x is placed while v holds and must hold there
    // without changing it.
    auto doomed = [&](const frame& f, std::uint32_t stop) -> bool {
      if constexpr (model_with_reads<M>) {
        std::uint64_t e = stop < nf ? fin[stop]->call : never_returned;
        for (std::uint32_t i = f.lo; i < stop; ++i) {
          if (!fin_done[i] && (fin[i]->optional || !M::read_only(fin[i]->in, fin[i]->out))) e = std::min(e, fin[i]->call);
        }
        for (std::uint32_t k = 0; k < open.size(); ++k) {
          if (!open_done[k]) e = std::min(e, open[k]->call);
        }
        for (std::uint32_t i = f.lo; i < stop && fin[i]->call < e; ++i) {
          const model_op<M>& x = *fin[i];
          if (fin_done[i] || x.optional || x.ret >= e || !M::read_only(x.in, x.out)) continue;
          if (!M::step(f.s, x.in, &x.out)) return true;
        }
      }
      if constexpr (model_with_values<M>) {
        const std::optional<value_type> v = M::value_of(f.s);
        if (!v) return false;
        const auto it = by_value.find(*v);
        if (it == by_value.end()) return false;
        for (std::uint32_t w : it->second.second) {
          if (w < nf ? !fin_done[w] : !open_done[w - nf]) return false;
        }
        const std::vector<std::uint32_t>& readers = it->second.first;
        std::uint32_t z = none;
        for (std::size_t r = readers.size(); r-- > 0;) {
          if (!fin_done[readers[r]]) {
            z = readers[r];
            break;
          }
        }
        if (z == none) return false;
        const std::uint64_t b = fin[z]->call;
        // Ops are by call: one called at B or later cannot return before it.
        // Looking at fewer of them is sound, so the scan is bounded.
        const std::uint32_t end = std::min<std::uint32_t>(nf, stop + 256);
        for (std::uint32_t i = f.lo; i < end && fin[i]->call < b; ++i) {
          const model_op<M>& x = *fin[i];
          if (fin_done[i] || x.optional || i == z || x.ret >= b) continue;
          const std::optional<state> next = M::step(f.s, x.in, &x.out);
          if (!next || !M::equal(*next, f.s)) return true;
        }
      }
      return false;
    };

    // R5, stranded reads: a move that takes the state away from v, when an
    // op left needs v and none left may write it again, leaves that op
    // nothing to hold in (`placing` counts as placed).
    [[maybe_unused]] auto strands = [&](const state& from, const state& to, std::uint32_t placing) -> bool {
      if constexpr (model_with_values<M>) {
        const std::optional<value_type> v = M::value_of(from);
        if (!v || M::value_of(to) == v) return false;
        const auto it = by_value.find(*v);
        if (it == by_value.end()) return false;
        bool needed = false;
        for (std::uint32_t r : it->second.first) needed = needed || (r != placing && !fin_done[r]);
        if (!needed) return false;
        for (std::uint32_t w : it->second.second) {
          if (w != placing && (w < nf ? !fin_done[w] : !open_done[w - nf])) return false;
        }
        return true;
      }
      return false;
    };

    // Enters the configuration on top of the stack: false when the memo
    // had it (popped again), else its moves are listed.
    auto enter = [&]() -> bool {
      frame& f = stack.back();
      while (f.lo < nf && fin_done[f.lo]) ++f.lo;
      // The memo key: the window's bits, then those of the open ops.
      key.clear();
      key.push_back(f.lo);
      const std::uint32_t hi = std::max(f.hi, f.lo);
      for (std::uint32_t i = f.lo; i < hi; i += 64) {
        std::uint64_t w = 0;
        for (std::uint32_t j = i; j < std::min(hi, i + 64); ++j) w |= std::uint64_t{fin_done[j]} << (j - i);
        key.push_back(w);
      }
      for (std::uint32_t i = 0; i < open.size(); i += 64) {
        std::uint64_t w = 0;
        for (std::uint32_t j = i; j < std::min<std::uint32_t>(static_cast<std::uint32_t>(open.size()), i + 64); ++j) {
          w |= std::uint64_t{open_done[j]} << (j - i);
        }
        key.push_back(w);
      }
      std::uint64_t h = 0xCBF29CE484222325ull;
      for (std::uint64_t w : key) h = mix(h, w);
      const auto found = heads.find(h);
      for (std::uint32_t e = found == heads.end() ? none : found->second; e != none; e = entries[e].next) {
        const entry& x = entries[e];
        if (x.len == key.size() && M::equal(x.s, f.s) && std::equal(key.begin(), key.end(), arena.begin() + x.off)) {
          ++stats.memo_hits;
          stack.pop_back();
          return false;
        }
      }
      if (memo_budget && memo_bytes() > memo_budget) forget();
      const auto off = static_cast<std::uint32_t>(arena.size());
      arena.insert(arena.end(), key.begin(), key.end());
      const auto it = heads.find(h);
      const std::uint32_t chain = it == heads.end() ? none : it->second;
      entries.push_back({h, f.lo, off, static_cast<std::uint32_t>(key.size()), chain, f.s});
      heads[h] = static_cast<std::uint32_t>(entries.size() - 1);

      // Moves. m: the earliest return among the finite ops not placed; the
      // scan stops at the first op called after it (ops are by call).
      f.moves_from = f.moves_to = f.cursor = static_cast<std::uint32_t>(moves.size());
      if (f.placed == nf) return true;
      std::uint64_t m = never_returned;
      std::uint32_t stop = f.lo;
      for (; stop < nf && fin[stop]->call <= m; ++stop) {
        if (!fin_done[stop]) m = std::min(m, fin[stop]->ret);
      }
      if (doomed(f, stop)) {
        ++stats.doomed;
        moves.resize(f.moves_from);
        return true;  // entered, and stored: it has no moves
      }
      best.clear();
      for (std::uint32_t i = f.lo; i < stop; ++i) {
        const model_op<M>& o = *fin[i];
        if (fin_done[i] || o.call > m) continue;
        if constexpr (model_with_reads<M>) {
          // J2: a read that holds now goes first, alone.
          if (!o.optional && M::read_only(o.in, o.out) && M::step(f.s, o.in, &o.out)) {
            moves.resize(f.moves_from);
            best.clear();
            moves.push_back({i, true});
            f.moves_to = static_cast<std::uint32_t>(moves.size());
            return true;
          }
        }
        // J3: of one class, the one returning first (ops are by call, so
        // ties keep the earliest called).
        bool merged = false;
        for (auto& [c, at] : best) {
          if (c != fin_class[i]) continue;
          merged = true;
          if (o.ret < fin[moves[at].op]->ret) {
            moves[at].op = i;
            if (o.optional) moves[at + 1].op = i;
          }
          break;
        }
        if (merged) continue;
        best.emplace_back(fin_class[i], static_cast<std::uint32_t>(moves.size()));
        moves.push_back({i, true});
        if (o.optional) moves.push_back({i, false});
      }
      // J1 and J4: of the ops that never returned, the earliest called of
      // each input, and only where it changes the state.
      for (std::uint32_t k = 0; k < open.size(); ++k) {
        if (open_done[k] || open[k]->call > m) continue;
        bool earlier = false;
        for (std::uint32_t j = 0; j < k && !earlier; ++j) earlier = !open_done[j] && open_class[j] == open_class[k];
        if (!earlier) moves.push_back({nf + k, true});
      }
      f.moves_to = static_cast<std::uint32_t>(moves.size());
      return true;
    };

    // A value that ops of the segment need and none of it writes has to be
    // there from the start (R5 at the root).
    [[maybe_unused]] auto start_fails = [&](const state& start) -> bool {
      if constexpr (model_with_values<M>) {
        const std::optional<value_type> held = M::value_of(start);
        for (const auto& [v, rw] : by_value) {
          if (!rw.first.empty() && rw.second.empty() && held != v) return true;
        }
      }
      return false;
    };
    bool found_one = false;
    for (const state& start : starts) {
      if (start_fails(start)) continue;
      stack.clear();
      moves.clear();
      stack.push_back({});
      stack.back().s = start;
      if (!enter()) continue;
      while (!stack.empty()) {
        // By position: pushing a child may move the stack.
        const std::size_t fi = stack.size() - 1;
        frame& f = stack[fi];
        if (f.placed == nf) {
          if (last) return finish(verdict::linearizable);
          add_end(f.s);
          found_one = true;
        }
        if ((++stats.nodes & 4095) == 0) {
          if (d.passed()) return finish(verdict::unknown);
          if (opt.memory_budget && memo_bytes() + other_bytes() > opt.memory_budget) {
            stats.out_of_memory = true;
            return finish(verdict::unknown);
          }
        }
        if (opt.node_budget && stats.nodes > opt.node_budget) return finish(verdict::unknown);
        if (enumeration_budget && stats.nodes - nodes_before > enumeration_budget) {
          restart = true;
          break;
        }
        bool pushed = false;
        while (stack[fi].cursor < stack[fi].moves_to) {
          const frame& cur = stack[fi];
          const move mv = moves[stack[fi].cursor++];
          std::optional<state> next;
          if (mv.op < nf) {
            const model_op<M>& o = *fin[mv.op];
            if (!o.optional) next = M::step(cur.s, o.in, &o.out);
            else if (mv.effect) next = M::step(cur.s, o.in, nullptr);
            else next = cur.s;
          } else {
            const model_op<M>& o = *open[mv.op - nf];
            next = M::step(cur.s, o.in, nullptr);
            if (next && M::equal(*next, cur.s)) next.reset();  // J4
          }
          if (!next) continue;
          if constexpr (model_with_values<M>) {
            if (strands(cur.s, *next, mv.op)) {
              ++stats.doomed;
              continue;
            }
          }
          frame child;
          child.s = std::move(*next);
          child.lo = cur.lo;
          child.hi = cur.hi;
          child.placed = cur.placed;
          child.via = mv.op;
          if (mv.op < nf) {
            fin_done[mv.op] = 1;
            child.hi = std::max(child.hi, mv.op + 1);
            ++child.placed;
          } else {
            open_done[mv.op - nf] = 1;
          }
          stack.push_back(std::move(child));
          if (enter()) {
            pushed = true;
            break;
          }
          // The memo had it: undo the placing (enter popped the child).
          if (mv.op < nf) fin_done[mv.op] = 0;
          else open_done[mv.op - nf] = 0;
        }
        if (!pushed) {
          const frame& top = stack.back();
          moves.resize(top.moves_from);
          if (stack.size() > 1) {
            if (top.via < nf) fin_done[top.via] = 0;
            else open_done[top.via - nf] = 0;
          }
          stack.pop_back();
        }
      }
      if (restart) break;
    }
    if (restart) {
      joined = true;
      ++stats.joined;
      continue;
    }
    if (!found_one) return finish(verdict::not_linearizable);
    starts.swap(ends);
    a = b;
  }
  return finish(verdict::linearizable);
}

}  // namespace gfsl::lin
