// Ordered-map histories linearizable by construction, for tests and the
// benchmark: teams run operations one after another on a clock; each
// operation takes effect at a point of its interval, and a sequential
// std::map applied in the order of those points gives the answers. Written
// values are unique (a counter). Pending operations (ret never) took effect
// at their point, or, for some, not at all; so did those that ended in an
// error (a status other than ok, their return stamp kept).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "linearizability/range_model.hpp"

namespace gfsl::lin::ranges {

struct range_gen_options {
  range_model model = range_model::ordered_map;
  std::uint32_t ops = 1000;
  std::uint32_t keys = 100;  // keys 1 .. keys
  std::uint32_t teams = 4;
  // Percentages of the mix; the rest are finds.
  double insert_pct = 30, erase_pct = 20, upsert_pct = 0, range_pct = 10, snapshot_pct = 0, handle_read_pct = 0;
  std::uint32_t range_width = 10;
  std::uint32_t max_gap = 4, max_duration = 20;  // clock ticks between a team's operations, and each one's length
  double pending_pct = 0;                        // of all operations: never returned
  double error_pct = 0;                          // of all operations: ended in an error (took effect or not)
  std::uint64_t seed = 1;
};

inline range_history linearizable_range_history(const range_gen_options& o) {
  std::mt19937_64 rng(o.seed);
  auto pct = [&](double p) { return std::uniform_real_distribution<double>(0, 100)(rng) < p; };
  auto below = [&](std::uint64_t n) { return n ? std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng) : 0; };
  struct planned {
    range_record r;
    std::uint64_t point;
    std::uint64_t tie;
    bool applied = true;
  };
  std::vector<planned> plan(o.ops);
  std::vector<std::uint64_t> clock(std::max(1u, o.teams), 0);
  for (std::uint32_t i = 0; i < o.ops; ++i) {
    planned& p = plan[i];
    range_record& r = p.r;
    r.team = static_cast<team_id>(below(clock.size()));
    const double x = std::uniform_real_distribution<double>(0, 100)(rng);
    double acc = 0;
    auto is = [&](double share) { return x < (acc += share); };
    if (is(o.insert_pct)) r.op = range_op::insert;
    else if (is(o.erase_pct)) r.op = range_op::erase;
    else if (o.model == range_model::ordered_upsert_map && is(o.upsert_pct)) r.op = range_op::upsert;
    else if (is(o.range_pct)) r.op = range_op::range;
    else if (is(o.snapshot_pct)) r.op = range_op::snapshot;
    else r.op = range_op::find;
    r.key = static_cast<key_type>(1 + below(o.keys));
    if (r.op == range_op::range) {
      r.hi = std::min<std::uint64_t>(std::uint64_t{r.key} + o.range_width, std::uint64_t{o.keys} + 1);
    }
    std::uint64_t& t = clock[r.team];
    r.call = t + below(o.max_gap + 1);
    r.ret = r.call + below(o.max_duration + 1);
    t = r.ret + 1;
    p.point = r.call + below(r.ret - r.call + 1);
    p.tie = rng();
  }
  std::vector<std::uint32_t> order(o.ops);
  for (std::uint32_t i = 0; i < o.ops; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return plan[a].point != plan[b].point ? plan[a].point < plan[b].point : plan[a].tie < plan[b].tie;
  });
  std::map<key_type, value_type> m;
  std::vector<std::map<key_type, value_type>> snaps;
  value_type next_value = 1;
  range_history h;
  h.model = o.model;
  std::vector<std::vector<std::pair<key_type, value_type>>> answers(o.ops);
  for (std::uint32_t i : order) {
    planned& p = plan[i];
    range_record& r = p.r;
    const bool errored = pct(o.error_pct);
    const bool pending = errored || pct(o.pending_pct);
    if (pending) {
      if (errored) r.st = status::pool_exhausted;
      else r.ret = model::no_stamp;
      p.applied = r.op != range_op::snapshot && pct(70);
      if (r.op == range_op::snapshot) r.op = range_op::find;  // a pending snapshot's handle is never known
    }
    if (!pending && (r.op == range_op::find || r.op == range_op::range) && !snaps.empty() && pct(o.handle_read_pct)) {
      r.handle = below(snaps.size());
    }
    const std::map<key_type, value_type>& seen = r.handle == no_handle ? m : snaps[r.handle];
    switch (r.op) {
      case range_op::insert: {
        r.value = next_value++;
        const bool absent = !m.count(r.key);
        r.ok = absent;
        if (absent && p.applied) m[r.key] = r.value;
        break;
      }
      case range_op::upsert: {
        r.value = next_value++;
        r.ok = !m.count(r.key);
        r.ok_known = !pct(20);
        if (p.applied) m[r.key] = r.value;
        break;
      }
      case range_op::erase: {
        auto it = m.find(r.key);
        r.ok = it != m.end();
        r.value = r.ok ? it->second : 0;
        if (r.ok && p.applied) m.erase(it);
        break;
      }
      case range_op::find: {
        auto it = seen.find(r.key);
        r.ok = it != seen.end();
        r.value = r.ok ? it->second : 0;
        break;
      }
      case range_op::range:
        r.ok = true;
        for (auto it = seen.lower_bound(r.key); it != seen.end() && it->first < r.hi; ++it) answers[i].push_back(*it);
        break;
      case range_op::snapshot:
        r.handle = snaps.size();
        snaps.push_back(m);
        break;
    }
  }
  // In call order, as a recorder would write them.
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return plan[a].r.call != plan[b].r.call ? plan[a].r.call < plan[b].r.call : a < b;
  });
  h.ops.reserve(o.ops);
  for (std::uint32_t i : order) {
    range_record r = plan[i].r;
    r.pairs_from = static_cast<std::uint32_t>(h.pairs.size());
    r.pairs_count = static_cast<std::uint32_t>(answers[i].size());
    h.pairs.insert(h.pairs.end(), answers[i].begin(), answers[i].end());
    h.ops.push_back(r);
  }
  return h;
}

}  // namespace gfsl::lin::ranges
