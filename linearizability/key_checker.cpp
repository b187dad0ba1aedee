#include "linearizability/key_checker.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

namespace gfsl::lin {

namespace {

constexpr std::uint64_t infinity = std::numeric_limits<std::uint64_t>::max();

// A search segment that is not the last must be probed once per (start
// state, end state) pair. Beyond this many probes the segment is joined to
// the next one instead (exact either way: the search judges any history).
constexpr std::size_t probe_limit = 64;

// The first turn of the search suited to a segment (key_checker::search),
// about what a search that does not backtrack takes; the turns grow fourfold
// from there, the other search's an eighth of each.
constexpr double first_turn_seconds = 0.004;
constexpr double first_turn_seconds_per_op = 4e-6;

bool contains(const std::vector<value_type>& sorted, value_type v) { return std::binary_search(sorted.begin(), sorted.end(), v); }

void normalize(key_checker::state_set& s) {
  std::sort(s.values.begin(), s.values.end());
  s.values.erase(std::unique(s.values.begin(), s.values.end()), s.values.end());
}

}  // namespace

void key_checker::prepare(std::span<const key_op> ops) {
  ops_.clear();
  for (std::uint32_t s = 0; s < ops.size(); ++s) {
    const key_op& o = ops[s];
    op_class c;
    if (!classify(o, c)) continue;
    ops_.push_back(op{o.call, o.optional && o.ret == never_returned ? infinity : o.ret, o.value, s, c});
  }
  // Cuts: before an operation called after every earlier one returned.
  segments_.clear();
  std::uint64_t max_ret = 0, max_call = 0, min_ret = infinity;
  std::uint32_t begin = 0;
  for (std::uint32_t i = 0; i <= ops_.size(); ++i) {
    if (i == ops_.size() || (i > begin && max_ret < ops_[i].call)) {
      if (i > begin) segments_.push_back(segment{begin, i, max_call <= min_ret});
      if (i == ops_.size()) break;
      begin = i;
      max_ret = 0, max_call = 0, min_ret = infinity;
    }
    max_ret = std::max(max_ret, ops_[i].ret);
    max_call = std::max(max_call, ops_[i].call);
    min_ret = std::min(min_ret, ops_[i].ret);
  }
}

void key_checker::count(const segment& s) {
  counts_.clear();
  deletes_any_ = optional_deletes_ = reads_absent_ = reads_present_ = total_inserts_ = total_deletes_ = 0;
  for (std::uint32_t k = s.begin; k < s.end; ++k) {
    switch (ops_[k].c) {
      case read_absent: ++reads_absent_; break;
      case read_present: ++reads_present_; break;
      case write_delete_any: ++deletes_any_; break;
      case opt_delete: ++optional_deletes_; break;
      default: counts_.push_back(value_count{ops_[k].value});
    }
  }
  std::sort(counts_.begin(), counts_.end(), [](const value_count& a, const value_count& b) { return a.value < b.value; });
  counts_.erase(std::unique(counts_.begin(), counts_.end(), [](const value_count& a, const value_count& b) { return a.value == b.value; }),
                counts_.end());
  auto at = [&](value_type v) -> value_count& {
    return *std::lower_bound(counts_.begin(), counts_.end(), v, [](const value_count& a, value_type x) { return a.value < x; });
  };
  for (std::uint32_t k = s.begin; k < s.end; ++k) {
    switch (ops_[k].c) {
      case write_insert: ++at(ops_[k].value).inserts, ++total_inserts_; break;
      case opt_insert: ++at(ops_[k].value).optional_inserts; break;
      case write_delete: ++at(ops_[k].value).deletes, ++total_deletes_; break;
      case read_value: at(ops_[k].value).read = true; break;
      default: break;
    }
  }
}

namespace {

// The counting judgement (README, "Concurrent segments"). From `start`, with
// x_v optional inserts of v and y optional deletes taking effect, the key has
// c_v = inserts_v + x_v + [start is v] presence periods of v, p = sum c_v in
// all, and D = deletes + deletes_any + y of them end. A linearization exists,
// ending absent, iff some x, y give D = p with d_v <= c_v, c_v >= 1 for every
// value found, p >= 1 if an insert answered false, and an absent period if an
// operation saw the key absent. need(v) is the least x_v these bounds allow.
struct counting_plan {
  std::int64_t bonus, need;
};

std::int64_t least_inserts(std::int64_t inserts, std::int64_t deletes, bool read, std::int64_t bonus) {
  return std::max<std::int64_t>({0, deletes - inserts - bonus, (read ? 1 : 0) - inserts - bonus});
}

// The least x_w when w's last period is left open at the end: one more
// period of w than deletes of w, and (when the key started present) an
// inserted one, since the start period comes first and the open one last.
std::int64_t least_inserts_open(std::int64_t inserts, std::int64_t deletes, bool read, std::int64_t bonus) {
  return std::max<std::int64_t>({least_inserts(inserts, deletes, read, bonus), deletes + 1 - inserts - bonus, 1 - inserts});
}

}  // namespace

void key_checker::counted_ends(const start_state& start, state_set& ends) const {
  std::int64_t p_lo = 0, p_hi = 0;
  bool start_counted = false;
  for (const value_count& v : counts_) {
    const std::int64_t bonus = start.present && v.value == start.value ? 1 : 0;
    start_counted |= bonus != 0;
    const std::int64_t need = least_inserts(v.inserts, v.deletes, v.read, bonus);
    if (need > v.optional_inserts) return;  // no end at all
    p_lo += v.inserts + need + bonus;
    p_hi += v.inserts + v.optional_inserts + bonus;
  }
  if (start.present && !start_counted) ++p_lo, ++p_hi;
  const std::int64_t d_lo = total_deletes_ + deletes_any_, d_hi = d_lo + optional_deletes_;
  // Ends absent: p = D.
  const std::int64_t lb = std::max<std::int64_t>(reads_present_ ? 1 : 0, reads_absent_ && start.present ? 1 : 0);
  if (std::max({p_lo, d_lo, lb}) <= std::min(p_hi, d_hi)) ends.absent = true;
  // Ends present with w, its last period open: p = D + 1, and with a start
  // period, p >= 2 (which also gives an absent period: D >= 1).
  const std::int64_t lbp = start.present ? 2 : 1;
  for (const value_count& v : counts_) {
    const std::int64_t bonus = start.present && v.value == start.value ? 1 : 0;
    const std::int64_t need = least_inserts(v.inserts, v.deletes, v.read, bonus);
    const std::int64_t open = least_inserts_open(v.inserts, v.deletes, v.read, bonus);
    if (open > v.optional_inserts) continue;
    if (std::max({p_lo + open - need, d_lo + 1, lbp}) <= std::min(p_hi, d_hi + 1)) ends.values.push_back(v.value);
  }
  // Or nothing changes the start value: no completed write, nothing that
  // needs the key absent or present with another value.
  if (start.present && total_inserts_ == 0 && total_deletes_ == 0 && deletes_any_ == 0 && reads_absent_ == 0) {
    bool others = false;
    for (const value_count& v : counts_) others |= v.read && v.value != start.value;
    if (!others) ends.values.push_back(start.value);
  }
}

bool key_checker::counted_witness(const segment& s, const start_state& start, const start_state& end, std::vector<std::uint32_t>& out) {
  struct item {
    value_type v;
    std::uint8_t c;
    std::uint32_t pos;
  };
  std::vector<item> items;
  std::vector<std::uint32_t> absent_reads, present_reads, generic_closers, optional_closers;
  for (std::uint32_t k = s.begin; k < s.end; ++k) {
    const op& o = ops_[k];
    switch (o.c) {
      case read_absent: absent_reads.push_back(o.pos); break;
      case read_present: present_reads.push_back(o.pos); break;
      case write_delete_any: generic_closers.push_back(o.pos); break;
      case opt_delete: optional_closers.push_back(o.pos); break;
      default: items.push_back(item{o.value, o.c, o.pos});
    }
  }
  std::sort(items.begin(), items.end(), [](const item& a, const item& b) { return std::tie(a.v, a.c, a.pos) < std::tie(b.v, b.c, b.pos); });
  auto group = [&](value_type v) {
    auto lo = std::lower_bound(items.begin(), items.end(), v, [](const item& a, value_type x) { return a.v < x; });
    auto hi = std::upper_bound(lo, items.end(), v, [](value_type x, const item& a) { return x < a.v; });
    return std::make_pair(lo, hi);
  };
  auto emit_reads_of = [&](value_type v) {
    auto [lo, hi] = group(v);
    for (auto it = lo; it != hi; ++it) {
      if (it->c == read_value) out.push_back(it->pos);
    }
  };

  // Nothing changes the start value.
  if (start.present && end.present && start.value == end.value && total_inserts_ == 0 && total_deletes_ == 0 && deletes_any_ == 0 &&
      reads_absent_ == 0) {
    bool others = false;
    for (const item& i : items) others |= i.c == read_value && i.v != start.value;
    if (!others) {
      out.insert(out.end(), present_reads.begin(), present_reads.end());
      emit_reads_of(start.value);
      return true;
    }
  }

  // How many optional inserts of each value take effect: the least the
  // bounds allow, then more until p reaches its target.
  std::vector<std::int64_t> chosen(counts_.size());
  std::int64_t p = 0, p_hi = 0;
  bool start_counted = false;
  for (std::size_t k = 0; k < counts_.size(); ++k) {
    const value_count& v = counts_[k];
    const std::int64_t bonus = start.present && v.value == start.value ? 1 : 0;
    start_counted |= bonus != 0;
    chosen[k] = end.present && v.value == end.value ? least_inserts_open(v.inserts, v.deletes, v.read, bonus)
                                                     : least_inserts(v.inserts, v.deletes, v.read, bonus);
    if (chosen[k] > v.optional_inserts) return false;
    p += v.inserts + chosen[k] + bonus;
    p_hi += v.inserts + v.optional_inserts + bonus;
  }
  if (start.present && !start_counted) ++p, ++p_hi;
  const std::int64_t d_lo = total_deletes_ + deletes_any_, d_hi = d_lo + optional_deletes_;
  const std::int64_t open = end.present ? 1 : 0;
  const std::int64_t lb = end.present ? (start.present ? 2 : 1)
                                      : std::max<std::int64_t>(reads_present_ ? 1 : 0, reads_absent_ && start.present ? 1 : 0);
  const std::int64_t target = std::max({p, d_lo + open, lb});
  if (target > p_hi || target - open > d_hi) return false;
  for (std::size_t k = 0; k < counts_.size() && p < target; ++k) {
    const std::int64_t more = std::min(counts_[k].optional_inserts - chosen[k], target - p);
    chosen[k] += more;
    p += more;
  }
  const std::int64_t optional_deletes_used = target - open - d_lo;

  // The periods: the start one first, the open one last.
  struct period {
    value_type v;
    std::int64_t opener, closer;  // positions; -1: the start period / not closed
  };
  std::vector<period> periods;
  if (start.present) periods.push_back(period{start.value, -1, -1});
  for (std::size_t k = 0; k < counts_.size(); ++k) {
    auto [lo, hi] = group(counts_[k].value);
    std::int64_t optional_left = chosen[k];
    for (auto it = lo; it != hi; ++it) {
      if (it->c == write_insert || (it->c == opt_insert && optional_left-- > 0)) periods.push_back(period{it->v, it->pos, -1});
    }
  }
  if (end.present) {
    auto it = std::find_if(periods.begin(), periods.end(), [&](const period& q) { return q.v == end.value && q.opener >= 0; });
    if (it == periods.end()) return false;
    std::rotate(it, it + 1, periods.end());
  }
  const std::size_t closable = periods.size() - static_cast<std::size_t>(open);
  // Deletes that returned v end periods of v; the rest end any period.
  std::vector<std::pair<value_type, std::uint32_t>> by_value;
  for (std::uint32_t k = 0; k < closable; ++k) by_value.emplace_back(periods[k].v, k);
  std::sort(by_value.begin(), by_value.end());
  std::vector<std::uint8_t> closed(closable, 0);
  for (const item& i : items) {
    if (i.c != write_delete) continue;
    auto it = std::lower_bound(by_value.begin(), by_value.end(), std::make_pair(i.v, std::uint32_t{0}));
    while (it != by_value.end() && it->first == i.v && closed[it->second]) ++it;
    if (it == by_value.end() || it->first != i.v) return false;
    closed[it->second] = 1;
    periods[it->second].closer = i.pos;
  }
  generic_closers.insert(generic_closers.end(), optional_closers.begin(), optional_closers.begin() + optional_deletes_used);
  std::size_t next_closer = 0;
  for (std::size_t k = 0; k < closable; ++k) {
    if (closed[k]) continue;
    if (next_closer == generic_closers.size()) return false;
    periods[k].closer = generic_closers[next_closer++];
  }
  if (next_closer != generic_closers.size()) return false;

  if (!start.present) out.insert(out.end(), absent_reads.begin(), absent_reads.end());
  bool absent_reads_done = !start.present;
  std::vector<value_type> read_done;
  for (std::size_t k = 0; k < periods.size(); ++k) {
    const period& q = periods[k];
    if (q.opener >= 0) out.push_back(static_cast<std::uint32_t>(q.opener));
    if (k == 0) out.insert(out.end(), present_reads.begin(), present_reads.end());
    if (std::find(read_done.begin(), read_done.end(), q.v) == read_done.end()) {
      emit_reads_of(q.v);
      read_done.push_back(q.v);
    }
    if (q.closer >= 0) {
      out.push_back(static_cast<std::uint32_t>(q.closer));
      if (!absent_reads_done) out.insert(out.end(), absent_reads.begin(), absent_reads.end()), absent_reads_done = true;
    }
  }
  return absent_reads_done && (!periods.empty() || present_reads.empty());
}

bool key_checker::named(value_type v) const {
  return std::binary_search(counts_.begin(), counts_.end(), value_count{v},
                            [](const value_count& a, const value_count& b) { return a.value < b.value; });
}

std::vector<key_checker::start_state> key_checker::start_classes(const state_set& starts) const {
  std::vector<start_state> out;
  if (starts.absent) out.push_back(start_state{false, 0});
  bool other = false;
  for (value_type u : starts.values) {
    const bool n = named(u);
    // Values the segment never names behave alike: one stands for them all.
    if (n || !other) out.push_back(start_state{true, u});
    other |= !n;
  }
  return out;
}

verdict key_checker::search(std::span<const key_op> sub, const deadline& d, std::vector<std::uint32_t>* order,
                            const key_check_options& o) {
  // Both searches are exact; which one is fast depends on the history: the
  // rules of set_key_checker on hot keys whose operations all returned, the
  // state sets of jit_key_search where operations may or may not have taken
  // effect. Under a node budget (the explanation's) each runs once within it;
  // otherwise they take turns of growing length (fourfold each round), the
  // one suited to the segment (the just-in-time search where 1 in 256 or
  // more of its operations are optional) first and with eight times the share, so
  // that whichever decides does so within a constant factor of its own time.
  auto run = [&](bool jit, const deadline& within, const key_check_options& opts) {
    const verdict v = jit ? jit_.check(sub, within, order, opts) : search_.check(sub, within, order, opts);
    if (jit ? jit_.out_of_memory() : search_.out_of_memory()) out_of_memory_ = true;
    return v;
  };
  std::size_t optional = 0;
  for (const key_op& op : sub) optional += op.optional && op.kind != op_kind::contains ? 1 : 0;
  // Without optional operations the state sets are single states and the
  // rules of set_key_checker do all the just-in-time search could: it runs
  // alone, as before.
  if (optional == 0) return run(false, d, o);
  const bool jit_first = optional * 256 >= sub.size();
  if (o.node_budget) {
    const verdict v = run(jit_first, d, o);
    return v != verdict::unknown || out_of_memory_ || d.passed() ? v : run(!jit_first, d, o);
  }
  const double other_share = 0.125;
  for (double slice = std::max(first_turn_seconds, first_turn_seconds_per_op * static_cast<double>(sub.size()));; slice *= 4) {
    for (int k = 0; k < 2; ++k) {
      const bool jit = (k == 0) == jit_first;
      deadline turn = deadline::after_seconds(k == 0 ? slice : slice * other_share);
      turn.cancel = d.cancel;
      if (d.at < turn.at) turn.at = d.at;
      const verdict v = run(jit, turn, o);
      if (v != verdict::unknown || out_of_memory_ || d.passed()) return v;
    }
  }
}

verdict key_checker::searched(const segment& s, const start_state& start, const start_state* end, const deadline& d,
                              const key_check_options& options, std::vector<std::uint32_t>* out) {
  key_check_options o = options;
  o.initially_present = start.present;
  o.initial_value = start.value;
  if (!end) {
    // The caller's operations themselves, without a copy: between the
    // segment's first and last there are only its own and optional contains,
    // which the search leaves out as this checker does.
    const std::uint32_t first = ops_[s.begin].pos, last = ops_[s.end - 1].pos;
    const verdict v = search(input_.subspan(first, last - first + 1), d, out ? &sub_order_ : nullptr, o);
    if (v == verdict::linearizable && out) {
      for (std::uint32_t k : sub_order_) out->push_back(first + k);
    }
    return v;
  }
  sub_.clear();
  std::uint64_t max_ret = 0;
  for (std::uint32_t k = s.begin; k < s.end; ++k) {
    sub_.push_back(input_[ops_[k].pos]);
    max_ret = std::max(max_ret, ops_[k].ret);
  }
  const std::size_t real = sub_.size();
  // A read after everything else: it goes last, and holds only in `end`.
  key_op probe;
  probe.call = probe.ret = max_ret + 1;
  probe.kind = op_kind::contains;
  probe.ok = end->present;
  probe.value = end->value;
  sub_.push_back(probe);
  const verdict v = search(sub_, d, out ? &sub_order_ : nullptr, o);
  if (v == verdict::linearizable && out) {
    for (std::uint32_t k : sub_order_) {
      if (k < real) out->push_back(ops_[s.begin + k].pos);
    }
  }
  return v;
}

verdict key_checker::ends_of(const segment& s, const state_set& starts, bool last, const deadline& d, const key_check_options& options,
                             state_set& ends) {
  const std::vector<start_state> classes = start_classes(starts);
  // A start value the segment never names that can last through it stands
  // for every such value.
  auto pass_through = [&](value_type rep) {
    if (!named(rep) && contains(ends.values, rep)) {
      for (value_type u : starts.values) {
        if (!named(u)) ends.values.push_back(u);
      }
    }
  };
  if (s.concurrent) {
    for (const start_state& st : classes) {
      const std::size_t before = ends.values.size();
      counted_ends(st, ends);
      if (st.present && !named(st.value)) {
        std::sort(ends.values.begin() + static_cast<std::ptrdiff_t>(before), ends.values.end());
        if (std::binary_search(ends.values.begin() + static_cast<std::ptrdiff_t>(before), ends.values.end(), st.value)) {
          for (value_type u : starts.values) {
            if (!named(u)) ends.values.push_back(u);
          }
        }
      }
    }
    normalize(ends);
    return ends.empty() ? verdict::not_linearizable : verdict::linearizable;
  }
  bool unknown = false;
  if (last) {
    for (const start_state& st : classes) {
      const verdict v = searched(s, st, nullptr, d, options, nullptr);
      if (v == verdict::linearizable) {
        ends.absent = true;  // any state: nothing follows
        return v;
      }
      unknown |= v == verdict::unknown;
    }
    return unknown ? verdict::unknown : verdict::not_linearizable;
  }
  std::vector<start_state> candidates{start_state{false, 0}};
  for (const value_count& v : counts_) {
    if (v.inserts || v.optional_inserts) candidates.push_back(start_state{true, v.value});
  }
  for (const start_state& st : classes) {
    std::vector<start_state> wanted = candidates;
    if (st.present) wanted.push_back(st);
    for (const start_state& e : wanted) {
      const bool known = e.present ? contains(ends.values, e.value) : ends.absent;
      if (known) continue;
      const verdict v = searched(s, st, &e, d, options, nullptr);
      if (v == verdict::unknown) return v;
      if (v == verdict::linearizable) {
        if (e.present) {
          ends.values.push_back(e.value);
          normalize(ends);
        } else {
          ends.absent = true;
        }
      }
    }
    if (st.present) pass_through(st.value);
    normalize(ends);
  }
  return ends.empty() ? verdict::not_linearizable : verdict::linearizable;
}

std::size_t key_checker::memory_bytes() const {
  return ops_.capacity() * sizeof(op) + segments_.capacity() * sizeof(segment) + counts_.capacity() * sizeof(value_count) +
         sub_.capacity() * sizeof(key_op) + sub_order_.capacity() * 4 + evidence_.capacity() * 4;
}

verdict key_checker::check(std::span<const key_op> ops, const deadline& d, std::vector<std::uint32_t>* order,
                           const key_check_options& options) {
  input_ = ops;
  segments_judged_ = counted_ = 0;
  out_of_memory_ = false;
  evidence_.clear();
  if (options.memory_budget && ops.size() * (sizeof(op) + sizeof(key_op) + sizeof(segment)) > options.memory_budget) {
    out_of_memory_ = true;
    return verdict::unknown;
  }
  prepare(ops);

  state_set states;
  if (options.initially_present) {
    states.values.push_back(options.initial_value);
  } else {
    states.absent = true;
  }
  std::vector<state_set> starts_at;  // kept only to build a witness
  std::size_t state_bytes = 0;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    segment& s = segments_[i];
    const bool last = i + 1 == segments_.size();
    if (!s.concurrent && !last) {
      // A segment without a common point is judged together with what
      // follows, up to the next segment worth counting on its own; when
      // finding the states it may end in would take too many searches, up to
      // the end (Lemma 1 read backwards: exact either way).
      std::size_t j = i + 1;
      while (j < segments_.size() && !(segments_[j].concurrent && segments_[j].end - segments_[j].begin >= options.counted_segment_min)) ++j;
      std::size_t until = j - 1;
      if (until == i) {
        count(s);
        std::size_t inserted = 0;
        for (const value_count& v : counts_) inserted += v.inserts || v.optional_inserts ? 1 : 0;
        if (start_classes(states).size() * (inserted + 2) > probe_limit) until = segments_.size() - 1;
      }
      if (until > i) {
        for (std::size_t k = i; k < until; ++k) {
          segments_[k + 1].begin = s.begin;
          segments_[k + 1].concurrent = false;
        }
        i = until - 1;
        continue;
      }
    }
    count(s);
    if (order) {
      state_bytes += states.values.size() * sizeof(value_type) + sizeof(state_set);
      starts_at.push_back(states);
    }
    state_set ends;
    const verdict v = ends_of(s, states, last, d, options, ends);
    ++segments_judged_;
    counted_ += s.concurrent ? 1 : 0;
    if (v == verdict::unknown) return v;
    if (v == verdict::not_linearizable) {
      for (std::uint32_t k = 0; k < s.end; ++k) evidence_.push_back(ops_[k].pos);
      return v;
    }
    states = std::move(ends);
    if ((i & 1023) == 1023 && d.passed()) return verdict::unknown;
    if (options.memory_budget && memory_bytes() + state_bytes + states.values.capacity() * sizeof(value_type) > options.memory_budget) {
      out_of_memory_ = true;
      return verdict::unknown;
    }
  }
  if (!order) return verdict::linearizable;

  // A witness: from the last segment back, a start state each segment can
  // be passed from to the state the next one was passed from.
  order->clear();
  std::vector<segment> judged;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    if (i + 1 < segments_.size() && segments_[i + 1].begin == segments_[i].begin) continue;  // joined to the next
    judged.push_back(segments_[i]);
  }
  std::vector<std::vector<std::uint32_t>> pieces(judged.size());
  std::optional<start_state> target;
  for (std::size_t i = judged.size(); i-- > 0;) {
    const segment& s = judged[i];
    count(s);
    std::vector<start_state> tries = start_classes(starts_at[i]);
    if (target && target->present && contains(starts_at[i].values, target->value)) tries.push_back(*target);
    bool found = false;
    for (const start_state& st : tries) {
      pieces[i].clear();
      if (s.concurrent) {
        state_set ends;
        counted_ends(st, ends);
        normalize(ends);
        start_state e{false, 0};
        if (target) {
          e = *target;
          if (e.present ? !contains(ends.values, e.value) : !ends.absent) continue;
        } else if (ends.empty()) {
          continue;
        } else if (!ends.absent) {
          e = start_state{true, ends.values.front()};
        }
        found = counted_witness(s, st, e, pieces[i]);
      } else {
        found = searched(s, st, target ? &*target : nullptr, d, options, &pieces[i]) == verdict::linearizable;
      }
      if (found) {
        target = st;
        break;
      }
    }
    if (!found) return verdict::unknown;  // only a bound (time, memory) stops a witness the forward pass promised
  }
  for (const auto& piece : pieces) order->insert(order->end(), piece.begin(), piece.end());
  return verdict::linearizable;
}

}  // namespace gfsl::lin
