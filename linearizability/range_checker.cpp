#include "linearizability/range_checker.hpp"

#include <pthread.h>

#include <algorithm>
#include <exception>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "linearizability/report.hpp"
#include "traces/json.hpp"

namespace gfsl::lin::ranges {

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
constexpr u64 inf = model::no_stamp;
constexpr u32 none = ~0u;

// What an update requires of its key's state before it, and leaves after.
enum wkind : std::uint8_t {
  w_insert,         // absent -> v (insert -> true, upsert -> inserted; a pending insert)
  w_replace,        // present -> v (upsert -> replaced)
  w_assign,         // any -> v (upsert, answer not recorded; a pending upsert)
  w_erase,          // v -> absent (erase -> true, v)
  w_erase_any,      // present -> absent (a pending erase)
};
struct update {
  u32 op;
  u64 call, ret;  // ret: inf for an optional (pending) one
  value_type v;
  wkind k;
  bool optional;  // may be left out (pending, and nothing read its value)
};

enum rkind : std::uint8_t { r_value, r_absent, r_present };
struct item {
  u32 node;  // the operation whose point the answer pins (a snapshot for reads at its handle)
  u32 via;   // the record that answered
  u32 write; // r_value: the update it read (global index)
  rkind k;
};

// Edge meanings, for the reports.
enum ekind : std::uint8_t { e_time, e_call, e_ret, e_order, e_read, e_next, e_handle };
struct meta {
  key_type key;
  u32 via;
  ekind kind;
};

struct out_of_budget {};

class solver {
 public:
  solver(const range_history& h, const range_check_options& o, range_check_result& r) : h_(h), o_(o), r_(r) {}

  void run();

 private:
  // ---- the history, normalised
  const range_history& h_;
  const range_check_options& o_;
  range_check_result& r_;
  std::vector<u64> call_, eret_;              // per op: its point's bounds
  std::vector<u32> snap_of_;                  // per op reading at a handle: the snapshot record
  std::vector<key_type> keys_;                // keys with updates, ascending
  std::vector<u32> key_from_;                 // updates_[key_from_[k] .. key_from_[k+1])
  std::vector<update> updates_;               // by key, then call
  std::vector<std::pair<u64, u32>> by_value_; // ((key index << 32) | value) -> update
  // Per key: its admissible orders (indices into updates_), whether cut.
  std::vector<std::vector<std::vector<u32>>> orders_;  // a key's only order (forced keys), else empty
  std::vector<bool> ambiguous_;               // more than one order may be admissible: decided segment by segment
  std::vector<std::vector<u32>> segs_;        // ambiguous keys: where each segment starts (updates_), then the end
  std::vector<std::vector<std::vector<item>>> seg_items_;  // ambiguous keys: the answers each segment's order decides
  std::vector<std::vector<u32>> cur_;         // the search: the order of the segments chosen so far
  std::vector<std::vector<u32>> seg_level_;   // and the levels that chose them

  // ---- the graph
  u32 timeline_ = 0;   // timeline nodes first, then one per op
  std::vector<u64> events_;  // 2 * stamp + (0 call, 1 return), sorted, unique
  std::vector<std::pair<u32, u32>> edges_;
  std::vector<u32> edge_meta_;  // none: structural
  std::vector<meta> metas_;
  std::vector<u32> fwd_from_, fwd_, fwd_id_, bwd_from_, bwd_;
  std::vector<u32> ord_;
  // Edges the search adds (linked lists per node, undone in reverse).
  struct dyn_edge {
    u32 u, v, next_f, next_b, level;
  };
  std::vector<dyn_edge> dyn_;
  std::vector<u32> dyn_head_f_, dyn_head_b_;
  std::vector<u32> mark_, parent_, via_;
  u32 epoch_ = 0;
  u32 level_ = 0;                 // the search level adding edges now
  std::vector<u32> cycle_levels_; // after a refused edge: the levels whose edges close the cycle

  bool violated() const { return r_.v == verdict::not_linearizable; }
  u32 node_of(u32 op) const { return timeline_ + op; }
  u32 op_of(u32 node) const { return node - timeline_; }
  u32 event_node(u64 stamp, int ret) const {
    return static_cast<u32>(std::lower_bound(events_.begin(), events_.end(), 2 * stamp + static_cast<u64>(ret)) - events_.begin());
  }
  void violation(std::vector<u32> witness, std::vector<std::string> why) {
    if (violated()) return;
    r_.v = verdict::not_linearizable;
    r_.witness = std::move(witness);
    r_.why = std::move(why);
  }
  std::string rec(u32 op) const {
    return "record " + std::to_string(op) + " (team " + std::to_string(h_.ops[op].team) + ", [" + std::to_string(h_.ops[op].call) + ", " +
           (h_.ops[op].ret == inf ? std::string("-") : std::to_string(h_.ops[op].ret)) + "]) " + describe_range_record(h_, op);
  }
  u32 key_index(key_type k) const {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), k);
    return it != keys_.end() && *it == k ? static_cast<u32>(it - keys_.begin()) : none;
  }
  u32 write_of(u32 ki, value_type v) const {
    const u64 want = (static_cast<u64>(ki) << 32) | v;
    auto it = std::lower_bound(by_value_.begin(), by_value_.end(), std::make_pair(want, 0u));
    return it != by_value_.end() && it->first == want ? it->second : none;
  }

  bool normalise();
  void enumerate(u32 ki);
  void sequences(u32 from, u32 to, bool present, value_type value, u32 cap, std::vector<std::vector<u32>>& out, bool& cut) const;
  void items();
  void add_item(u32 ki, const item& it);
  // Slots of `it` under `order` of key ki: each alternative's edges (at most 2).
  struct slot_edges {
    u32 n = 0;
    std::pair<u32, u32> e[2];
    ekind kind[2];
  };
  void slots(u32 ki, const std::vector<u32>& order, const item& it, std::vector<slot_edges>& out, u64& pruned) const;
  u32 add_meta(key_type key, u32 via, ekind k) {
    metas_.push_back({key, via, k});
    return static_cast<u32>(metas_.size() - 1);
  }
  void edge(u32 u, u32 v, u32 m = none) {
    edges_.emplace_back(u, v);
    edge_meta_.push_back(m);
  }
  void build_csr();
  bool topological();
  void report_cycle(const std::vector<u32>& indeg);
  std::string relation(u32 a, u32 b, u32 edge_id) const;

  // ---- the search
  struct choice {
    bool segment = false;  // an order of one segment of an ambiguous key's updates; else an answer's slot
    u32 key = 0;
    u32 seg = 0;
    item it{};
    std::vector<slot_edges> alts;
    std::vector<u32> made_by;  // the levels whose orders of this key its slots depend on
    u64 time = 0;              // where it sits on the clock: choices are taken in this order
  };
  std::vector<choice> todo_;
  deadline deadline_;
  bool cut_search_ = false;
  bool insert_edge(u32 u, u32 v);
  void undo_to(std::size_t mark);
  bool apply(const slot_edges& s);
  bool search(std::size_t i, std::vector<u32>& conflict);
  bool apply_segment(u32 ki, u32 seg, const std::vector<u32>& order, std::size_t at);
  void undo_segment(u32 ki, std::size_t len);
  template <class F>
  void for_succ(u32 n, F&& f) const {
    for (u32 e = fwd_from_[n]; e < fwd_from_[n + 1]; ++e) f(fwd_[e]);
    for (u32 d = dyn_head_f_.empty() ? none : dyn_head_f_[n]; d != none; d = dyn_[d].next_f) f(dyn_[d].v);
  }
  template <class F>
  void for_pred(u32 n, F&& f) const {
    for (u32 e = bwd_from_[n]; e < bwd_from_[n + 1]; ++e) f(bwd_[e]);
    for (u32 d = dyn_head_b_.empty() ? none : dyn_head_b_[n]; d != none; d = dyn_[d].next_b) f(dyn_[d].u);
  }
};

// ---------------------------------------------------------------------------
// Normalising: updates per key, handles, the refusals.

bool solver::normalise() {
  const u32 n = static_cast<u32>(h_.ops.size());
  call_.resize(n);
  eret_.resize(n);
  snap_of_.assign(n, none);
  std::vector<std::pair<u64, u32>> handles;  // handle -> snapshot record
  for (u32 i = 0; i < n; ++i) {
    const range_record& x = h_.ops[i];
    call_[i] = x.call;
    eret_[i] = x.ret;  // an operation that ended in an error took effect before its return, or not at all
    r_.pending += x.pending() ? 1 : 0;
    if (x.op == range_op::range) ++r_.ranges;
    if (x.op == range_op::snapshot) {
      ++r_.snapshots;
      if (!x.pending()) handles.emplace_back(x.handle, i);
    }
    if (x.op == range_op::upsert && h_.model != range_model::ordered_upsert_map) {
      r_.refusal = rec(i) + ": an upsert, which model ordered-map does not take (--model ordered-upsert-map)";
      return false;
    }
  }
  std::sort(handles.begin(), handles.end());
  for (std::size_t i = 1; i < handles.size(); ++i) {
    if (handles[i].first == handles[i - 1].first) {
      r_.refusal = rec(handles[i].second) + ": returned handle " + std::to_string(handles[i].first) + ", which " +
                   rec(handles[i - 1].second) + " returned too (handles must be unique)";
      return false;
    }
  }
  for (u32 i = 0; i < n; ++i) {
    const range_record& x = h_.ops[i];
    if (x.handle == no_handle || x.op == range_op::snapshot) continue;
    auto it = std::lower_bound(handles.begin(), handles.end(), std::make_pair(x.handle, 0u));
    if (it == handles.end() || it->first != x.handle) {
      if (x.pending()) continue;  // says nothing
      r_.refusal = rec(i) + ": reads at handle " + std::to_string(x.handle) + ", which no completed snapshot returned";
      return false;
    }
    snap_of_[i] = it->second;
    // The snapshot's point precedes the read's, which precedes its return.
    if (!x.pending()) eret_[it->second] = std::min(eret_[it->second], x.ret);
  }
  // Updates.
  struct raw {
    key_type key;
    update u;
  };
  std::vector<raw> ups;
  for (u32 i = 0; i < n; ++i) {
    const range_record& x = h_.ops[i];
    update u{i, x.call, x.ret, x.value, w_insert, x.pending()};
    switch (x.op) {
      case range_op::insert:
        if (!x.pending() && !x.ok) continue;  // a read: present
        u.k = w_insert;
        break;
      case range_op::upsert: u.k = x.pending() || !x.ok_known ? w_assign : x.ok ? w_insert : w_replace; break;
      case range_op::erase:
        if (x.pending()) {
          u.k = w_erase_any;
        } else {
          if (!x.ok) continue;  // a read: absent
          if (!x.value_known) {
            r_.refusal = rec(i) + ": a successful erase whose removed value was not recorded (the range checker needs every one)";
            return false;
          }
          u.k = w_erase;
        }
        break;
      default: continue;
    }
    ups.push_back({x.key, u});
  }
  std::sort(ups.begin(), ups.end(), [](const raw& a, const raw& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.u.call != b.u.call) return a.u.call < b.u.call;
    return a.u.op < b.u.op;
  });
  key_from_.push_back(0);
  for (std::size_t i = 0; i < ups.size(); ++i) {
    if (keys_.empty() || keys_.back() != ups[i].key) {
      if (!keys_.empty()) key_from_.push_back(static_cast<u32>(i));
      keys_.push_back(ups[i].key);
    }
    updates_.push_back(ups[i].u);
  }
  key_from_.push_back(static_cast<u32>(ups.size()));
  if (keys_.empty()) key_from_.assign(1, 0);
  r_.keys = keys_.size();
  for (u32 ki = 0; ki < keys_.size(); ++ki) {
    for (u32 w = key_from_[ki]; w < key_from_[ki + 1]; ++w) {
      if (updates_[w].k == w_erase || updates_[w].k == w_erase_any) continue;
      by_value_.emplace_back((static_cast<u64>(ki) << 32) | updates_[w].v, w);
    }
  }
  std::sort(by_value_.begin(), by_value_.end());
  for (std::size_t i = 1; i < by_value_.size(); ++i) {
    if (by_value_[i].first == by_value_[i - 1].first) {
      const u32 a = by_value_[i - 1].second, b = by_value_[i].second;
      r_.refusal = rec(updates_[b].op) + " writes value " + std::to_string(updates_[b].v) + " to key " +
                   std::to_string(h_.ops[updates_[b].op].key) + ", as " + rec(updates_[a].op) +
                   " does: the range checker needs the values written to a key unique";
      return false;
    }
  }
  // An erase of v, or a read of v, makes v's update mandatory.
  for (const update& u : updates_) {
    if (u.k != w_erase) continue;
    const u32 ki = key_index(h_.ops[u.op].key);
    const u32 w = write_of(ki, u.v);
    if (w != none) updates_[w].optional = false;
  }
  for (u32 i = 0; i < n; ++i) {
    const range_record& x = h_.ops[i];
    if (x.pending()) continue;
    if (x.op == range_op::find && x.ok) {
      const u32 ki = key_index(x.key), w = ki == none ? none : write_of(ki, x.value);
      if (w != none) updates_[w].optional = false;
    } else if (x.op == range_op::range) {
      for (u32 p = 0; p < x.pairs_count; ++p) {
        const auto& kv = h_.pairs[x.pairs_from + p];
        const u32 ki = key_index(kv.first), w = ki == none ? none : write_of(ki, kv.second);
        if (w != none) updates_[w].optional = false;
      }
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// The admissible orders of one key's updates: every sequence of its
// mandatory updates and some optional ones in which each update finds the
// state it requires and none follows one that was called after it returned.

void solver::sequences(u32 from, u32 to, bool present, value_type value, u32 cap, std::vector<std::vector<u32>>& out, bool& cut) const {
  const u32 n = to - from;
  std::vector<u32> by_ret;  // mandatory, by return
  u32 optional = 0;
  for (u32 i = 0; i < n; ++i) {
    if (updates_[from + i].optional) ++optional;
    else by_ret.push_back(i);
  }
  std::sort(by_ret.begin(), by_ret.end(), [&](u32 a, u32 b) { return updates_[from + a].ret < updates_[from + b].ret; });
  std::vector<char> placed(n, 0);
  std::vector<u32> seq;
  seq.reserve(n);
  const u32 mandatory = static_cast<u32>(by_ret.size());
  auto fits = [](const update& u, bool p, value_type v) {
    switch (u.k) {
      case w_insert: return !p;
      case w_replace: return p;
      case w_assign: return true;
      case w_erase: return p && v == u.v;
      case w_erase_any: return p;
    }
    return false;
  };
  // The forced prefix without recursion (the common case is all of it).
  u32 lo = 0, rp = 0, placed_mandatory = 0;
  if (optional == 0) {
    while (placed_mandatory < mandatory) {
      while (lo < n && placed[lo]) ++lo;
      while (rp < mandatory && placed[by_ret[rp]]) ++rp;
      const u64 min_ret = updates_[from + by_ret[rp]].ret;
      u32 cand = none, count = 0;
      for (u32 i = lo; i < n && updates_[from + i].call <= min_ret; ++i) {
        if (placed[i] || !fits(updates_[from + i], present, value)) continue;
        if (++count > 1) break;
        cand = i;
      }
      if (count == 0) return;  // no admissible order
      if (count > 1) break;
      const update& u = updates_[from + cand];
      placed[cand] = 1;
      seq.push_back(from + cand);
      ++placed_mandatory;
      present = u.k != w_erase && u.k != w_erase_any;
      value = u.v;
    }
    if (placed_mandatory == mandatory) {
      out.push_back(seq);
      return;
    }
  }
  // Depth-first from there.
  struct frame {
    const solver& s;
    u32 from, n, mandatory;
    const std::vector<u32>& by_ret;
    std::vector<char>& placed;
    std::vector<u32>& seq;
    std::vector<std::vector<u32>>& out;
    bool& cut;
    const decltype(fits)& fits_in;
    u32 cap;
    u64 nodes = 0;
    void go(u32 lo, u32 rp, u32 placed_mandatory, bool present, value_type value) {
      // At most `cap` sequences, and 256 steps of the walk for each: more, and
      // the enumeration is cut (a search over it cannot answer no).
      if (out.size() >= cap || ++nodes > 256ull * cap) {
        cut = true;
        return;
      }
      if (placed_mandatory == mandatory) out.push_back(seq);
      while (lo < n && placed[lo]) ++lo;
      while (rp < mandatory && placed[by_ret[rp]]) ++rp;
      const u64 min_ret = rp < mandatory ? s.updates_[from + by_ret[rp]].ret : inf;
      for (u32 i = lo; i < n && s.updates_[from + i].call <= min_ret; ++i) {
        if (placed[i]) continue;
        const update& u = s.updates_[from + i];
        if (!fits_in(u, present, value)) continue;
        placed[i] = 1;
        seq.push_back(from + i);
        go(lo, rp, placed_mandatory + (u.optional ? 0 : 1), u.k != w_erase && u.k != w_erase_any, u.v);
        seq.pop_back();
        placed[i] = 0;
        if (cut) return;
      }
    }
  } f{*this, from, n, mandatory, by_ret, placed, seq, out, cut, fits, cap};
  f.go(lo, rp, placed_mandatory, present, value);
}

// A key's order: forced (one pass), none (a violation), or left to the
// search segment by segment. A segment ends where every update before
// returned before every one after was called: real time orders the
// segments, so an order is one sequence per segment, each admissible from
// the state the one before ends in.
void solver::enumerate(u32 ki) {
  const u32 from = key_from_[ki], to = key_from_[ki + 1];
  bool optional = false;
  for (u32 u = from; u < to; ++u) optional = optional || updates_[u].optional;
  if (!optional) {
    // One pass when forced; sequences() stops at the first branch otherwise.
    std::vector<std::vector<u32>> out;
    bool cut = false;
    sequences(from, to, false, 0, 1, out, cut);
    if (out.size() == 1 && !cut) {
      orders_[ki] = std::move(out);
      return;
    }
    if (out.empty() && !cut) return;  // no admissible order: run() reports it
  }
  ambiguous_[ki] = true;
  std::vector<u32>& segs = segs_[ki];
  u64 max_ret = 0;
  for (u32 u = from; u < to; ++u) {
    if (u == from || max_ret < updates_[u].call) segs.push_back(u);
    max_ret = std::max(max_ret, updates_[u].ret);
  }
  segs.push_back(to);
  seg_items_[ki].resize(segs.size() - 1);
}

// ---------------------------------------------------------------------------
// Slots: where an answer can sit in an order of its key's updates.

void solver::slots(u32 ki, const std::vector<u32>& order, const item& it, std::vector<slot_edges>& out, u64& pruned) const {
  (void)ki;
  out.clear();
  const u32 m = static_cast<u32>(order.size());
  const u64 c = call_[it.node], e = eret_[it.node];
  // lower: the last update that returned before the answer's call; upper:
  // the slot before the first update called after its return.
  u32 lower = 0, upper = m;
  u64 max_call = 0;
  for (u32 i = 0; i < m; ++i) {
    const update& u = updates_[order[i]];
    max_call = std::max(max_call, u.call);
    if (max_call > e) {
      upper = i;
      break;
    }
  }
  u64 min_ret = inf;
  for (u32 i = m; i-- > 0;) {
    min_ret = std::min(min_ret, updates_[order[i]].ret);
    if (min_ret < c) {
      lower = i + 1;
      break;
    }
  }
  if (lower > upper) return;
  auto add = [&](u32 j) {
    slot_edges s;
    if (j > 0) {
      const update& w = updates_[order[j - 1]];
      if (w.ret != inf && w.ret < c) ++pruned;
      else {
        s.e[s.n] = {node_of(w.op), node_of(it.node)};
        s.kind[s.n++] = e_read;
      }
    }
    if (j < m) {
      const update& w = updates_[order[j]];
      if (e != inf && e < w.call) ++pruned;
      else {
        s.e[s.n] = {node_of(it.node), node_of(w.op)};
        s.kind[s.n++] = e_next;
      }
    }
    out.push_back(s);
  };
  if (it.k == r_value) {
    for (u32 j = lower; j <= upper; ++j) {
      if (j > 0 && order[j - 1] == it.write) {
        add(j);
        return;
      }
    }
    return;
  }
  for (u32 j = lower; j <= upper; ++j) {
    const bool present = j > 0 && updates_[order[j - 1]].k != w_erase && updates_[order[j - 1]].k != w_erase_any;
    if (present == (it.k == r_present)) add(j);
  }
}

void solver::add_item(u32 ki, const item& it) {
  ++r_.range_items;
  if (ambiguous_[ki]) {
    // Decided with the segment holding the last update called before the
    // answer's operation returned: its slots lie in that segment or before.
    const std::vector<u32>& segs = segs_[ki];
    const u64 e = eret_[it.node];
    std::size_t sg = 0;
    while (sg + 2 < segs.size() && updates_[segs[sg + 1]].call <= e) ++sg;
    seg_items_[ki][sg].push_back(it);
    return;
  }
  std::vector<slot_edges> alts;
  slots(ki, orders_[ki][0], it, alts, r_.pruned);
  if (alts.empty()) {
    if (violated()) return;
    // No slot of the key's only order explains the answer.
    const range_record& x = h_.ops[it.via];
    const key_type key = keys_[ki];
    std::vector<u32> w{it.via};
    std::vector<std::string> why;
    const std::string what = it.k == r_value ? "value " + std::to_string(updates_[it.write].v) : it.k == r_absent ? "absent" : "present";
    why.push_back(rec(it.via) + " answers key " + std::to_string(key) + ": " + what + (snap_of_[it.via] != none ? " (at its snapshot, " + rec(snap_of_[it.via]) + ")" : ""));
    why.push_back("no state of key " + std::to_string(key) + " it can see is that; key " + std::to_string(key) + "'s updates, in their only admissible order:");
    std::size_t shown = 0;
    for (u32 wi : orders_[ki][0]) {
      if (++shown > 12) {
        why.push_back("  ... " + std::to_string(orders_[ki][0].size() - 12) + " more");
        break;
      }
      why.push_back("  " + rec(updates_[wi].op));
      w.push_back(updates_[wi].op);
    }
    (void)x;
    violation(std::move(w), std::move(why));
    return;
  }
  if (alts.size() == 1) {
    for (u32 e = 0; e < alts[0].n; ++e) edge(alts[0].e[e].first, alts[0].e[e].second, add_meta(keys_[ki], it.via, alts[0].kind[e]));
    return;
  }
  choice c;
  c.key = ki;
  c.it = it;
  c.alts = std::move(alts);
  todo_.push_back(std::move(c));
}

// Every answer, as items: (operation, key, what it saw).
void solver::items() {
  const u32 n = static_cast<u32>(h_.ops.size());
  for (u32 i = 0; i < n && !violated(); ++i) {
    const range_record& x = h_.ops[i];
    if (x.pending()) continue;
    const u32 node = snap_of_[i] != none ? snap_of_[i] : i;
    auto single = [&](rkind k, value_type v) {
      const u32 ki = key_index(x.key);
      if (ki == none) {
        if (k == r_absent) return;
        violation({i}, {rec(i) + (k == r_value ? " answers a value of key " : " finds key ") + std::to_string(x.key) +
                            " present, and no operation ever wrote key " + std::to_string(x.key)});
        return;
      }
      item it{node, i, none, k};
      if (k == r_value) {
        it.write = write_of(ki, v);
        if (it.write == none) {
          violation({i}, {rec(i) + " answers value " + std::to_string(v) + " for key " + std::to_string(x.key) +
                              ", which no operation wrote to it"});
          return;
        }
      }
      add_item(ki, it);
    };
    switch (x.op) {
      case range_op::insert:
        if (!x.ok) single(r_present, 0);
        break;
      case range_op::erase:
        if (!x.ok) single(r_absent, 0);
        break;
      case range_op::find: single(x.ok ? r_value : r_absent, x.value); break;
      case range_op::range: {
        auto k = std::lower_bound(keys_.begin(), keys_.end(), x.lo());
        u32 p = 0;
        for (; k != keys_.end() && *k < x.hi && !violated(); ++k) {
          const u32 ki = static_cast<u32>(k - keys_.begin());
          while (p < x.pairs_count && h_.pairs[x.pairs_from + p].first < *k) {
            const auto& kv = h_.pairs[x.pairs_from + p];
            violation({i}, {rec(i) + " holds key " + std::to_string(kv.first) + " (value " + std::to_string(kv.second) +
                                "), and no operation ever wrote key " + std::to_string(kv.first)});
            return;
          }
          item it{node, i, none, r_absent};
          if (p < x.pairs_count && h_.pairs[x.pairs_from + p].first == *k) {
            const value_type v = h_.pairs[x.pairs_from + p].second;
            ++p;
            it.k = r_value;
            it.write = write_of(ki, v);
            if (it.write == none) {
              violation({i}, {rec(i) + " holds key " + std::to_string(*k) + " with value " + std::to_string(v) +
                                  ", which no operation wrote to it"});
              return;
            }
          }
          add_item(ki, it);
        }
        if (!violated() && p < x.pairs_count) {
          const auto& kv = h_.pairs[x.pairs_from + p];
          violation({i}, {rec(i) + " holds key " + std::to_string(kv.first) + " (value " + std::to_string(kv.second) +
                              "), and no operation ever wrote key " + std::to_string(kv.first)});
        }
        break;
      }
      default: break;
    }
  }
}

// ---------------------------------------------------------------------------
// The graph.

void solver::build_csr() {
  const u32 nodes = timeline_ + static_cast<u32>(h_.ops.size());
  fwd_from_.assign(nodes + 1, 0);
  bwd_from_.assign(nodes + 1, 0);
  for (const auto& e : edges_) ++fwd_from_[e.first + 1], ++bwd_from_[e.second + 1];
  for (u32 i = 0; i < nodes; ++i) fwd_from_[i + 1] += fwd_from_[i], bwd_from_[i + 1] += bwd_from_[i];
  fwd_.resize(edges_.size());
  fwd_id_.resize(edges_.size());
  bwd_.resize(edges_.size());
  std::vector<u32> fp(fwd_from_.begin(), fwd_from_.end() - 1), bp(bwd_from_.begin(), bwd_from_.end() - 1);
  for (u32 id = 0; id < edges_.size(); ++id) {
    const auto& e = edges_[id];
    fwd_id_[fp[e.first]] = id;
    fwd_[fp[e.first]++] = e.second;
    bwd_[bp[e.second]++] = e.first;
  }
  r_.constraints = edges_.size();
}

bool solver::topological() {
  const u32 nodes = timeline_ + static_cast<u32>(h_.ops.size());
  std::vector<u32> indeg(nodes, 0);
  for (u32 v : fwd_) ++indeg[v];
  std::vector<u32> queue;
  queue.reserve(nodes);
  for (u32 i = 0; i < nodes; ++i) {
    if (!indeg[i]) queue.push_back(i);
  }
  ord_.assign(nodes, 0);
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const u32 u = queue[q];
    ord_[u] = static_cast<u32>(q);
    for (u32 e = fwd_from_[u]; e < fwd_from_[u + 1]; ++e) {
      if (--indeg[fwd_[e]] == 0) queue.push_back(fwd_[e]);
    }
  }
  if (queue.size() == nodes) return true;
  report_cycle(indeg);
  return false;
}

std::string solver::relation(u32 a, u32 b, u32 id) const {
  const std::string ka = "record " + std::to_string(a), kb = "record " + std::to_string(b);
  if (id == none) {
    return ka + " returned (" + std::to_string(h_.ops[a].ret == inf ? eret_[a] : h_.ops[a].ret) + ") before " + kb + " was called (" +
           std::to_string(h_.ops[b].call) + ")" + (eret_[a] != h_.ops[a].ret ? " (or a read at its handle did)" : "");
  }
  const meta& m = metas_[edge_meta_[id]];
  const std::string key = "key " + std::to_string(m.key);
  const std::string via = m.via != b && m.via != a ? " (through " + std::string("record ") + std::to_string(m.via) + ", at its handle)" : "";
  switch (m.kind) {
    case e_order: return ka + " updates " + key + " before " + kb + " does (" + key + "'s only admissible update order)";
    case e_read: return kb + "'s answer for " + key + " is the value " + ka + " left, so it follows " + ka + via;
    case e_next: return ka + "'s answer for " + key + " is the state before " + kb + "'s update, so it precedes " + kb + via;
    case e_handle: return kb + " reads at " + ka + "'s snapshot, so it follows it";
    default: return ka + " precedes " + kb;
  }
}

void solver::report_cycle(const std::vector<u32>& indeg) {
  // Walk back through nodes left over (each has a left-over predecessor)
  // until one repeats: it is on a cycle; then the shortest cycle through it.
  const u32 nodes = static_cast<u32>(indeg.size());
  u32 x = none;
  for (u32 i = 0; i < nodes && x == none; ++i) {
    if (indeg[i]) x = i;
  }
  std::vector<char> seen(nodes, 0);
  while (!seen[x]) {
    seen[x] = 1;
    u32 p = none;
    for (u32 e = bwd_from_[x]; e < bwd_from_[x + 1] && p == none; ++e) {
      if (indeg[bwd_[e]]) p = bwd_[e];
    }
    x = p;
  }
  std::vector<u32> parent(nodes, none), parent_edge(nodes, none);
  std::vector<u32> queue{x};
  std::vector<char> visited(nodes, 0);
  bool found = false;
  for (std::size_t q = 0; q < queue.size() && !found; ++q) {
    const u32 u = queue[q];
    for (u32 e = fwd_from_[u]; e < fwd_from_[u + 1]; ++e) {
      const u32 v = fwd_[e];
      if (!indeg[v]) continue;
      if (v == x) {
        parent[x] = u;
        parent_edge[x] = fwd_id_[e];
        found = true;
        break;
      }
      if (visited[v]) continue;
      visited[v] = 1;
      parent[v] = u;
      parent_edge[v] = fwd_id_[e];
      queue.push_back(v);
    }
  }
  std::vector<u32> cycle;  // nodes, forward
  for (u32 v = x;;) {
    cycle.push_back(v);
    v = parent[v];
    if (v == x || v == none) break;
  }
  std::reverse(cycle.begin(), cycle.end());
  // Rotate so an op node leads; list op nodes with the relation to the next.
  std::size_t start = 0;
  while (start < cycle.size() && cycle[start] < timeline_) ++start;
  std::rotate(cycle.begin(), cycle.begin() + static_cast<std::ptrdiff_t>(start), cycle.end());
  std::vector<u32> ops, rel_edge;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    const u32 v = cycle[i], next = cycle[(i + 1) % cycle.size()];
    if (v < timeline_) continue;
    ops.push_back(op_of(v));
    // A direct constraint edge to the next op node, or a path through time.
    rel_edge.push_back(next >= timeline_ ? parent_edge[next] : none);
  }
  std::vector<std::string> why{"these operations cannot all take effect in one order (each must precede the next, and the last the first):"};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const u32 a = ops[i], b = ops[(i + 1) % ops.size()];
    why.push_back("  " + rec(a));
    u32 id = rel_edge[i];
    if (id != none && edge_meta_[id] == none) id = none;
    why.push_back("      " + relation(a, b, id));
  }
  violation(ops, std::move(why));
}

// ---------------------------------------------------------------------------
// The search: Pearce and Kelly's dynamic topological order (JEA 2006); an
// edge u -> v with ord(u) > ord(v) reorders the nodes between them, or
// closes a cycle and is refused.

bool solver::insert_edge(u32 u, u32 v) {
  cycle_levels_.clear();
  if (u == v) return false;
  auto push = [&] {
    dyn_.push_back({u, v, dyn_head_f_[u], dyn_head_b_[v], level_});
    dyn_head_f_[u] = dyn_head_b_[v] = static_cast<u32>(dyn_.size() - 1);
  };
  if (ord_[u] < ord_[v]) {
    push();
    return true;
  }
  const u32 lb = ord_[v], ub = ord_[u];
  if (++epoch_ == 0) std::fill(mark_.begin(), mark_.end(), 0), epoch_ = 1;
  std::vector<u32> df, db, stack{v};
  mark_[v] = epoch_;
  parent_[v] = none;
  bool cycle = false;
  while (!stack.empty() && !cycle) {
    const u32 x = stack.back();
    stack.pop_back();
    df.push_back(x);
    auto visit = [&](u32 y, u32 d) {
      if (cycle) return;
      if (y == u) {
        cycle = true;
        parent_[u] = x;
        via_[u] = d;
        return;
      }
      if (mark_[y] != epoch_ && ord_[y] < ub) {
        mark_[y] = epoch_;
        parent_[y] = x;
        via_[y] = d;
        stack.push_back(y);
      }
    };
    for (u32 e = fwd_from_[x]; e < fwd_from_[x + 1]; ++e) visit(fwd_[e], none);
    for (u32 d = dyn_head_f_[x]; d != none; d = dyn_[d].next_f) visit(dyn_[d].v, d);
  }
  if (cycle) {
    // The path v ~> u: the levels of the search's edges on it explain the cycle.
    for (u32 y = u; y != v; y = parent_[y]) {
      if (via_[y] != none) cycle_levels_.push_back(dyn_[via_[y]].level);
    }
    return false;
  }
  stack.push_back(u);
  mark_[u] = epoch_;
  while (!stack.empty()) {
    const u32 x = stack.back();
    stack.pop_back();
    db.push_back(x);
    for_pred(x, [&](u32 y) {
      if (mark_[y] != epoch_ && ord_[y] > lb) {
        mark_[y] = epoch_;
        stack.push_back(y);
      }
    });
  }
  auto by_ord = [&](u32 a, u32 b) { return ord_[a] < ord_[b]; };
  std::sort(df.begin(), df.end(), by_ord);
  std::sort(db.begin(), db.end(), by_ord);
  std::vector<u32> pool;
  pool.reserve(df.size() + db.size());
  for (u32 x : db) pool.push_back(ord_[x]);
  for (u32 x : df) pool.push_back(ord_[x]);
  std::sort(pool.begin(), pool.end());
  std::size_t p = 0;
  for (u32 x : db) ord_[x] = pool[p++];
  for (u32 x : df) ord_[x] = pool[p++];
  push();
  return true;
}

void solver::undo_to(std::size_t mark) {
  while (dyn_.size() > mark) {
    const dyn_edge& d = dyn_.back();
    dyn_head_f_[d.u] = d.next_f;
    dyn_head_b_[d.v] = d.next_b;
    dyn_.pop_back();
  }
}

bool solver::apply(const slot_edges& s) {
  for (u32 e = 0; e < s.n; ++e) {
    if (!insert_edge(s.e[e].first, s.e[e].second)) return false;
  }
  return true;
}

// Applies one order of segment `seg` of key ki's updates at level `at`:
// its chain, the answers that segment decides with one slot; those with
// several become choices right after `at`, in clock order. False: a cycle
// (cycle_levels_ says whose), or an answer no slot explains. Every answer's
// slots depend on the orders of the key's segments so far: their levels
// are part of any failure they cause.
bool solver::apply_segment(u32 ki, u32 seg, const std::vector<u32>& order, std::size_t at) {
  std::vector<u32>& cur = cur_[ki];
  seg_level_[ki].push_back(static_cast<u32>(at));
  auto fail = [&] {
    const std::vector<u32>& mine = seg_level_[ki];
    cycle_levels_.insert(cycle_levels_.end(), mine.begin(), mine.end());
    return false;
  };
  for (u32 w : order) {
    if (!cur.empty()) {
      const update &a = updates_[cur.back()], &b = updates_[w];
      if (!(a.ret != inf && a.ret < b.call) && !insert_edge(node_of(a.op), node_of(b.op))) return false;
    }
    cur.push_back(w);
  }
  std::vector<slot_edges> alts;
  std::vector<choice> made;
  u64 pruned = 0;
  for (const item& it : seg_items_[ki][seg]) {
    slots(ki, cur, it, alts, pruned);
    if (alts.empty()) {
      cycle_levels_.clear();
      return fail();
    }
    if (alts.size() == 1) {
      if (!apply(alts[0])) return fail();
      continue;
    }
    choice c;
    c.key = ki;
    c.it = it;
    c.alts = alts;
    c.made_by = seg_level_[ki];
    c.time = call_[it.node];
    made.push_back(std::move(c));
  }
  std::stable_sort(made.begin(), made.end(), [](const choice& a, const choice& b) { return a.time < b.time; });
  todo_.insert(todo_.begin() + static_cast<std::ptrdiff_t>(at + 1), std::make_move_iterator(made.begin()), std::make_move_iterator(made.end()));
  return true;
}

void solver::undo_segment(u32 ki, std::size_t len) {
  cur_[ki].resize(len);
  seg_level_[ki].pop_back();
}

// Depth-first over the choices, with conflict-directed backjumping
// (Prosser 1993): a failure below level i that no edge of level i takes
// part in is passed up past i, whose other alternatives cannot help.
// `conflict`: on failure, the levels below i that explain it.
bool solver::search(std::size_t i, std::vector<u32>& conflict) {
  conflict.clear();
  if (i == todo_.size()) return true;
  const choice c = todo_[i];
  // A segment's orders, from the state the key's order so far ends in.
  std::vector<std::vector<u32>> seqs;
  std::size_t cur_len = 0;
  if (c.segment) {
    const std::vector<u32>& cur = cur_[c.key];
    cur_len = cur.size();
    const bool present = !cur.empty() && updates_[cur.back()].k != w_erase && updates_[cur.back()].k != w_erase_any;
    bool cut = false;
    sequences(segs_[c.key][c.seg], segs_[c.key][c.seg + 1], present, cur.empty() ? 0 : updates_[cur.back()].v, o_.max_orders, seqs, cut);
    if (cut) r_.cut = true;
  }
  const std::size_t n_alts = c.segment ? seqs.size() : c.alts.size();
  std::vector<u32> mine, below;
  auto merge = [&](const std::vector<u32>& levels) {
    for (u32 l : levels) {
      if (l < i) mine.push_back(l);
    }
  };
  for (std::size_t a = 0; a < n_alts; ++a) {
    ++r_.search_steps;
    if (o_.budget && r_.search_steps > o_.budget) throw out_of_budget{};
    if ((r_.search_steps & 255) == 0 && deadline_.passed()) throw out_of_budget{};
    const std::size_t mark = dyn_.size(), todo_size = todo_.size();
    level_ = static_cast<u32>(i);
    const bool ok = c.segment ? apply_segment(c.key, c.seg, seqs[a], i) : apply(c.alts[a]);
    auto undo = [&] {
      undo_to(mark);
      todo_.erase(todo_.begin() + static_cast<std::ptrdiff_t>(i + 1), todo_.begin() + static_cast<std::ptrdiff_t>(i + 1 + (todo_.size() - todo_size)));
      if (c.segment) undo_segment(c.key, cur_len);
    };
    if (!ok) {
      merge(cycle_levels_);
    } else {
      if (search(i + 1, below)) return true;
      if (std::find(below.begin(), below.end(), static_cast<u32>(i)) == below.end()) {
        // Level i's choice is not part of it: back-jump.
        undo();
        conflict = below;
        return false;
      }
      merge(below);
    }
    undo();
  }
  // What this choice could be depends on the key's segments chosen before.
  if (c.segment) mine.insert(mine.end(), seg_level_[c.key].begin(), seg_level_[c.key].end());
  mine.insert(mine.end(), c.made_by.begin(), c.made_by.end());
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  conflict = std::move(mine);
  return false;
}

void solver::run() {
  if (!normalise()) return;
  // Per key, the admissible orders.
  orders_.resize(keys_.size());
  ambiguous_.assign(keys_.size(), false);
  segs_.resize(keys_.size());
  seg_items_.resize(keys_.size());
  cur_.resize(keys_.size());
  seg_level_.resize(keys_.size());
  for (u32 ki = 0; ki < keys_.size(); ++ki) {
    enumerate(ki);
    if (ambiguous_[ki]) ++r_.ambiguous_keys;
    if (orders_[ki].empty() && !ambiguous_[ki] && !violated()) {
      std::vector<u32> w;
      std::vector<std::string> why{"the updates of key " + std::to_string(keys_[ki]) +
                                   " have no order in which each finds the state it needs and real time holds:"};
      for (u32 u = key_from_[ki]; u < key_from_[ki + 1]; ++u) {
        if (w.size() == 16) {
          why.push_back("  ...");
          break;
        }
        w.push_back(updates_[u].op);
        why.push_back("  " + rec(updates_[u].op) + (updates_[u].optional ? " (optional)" : ""));
      }
      violation(std::move(w), std::move(why));
    }
  }
  if (violated()) return;
  // The timeline: calls before returns at one stamp (equal stamps are
  // concurrent), then each point inside its interval.
  const u32 n = static_cast<u32>(h_.ops.size());
  events_.reserve(2 * n);
  for (u32 i = 0; i < n; ++i) {
    events_.push_back(2 * call_[i]);
    if (eret_[i] != inf) events_.push_back(2 * eret_[i] + 1);
  }
  std::sort(events_.begin(), events_.end());
  events_.erase(std::unique(events_.begin(), events_.end()), events_.end());
  timeline_ = static_cast<u32>(events_.size());
  edges_.reserve(static_cast<std::size_t>(timeline_) + 2 * n);
  for (u32 t = 1; t < timeline_; ++t) edge(t - 1, t);
  for (u32 i = 0; i < n; ++i) {
    edge(event_node(call_[i], 0), node_of(i));
    if (eret_[i] != inf) edge(node_of(i), event_node(eret_[i], 1));
    if (snap_of_[i] != none && !h_.ops[i].pending()) edge(node_of(snap_of_[i]), node_of(i), add_meta(0, i, e_handle));
  }
  // Forced orders' chains.
  for (u32 ki = 0; ki < keys_.size(); ++ki) {
    if (ambiguous_[ki]) continue;
    const std::vector<u32>& order = orders_[ki][0];
    for (std::size_t i = 1; i < order.size(); ++i) {
      const update &a = updates_[order[i - 1]], &b = updates_[order[i]];
      if (a.ret != inf && a.ret < b.call) continue;  // real time says it
      edge(node_of(a.op), node_of(b.op), add_meta(keys_[ki], b.op, e_order));
    }
  }
  items();
  if (violated()) return;
  build_csr();
  if (!topological()) return;
  // Choices: the segments of keys with several orders, and the answers
  // with several slots.
  for (choice& c : todo_) c.time = call_[c.it.node];
  for (u32 ki = 0; ki < keys_.size(); ++ki) {
    if (!ambiguous_[ki]) continue;
    for (u32 sg = 0; sg + 1 < segs_[ki].size(); ++sg) {
      choice c;
      c.segment = true;
      c.key = ki;
      c.seg = sg;
      c.time = updates_[segs_[ki][sg]].call;
      todo_.push_back(std::move(c));
    }
  }
  r_.choices = todo_.size();
  if (todo_.empty()) return;
  // In clock order: a conflict shows soon after the choice that caused it.
  std::stable_sort(todo_.begin(), todo_.end(), [&](const choice& a, const choice& b) { return a.time < b.time; });
  const u32 nodes = timeline_ + n;
  dyn_head_f_.assign(nodes, none);
  dyn_head_b_.assign(nodes, none);
  mark_.assign(nodes, 0);
  parent_.assign(nodes, none);
  via_.assign(nodes, none);
  deadline_ = deadline::after_seconds(o_.seconds);
  bool found = false;
  try {
    std::vector<u32> conflict;
    found = search(0, conflict);
  } catch (const out_of_budget&) {
    r_.v = verdict::unknown;
    r_.cut = true;
    return;
  }
  if (found) return;
  if (r_.cut) {
    r_.v = verdict::unknown;
    return;
  }
  std::vector<u32> w;
  std::vector<std::string> why{"no choice of the orders and slots below gives one order of every operation (" +
                               std::to_string(r_.search_steps) + " alternatives tried, all closing a cycle):"};
  for (const choice& c : todo_) {
    if (w.size() >= 24) break;
    if (c.segment) {
      why.push_back("  key " + std::to_string(keys_[c.key]) + ": the orders of these updates (one stretch of its history)");
      for (u32 u = segs_[c.key][c.seg]; u < segs_[c.key][c.seg + 1] && w.size() < 24; ++u) {
        w.push_back(updates_[u].op);
        why.push_back("    " + rec(updates_[u].op));
      }
      for (const item& it : seg_items_[c.key][c.seg]) {
        if (w.size() >= 24) break;
        w.push_back(it.via);
        why.push_back("    answered by " + rec(it.via));
      }
    } else {
      w.push_back(c.it.via);
      why.push_back("  " + rec(c.it.via) + ": key " + std::to_string(keys_[c.key]) + " fits " + std::to_string(c.alts.size()) + " slots");
    }
  }
  violation(std::move(w), std::move(why));
}

}  // namespace

namespace {
range_check_result check_whole(const range_history& h, const range_check_options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  range_check_result r;
  r.operations = h.ops.size();
  solver s(h, o, r);
  // The search recurses once per choice, the enumeration once per update
  // of a key: a thread of its own with a deep stack (reserved, not touched).
  struct job {
    solver* s;
    std::exception_ptr error;
  } j{&s, nullptr};
  pthread_attr_t attr;
  pthread_t thread;
  bool ran = false;
  if (pthread_attr_init(&attr) == 0) {
    if (pthread_attr_setstacksize(&attr, std::size_t{1} << 30) == 0 &&
        pthread_create(&thread, &attr, [](void* p) -> void* {
          auto* jj = static_cast<job*>(p);
          try {
            jj->s->run();
          } catch (...) {
            jj->error = std::current_exception();
          }
          return nullptr;
        }, &j) == 0) {
      pthread_join(thread, nullptr);
      ran = true;
    }
    pthread_attr_destroy(&attr);
  }
  if (!ran) s.run();
  if (j.error) std::rethrow_exception(j.error);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}
}  // namespace

// The history on one key: its updates and plain reads, the reads at a
// handle of that key (finds, and ranges cut to [k, k + 1) with k's pair
// if they hold it), and the snapshots those read at. A linearization of the
// whole history, restricted to these operations and each range to k, is one
// of this history (real time is kept, and each answer restricted to k is
// what key k held at the operation's point), so a projection that is not
// linearizable proves the whole history is not (linearizability/README.md,
// "Range queries", "When the whole is undecided").
range_history project_on_key(const range_history& h, key_type k, std::vector<std::uint32_t>& origin) {
  range_history p;
  p.model = h.model;
  std::vector<char> snapshot_needed;
  std::vector<std::uint64_t> handles_read;
  auto covers = [&](const range_record& x) {
    if (x.op == range_op::range) return x.lo() <= k && static_cast<std::uint64_t>(k) < x.hi;
    if (x.op == range_op::snapshot) return false;
    return x.key == k;
  };
  for (const range_record& x : h.ops) {
    if (covers(x) && x.handle != no_handle) handles_read.push_back(x.handle);
  }
  std::sort(handles_read.begin(), handles_read.end());
  for (std::uint32_t i = 0; i < h.ops.size(); ++i) {
    const range_record& x = h.ops[i];
    if (x.op == range_op::snapshot) {
      if (x.pending() || !std::binary_search(handles_read.begin(), handles_read.end(), x.handle)) continue;
      p.ops.push_back(x);
    } else if (x.op == range_op::range) {
      if (!covers(x)) continue;
      std::vector<std::pair<key_type, value_type>> answer;
      for (std::uint32_t j = 0; j < x.pairs_count; ++j) {
        if (h.pairs[x.pairs_from + j].first == k) answer.push_back(h.pairs[x.pairs_from + j]);
      }
      range_record& y = p.add_range(x.team, k, std::uint64_t{k} + 1, answer, x.call, x.ret, x.handle);
      y.st = x.st;
    } else if (covers(x)) {
      p.ops.push_back(x);
    } else {
      continue;
    }
    origin.push_back(i);
  }
  return p;
}

range_check_result check_range_history(const range_history& h, const range_check_options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  range_check_result r = check_whole(h, o);
  if (r.v != verdict::unknown || !r.refusal.empty() || !o.projections) return r;
  // Undecided as a whole: each key's projection is small and decided on
  // its own; one that fails is a violation of the whole history.
  std::vector<key_type> keys;
  for (const range_record& x : h.ops) {
    if (x.op != range_op::range && x.op != range_op::snapshot) keys.push_back(x.key);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (key_type k : keys) {
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.seconds > 0 && spent >= o.seconds) break;
    std::vector<std::uint32_t> origin;
    const range_history p = project_on_key(h, k, origin);
    range_check_options po = o;
    if (o.seconds > 0) po.seconds = o.seconds - spent;
    const range_check_result pr = check_whole(p, po);
    if (pr.v != verdict::not_linearizable) continue;
    r.v = verdict::not_linearizable;
    r.cut = false;
    r.witness.clear();
    for (std::uint32_t w : pr.witness) r.witness.push_back(origin[w]);
    r.why.clear();
    r.why.push_back("undecided as a whole; its projection on key " + std::to_string(k) + " (the " + std::to_string(p.ops.size()) +
                    " operations on it, ranges cut to [" + std::to_string(k) + ", " + std::to_string(std::uint64_t{k} + 1) +
                    ")) is not linearizable, so neither is the whole. The records below are the projection's; in the whole history:");
    std::string map;
    for (std::uint32_t w : pr.witness) {
      if (!map.empty()) map += ", ";
      map += std::to_string(w) + " = " + std::to_string(origin[w]);
    }
    r.why.push_back("  " + map);
    for (const std::string& line : pr.why) r.why.push_back(line);
    break;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string range_text_report(const range_history& h, const range_check_result& r, const std::string& file, const std::string& form) {
  std::string s = "gfsl check: " + printable(file) + " (" + form + ", model " + range_model_name(h.model) + ")\n";
  if (!r.refusal.empty()) return s + "refused:  " + r.refusal + "\n";
  s += "verdict:  ";
  if (r.v == verdict::linearizable) s += "linearizable\n";
  else if (r.v == verdict::not_linearizable) s += "NOT LINEARIZABLE\n";
  else s += "undecided within the limits (exit 3)\n";
  s += "history:  " + std::to_string(r.operations) + " operations (" + std::to_string(r.ranges) + " ranges, " + std::to_string(r.snapshots) +
       " snapshots, " + std::to_string(r.pending) + " pending or failed), " + std::to_string(r.keys) + " keys updated\n";
  s += "checked:  per-key update orders and one constraint graph: " + std::to_string(r.range_items) + " answers of a key, " +
       std::to_string(r.constraints) + " constraints (" + std::to_string(r.pruned) + " implied by real time, left out), " +
       std::to_string(r.ambiguous_keys) + " keys with several update orders, " + std::to_string(r.choices) + " choices, " +
       std::to_string(r.search_steps) + " search steps\n";
  if (r.v == verdict::unknown) s += "limits:   the search stopped at its bound (--seconds, or the budget of alternatives)\n";
  for (const std::string& line : r.why) s += (&line == &r.why.front() ? "why:      " : "          ") + line + "\n";
  return s;
}

std::string range_json_report(const range_history& h, const range_check_result& r, const std::string& file) {
  std::string s = "{\"file\":";
  traces::json::append_string(s, file);
  s += ",\"model\":\"" + std::string(range_model_name(h.model)) + "\"";
  if (!r.refusal.empty()) {
    s += ",\"verdict\":null,\"refused\":";
    traces::json::append_string(s, r.refusal);
    return s + "}";
  }
  s += ",\"verdict\":\"" + std::string(verdict_name(r.v)) + "\"";
  s += ",\"operations\":" + std::to_string(r.operations) + ",\"ranges\":" + std::to_string(r.ranges) +
       ",\"snapshots\":" + std::to_string(r.snapshots) + ",\"pending\":" + std::to_string(r.pending) + ",\"keys\":" + std::to_string(r.keys) +
       ",\"answers\":" + std::to_string(r.range_items) + ",\"constraints\":" + std::to_string(r.constraints) +
       ",\"implied\":" + std::to_string(r.pruned) + ",\"ambiguous_keys\":" + std::to_string(r.ambiguous_keys) +
       ",\"choices\":" + std::to_string(r.choices) + ",\"search_steps\":" + std::to_string(r.search_steps);
  s += ",\"witness\":[";
  for (std::size_t i = 0; i < r.witness.size(); ++i) {
    const std::uint32_t w = r.witness[i];
    s += (i ? "," : "") + std::string("{\"record\":") + std::to_string(w) + ",\"team\":" + std::to_string(h.ops[w].team) +
         ",\"call\":" + std::to_string(h.ops[w].call) + ",\"ret\":" + (h.ops[w].ret == model::no_stamp ? "null" : std::to_string(h.ops[w].ret)) +
         ",\"operation\":";
    traces::json::append_string(s, describe_range_record(h, w));
    s += "}";
  }
  s += "],\"why\":[";
  for (std::size_t i = 0; i < r.why.size(); ++i) {
    if (i) s += ",";
    traces::json::append_string(s, r.why[i]);
  }
  s += "],\"seconds\":";
  traces::json::append_real(s, r.seconds);
  return s + "}";
}

}  // namespace gfsl::lin::ranges
