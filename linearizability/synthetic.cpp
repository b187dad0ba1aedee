#include "linearizability/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <cstdint>
#include <utility>

namespace gfsl::lin {

std::vector<model::op_record> synthetic_history(const synthetic_options& o) {
  std::mt19937_64 rng(o.seed);
  auto below = [&](std::uint64_t n) { return n ? rng() % n : 0; };
  const std::uint32_t keys = std::max<std::uint32_t>(o.keys, 1);
  const std::uint32_t teams = std::max<std::uint32_t>(o.teams, 1);

  // present[k], value[k]: the map, applied in linearization order.
  std::vector<std::uint8_t> present(keys + 1, 0);
  std::vector<value_type> value(keys + 1, 0);

  std::vector<model::op_record> out;
  const auto prefill = static_cast<std::uint64_t>(std::llround(std::clamp(o.prefill, 0.0, 1.0) * keys));
  out.reserve(prefill + o.ops);
  {
    std::vector<key_type> all(keys);
    std::iota(all.begin(), all.end(), key_type{1});
    for (std::uint64_t i = 0; i < prefill; ++i) {
      std::swap(all[i], all[i + below(keys - i)]);
      model::op_record r;
      r.op.kind = op_kind::insert;
      r.op.key = all[i];
      r.op.value = static_cast<value_type>(rng());
      r.ok = true;
      r.call = model::prefill_call_stamp(i);
      r.ret = r.call + 1;
      present[r.op.key] = 1;
      value[r.op.key] = r.op.value;
      out.push_back(r);
    }
  }

  // Intervals, team by team, and a point in each.
  const std::uint64_t base = model::first_free_stamp(prefill);
  std::vector<std::uint64_t> point;
  point.reserve(o.ops);
  const std::uint64_t first = out.size();
  for (std::uint32_t t = 0; t < teams; ++t) {
    std::uint64_t clock = base + below(o.max_gap + 1);
    const std::uint64_t count = o.ops / teams + (t < o.ops % teams ? 1 : 0);
    for (std::uint64_t j = 0; j < count; ++j) {
      model::op_record r;
      r.team = t;
      const auto pct = static_cast<int>(below(100));
      r.op.kind = pct < o.insert_pct ? op_kind::insert : pct < o.insert_pct + o.delete_pct ? op_kind::remove : op_kind::contains;
      r.op.key = static_cast<key_type>(1 + below(keys));
      if (r.op.kind == op_kind::insert) r.op.value = static_cast<value_type>(rng());
      r.call = clock;
      r.ret = clock + 1 + below(std::max<std::uint64_t>(o.max_duration, 1));
      point.push_back(r.call + below(r.ret - r.call + 1));
      clock = r.ret + 1 + below(std::max<std::uint64_t>(o.max_gap, 1));
      out.push_back(r);
    }
  }

  // Answers in the order of the points.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order(point.size());
  for (std::uint32_t i = 0; i < point.size(); ++i) order[i] = {point[i], i};
  std::sort(order.begin(), order.end());
  if (o.pending) {
    // The last operation of the first `pending` teams never returns.
    std::uint64_t end = first;
    for (std::uint32_t t = 0; t < teams; ++t) {
      end += o.ops / teams + (t < o.ops % teams ? 1 : 0);
      if (t < o.pending && end > first && out[end - 1].team == t) out[end - 1].ret = model::no_stamp;
    }
  }
  for (const auto& [p, i] : order) {
    model::op_record& r = out[first + i];
    const bool pending = r.ret == model::no_stamp;
    if (pending && below(2) == 0) continue;  // it did not take effect
    const key_type k = r.op.key;
    bool ok = false;
    value_type v = 0;
    switch (r.op.kind) {
      case op_kind::insert:
        ok = !present[k];
        if (ok) present[k] = 1, value[k] = r.op.value;
        break;
      case op_kind::remove:
        ok = present[k];
        v = present[k] ? value[k] : 0;
        present[k] = 0;
        break;
      case op_kind::contains:
        ok = present[k];
        v = present[k] ? value[k] : 0;
        break;
    }
    if (!pending) r.ok = ok, r.value = v;  // a pending record's answer was never seen
  }
  return out;
}

std::vector<model::op_record> adversarial_history(const adversarial_options& o) {
  std::mt19937_64 rng(o.seed);
  auto below = [&](std::uint64_t n) { return n ? rng() % n : 0; };
  const std::uint32_t keys = std::max<std::uint32_t>(o.keys, 1);
  std::vector<model::op_record> out;
  out.reserve(o.ops);
  value_type fresh = 1;
  for (std::uint32_t k = 0; k < keys; ++k) {
    const std::uint64_t m = o.ops / keys + (k < o.ops % keys ? 1 : 0);
    const std::uint64_t width = o.width ? o.width : std::max<std::uint64_t>(m, 1);
    const std::uint64_t rounds = (m + width - 1) / width;
    std::uint64_t violated = o.violation && k == 0 ? rounds / 2 : rounds;  // rounds: none
    bool present = false;
    value_type value = 0;
    std::vector<std::uint32_t> order;
    for (std::uint64_t r = 0; r < rounds; ++r) {
      const std::uint64_t first = out.size(), count = std::min(width, m - r * width);
      const std::uint64_t base = 1 + r * (2 * width + 2);
      const bool quiet = r <= violated && violated < rounds;  // nothing optional before the violation
      for (std::uint64_t i = 0; i < count; ++i) {
        model::op_record rec;
        rec.team = static_cast<team_id>(i);
        const auto pct = static_cast<int>(below(100));
        rec.op.kind = pct < o.insert_pct ? op_kind::insert : pct < o.insert_pct + o.delete_pct ? op_kind::remove : op_kind::contains;
        rec.op.key = k + 1;
        if (rec.op.kind == op_kind::insert) rec.op.value = o.values ? static_cast<value_type>(1 + below(o.values)) : fresh++;
        rec.call = base + below(width);
        rec.ret = base + width + below(width);
        const auto fate = static_cast<int>(below(100));
        if (!quiet && fate < o.pending_pct) rec.ret = model::no_stamp;
        else if (!quiet && fate < o.pending_pct + o.error_pct) rec.st = status::pool_exhausted;
        out.push_back(rec);
      }
      order.resize(count);
      std::iota(order.begin(), order.end(), 0u);
      std::shuffle(order.begin(), order.end(), rng);
      std::int64_t balance = 0;  // successful inserts less successful deletes
      for (std::uint32_t i : order) {
        model::op_record& rec = out[first + i];
        if (rec.pending() && below(2) == 0) continue;  // it did not take effect
        bool ok = false;
        value_type v = 0;
        switch (rec.op.kind) {
          case op_kind::insert:
            ok = !present;
            if (ok) present = true, value = rec.op.value, ++balance;
            break;
          case op_kind::remove:
            ok = present;
            v = present ? value : 0;
            if (ok) --balance;
            present = false;
            break;
          case op_kind::contains:
            ok = present;
            v = present ? value : 0;
            break;
        }
        if (!rec.pending()) rec.ok = ok, rec.value = v;
      }
      if (r == violated) {
        // A round whose balance is not yet >= 0 passes the violation on.
        std::uint64_t victim = count;
        for (std::uint64_t i = 0; i < count && victim == count; ++i) {
          if (out[first + i].op.kind == op_kind::remove && out[first + i].ok) victim = i;
        }
        if (balance < 0 || victim == count) {
          if (r + 1 < rounds) ++violated;
          continue;
        }
        model::op_record& rec = out[first + victim];
        rec.op.kind = op_kind::insert;
        rec.op.value = rec.value;
        rec.value = 0;
      }
    }
  }
  return out;
}

hard_history hard_family_history(const hard_options& o) {
  std::mt19937_64 rng(o.seed);
  auto below = [&](std::uint64_t n) { return n ? rng() % n : 0; };
  const std::uint32_t teams = std::max<std::uint32_t>(o.in_flight, 1);
  hard_history out;
  std::vector<model::op_record>& h = out.records;
  h.reserve(o.ops + 1);
  std::vector<std::uint64_t> point;
  // With `flip`: in a window in the middle of the run only contains run, so
  // nothing can change the key between two of them that team 0 runs back to
  // back; the second one's answer is flipped, which no order can explain.
  const std::uint64_t d = std::max<std::uint64_t>(o.max_duration, 1);
  const std::uint64_t mid = (o.ops / teams) * (d / 2 + 2) / 2 + 2;
  const std::uint64_t quiet_from = mid, quiet_to = mid + 4 * d + 8;
  std::uint32_t first_read = 0, second_read = 0;
  int reads_seen = 0;
  for (std::uint32_t t = 0; t < teams; ++t) {
    std::uint64_t clock = 1 + below(4);
    const std::uint64_t count = o.ops / teams + (t < o.ops % teams ? 1 : 0);
    for (std::uint64_t j = 0; j < count; ++j) {
      model::op_record r;
      r.team = t;
      const auto pct = static_cast<int>(below(100));
      r.op.kind = pct < o.insert_pct ? op_kind::insert : pct < o.insert_pct + o.delete_pct ? op_kind::remove : op_kind::contains;
      r.op.key = 1;
      if (r.op.kind == op_kind::insert) r.op.value = static_cast<value_type>(1 + below(std::max<std::uint32_t>(o.values, 1)));
      r.call = clock;
      r.ret = clock + 1 + below(d);
      point.push_back(r.call + below(r.ret - r.call + 1));
      clock = r.ret + 1 + below(2);
      const auto fate = static_cast<int>(below(100));
      if (fate < o.pending_pct) r.ret = model::no_stamp;
      else if (fate < o.pending_pct + o.error_pct) r.st = status::pool_exhausted;
      if (o.flip && r.call <= quiet_to && (r.ret == model::no_stamp || r.ret >= quiet_from)) {
        r.op.kind = op_kind::contains;
        r.op.value = 0;
        if (t == 0 && r.call > quiet_from && r.ret != model::no_stamp && r.ret < quiet_to && reads_seen < 2) {
          r.st = status::ok;
          (reads_seen++ == 0 ? first_read : second_read) = static_cast<std::uint32_t>(h.size());
        }
      }
      h.push_back(r);
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order(point.size());
  for (std::uint32_t i = 0; i < point.size(); ++i) order[i] = {point[i], i};
  std::sort(order.begin(), order.end());
  bool present = false;
  value_type value = 0;
  for (const auto& [p, i] : order) {
    model::op_record& r = h[i];
    if (r.pending() && below(2) == 0) continue;  // it did not take effect
    bool ok = false;
    value_type v = 0;
    switch (r.op.kind) {
      case op_kind::insert:
        ok = !present;
        if (ok) present = true, value = r.op.value;
        break;
      case op_kind::remove:
        ok = present;
        v = present ? value : 0;
        present = false;
        break;
      case op_kind::contains:
        ok = present;
        v = present ? value : 0;
        break;
    }
    if (!r.pending()) r.ok = ok, r.value = v;
  }
  if (o.flip && reads_seen == 2) {
    model::op_record& r = h[second_read];
    (void)first_read;
    if (r.ok) r.ok = false, r.value = 0;
    else r.ok = true, r.value = 1;
  }
  if (o.violating_key) {
    model::op_record r;
    r.team = teams;
    r.op.kind = op_kind::contains;
    r.op.key = 2;
    r.ok = true;
    r.value = 7;  // never inserted: no order explains it
    r.call = 2;
    r.ret = 3;
    h.insert(o.violating_first ? h.begin() : h.end(), r);
  }
  for (std::uint32_t i = 0; i < h.size(); ++i) {
    if (h[i].op.kind == op_kind::remove && h[i].ok && !h[i].pending() && static_cast<int>(below(100)) < o.unrecorded_pct) {
      out.unrecorded_values.push_back(i);
    }
  }
  return out;
}

}  // namespace gfsl::lin
