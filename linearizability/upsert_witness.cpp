#include "linearizability/upsert_witness.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>

namespace gfsl::lin {

namespace {

using namespace model_ops;

// A written value's period: its write, then the reads that answered it.
// lo: the earliest return among them; hi: the latest call.
struct cluster {
  std::uint32_t writer = 0;
  std::uint64_t lo = 0, hi = 0;
  std::vector<std::uint32_t> readers;  // by call (ops are)
  // Sort key (Lemma R2): min(lo, hi), backward (hi <= lo) before forward.
  std::uint64_t key() const { return std::min(lo, hi); }
  bool forward() const { return lo < hi; }
};

register_test_result verdict_of(register_test t, std::string why) {
  register_test_result r;
  r.outcome = t;
  r.why = std::move(why);
  return r;
}

}  // namespace

register_test_result upsert_register_test(const std::vector<model_op<upsert_key_model>>& ops) {
  constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
  std::vector<cluster> clusters;
  std::unordered_map<value_type, std::uint32_t> cluster_of;  // written value -> cluster
  std::vector<std::uint32_t> absent_reads, present_reads, value_reads;
  std::uint32_t first_kind_writes = 0;  // insert -> true, upsert -> inserted: they read the start state
  std::uint32_t first_kind = 0;
  std::vector<std::uint8_t> blind;  // per cluster: an upsert whose answer was not recorded

  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    if (o.optional) {
      if (o.in.code == find) continue;  // changes nothing, says nothing
      if (o.in.code != insert && o.in.code != upsert) {
        return verdict_of(register_test::not_applicable, "an erase that may or may not have taken effect");
      }
    }
    switch (o.optional ? upsert : o.in.code) {
      case insert:
        if (!o.out.ok) {
          present_reads.push_back(i);
          continue;
        }
        break;
      case upsert: break;
      case erase:
        if (o.out.ok) return verdict_of(register_test::not_applicable, "an erase that succeeded");
        absent_reads.push_back(i);
        continue;
      case find:
        if (!o.out.ok) absent_reads.push_back(i);
        else if (!o.out.value_known) present_reads.push_back(i);
        else value_reads.push_back(i);
        continue;
      default: return verdict_of(register_test::not_applicable, "an operation the upsert map does not have");
    }
    // A write of o.in.value.
    if (!cluster_of.emplace(o.in.value, static_cast<std::uint32_t>(clusters.size())).second) {
      return verdict_of(register_test::not_applicable, "a value written twice");
    }
    cluster c;
    c.writer = i;
    c.lo = o.ret;
    c.hi = o.call;
    clusters.push_back(std::move(c));
    // Pending writes are sorted out once the reads are mapped (Lemma R0).
    const bool unrecorded = !o.optional && o.in.code == upsert && !o.out.ok_known;
    blind.push_back(unrecorded ? 1 : 0);
    if (!o.optional && !unrecorded && o.out.ok) ++first_kind_writes;
  }

  // Reads of a value: into its period (Lemma R1); one nobody wrote holds nowhere.
  for (std::uint32_t i : value_reads) {
    auto it = cluster_of.find(ops[i].out.value);
    if (it == cluster_of.end()) return verdict_of(register_test::not_linearizable, "a read of a value no operation wrote");
    cluster& c = clusters[it->second];
    if (ops[i].ret < ops[c.writer].call) {
      return verdict_of(register_test::not_linearizable, "a read that returned before the write of its value was called");
    }
    c.lo = std::min(c.lo, ops[i].ret);
    c.hi = std::max(c.hi, ops[i].call);
    c.readers.push_back(i);
  }
  // Lemma R0: a pending write whose value was read took effect (a pending
  // insert, then, found the key absent; a pending upsert found either); one
  // whose value nobody read matters only as the first write, and is kept
  // apart as a candidate for it.
  std::vector<std::uint32_t> unread_pending;  // writers
  {
    std::vector<cluster> kept;
    std::vector<std::uint8_t> kept_blind;
    kept.reserve(clusters.size());
    for (std::uint32_t k = 0; k < clusters.size(); ++k) {
      const auto& w = ops[clusters[k].writer];
      if (w.optional && clusters[k].readers.empty()) {
        unread_pending.push_back(clusters[k].writer);
        continue;
      }
      if (w.optional) {
        if (w.in.code == insert) ++first_kind_writes;
        kept_blind.push_back(w.in.code == upsert ? 1 : 0);
      } else {
        kept_blind.push_back(blind[k]);
      }
      kept.push_back(std::move(clusters[k]));
    }
    clusters = std::move(kept);
    blind = std::move(kept_blind);
  }
  for (std::uint32_t k = 0; k < clusters.size(); ++k) {
    const auto& w = ops[clusters[k].writer];
    const bool first_kind_write = w.optional ? w.in.code == insert : (!blind[k] && w.out.ok);
    if (first_kind_write) first_kind = k;
  }
  if (first_kind_writes > 1) return verdict_of(register_test::not_linearizable, "two writes that each found the key absent");

  std::uint64_t absent_hi = 0;  // the latest call of a read of the start state
  for (std::uint32_t i : absent_reads) absent_hi = std::max(absent_hi, ops[i].call);
  std::uint64_t present_lo = none;  // the earliest return of a read of "some value"
  for (std::uint32_t i : present_reads) present_lo = std::min(present_lo, ops[i].ret);

  register_test_result r;
  auto reads_of_start = [&] {
    for (std::uint32_t i : absent_reads) r.witness.push_back(i);  // by call, as ops are
  };
  auto unread_first = [&](std::uint64_t lo_all, bool unmarked) -> std::optional<std::uint32_t> {
    // An unread pending write as the first one: before every period, the
    // rest in the canonical order unmarked, the some-value reads after it.
    if (first_kind_writes != 0 || !unmarked) return std::nullopt;
    for (std::uint32_t w : unread_pending) {
      if (ops[w].call <= lo_all && (absent_reads.empty() || absent_hi <= ops[w].ret) &&
          std::max(absent_reads.empty() ? 0 : absent_hi, ops[w].call) <= present_lo) {
        return w;
      }
    }
    return std::nullopt;
  };
  if (clusters.empty()) {
    std::optional<std::uint32_t> w;
    if (!present_reads.empty() && !(w = unread_first(none, true))) {
      return verdict_of(register_test::not_linearizable, "a read of a value where nothing was written");
    }
    r.outcome = register_test::linearizable;
    reads_of_start();
    if (w) {
      r.witness.push_back(*w);
      for (std::uint32_t i : present_reads) r.witness.push_back(i);  // by call; each after the write (Lemma R3)
    }
    return r;
  }

  // Every period comes after the reads of the start state (Lemma R1).
  std::uint64_t lo_min = none, lo_second = none;
  std::uint32_t lo_arg = 0;
  for (std::uint32_t k = 0; k < clusters.size(); ++k) {
    const std::uint64_t lo = clusters[k].lo;
    if (lo < lo_min) lo_second = lo_min, lo_min = lo, lo_arg = k;
    else if (lo < lo_second) lo_second = lo;
  }
  if (!absent_reads.empty() && absent_hi > lo_min) {
    return verdict_of(register_test::not_linearizable, "a read of the start state called after a written value was read or written");
  }

  // The canonical order (Lemma R2) and where its real-time condition fails.
  std::vector<std::uint32_t> sorted(clusters.size());
  for (std::uint32_t k = 0; k < sorted.size(); ++k) sorted[k] = k;
  std::sort(sorted.begin(), sorted.end(), [&](std::uint32_t a, std::uint32_t b) {
    const cluster &x = clusters[a], &y = clusters[b];
    if (x.key() != y.key()) return x.key() < y.key();
    if (x.forward() != y.forward()) return !x.forward();
    return a < b;
  });
  std::vector<std::uint32_t> bad;  // positions whose period some earlier one's ops were called after
  std::uint64_t hi_before = 0;
  bool any_before = false;
  for (std::uint32_t p = 0; p < sorted.size() && bad.size() < 2; ++p) {
    const cluster& c = clusters[sorted[p]];
    if (any_before && hi_before > c.lo) bad.push_back(p);
    hi_before = std::max(hi_before, c.hi);
    any_before = true;
  }

  // The first period (Lemma R3): the one write that found the key absent,
  // or, with none, an upsert whose answer was not recorded.
  std::vector<std::uint32_t> position(clusters.size());
  for (std::uint32_t p = 0; p < sorted.size(); ++p) position[sorted[p]] = p;
  auto first_fits = [&](std::uint32_t k) {
    const cluster& c = clusters[k];
    const std::uint64_t lo_others = k == lo_arg ? lo_second : lo_min;
    if (c.hi > lo_others) return false;
    for (std::uint32_t p : bad) {
      if (p != position[k]) return false;
    }
    return std::max(absent_reads.empty() ? 0 : absent_hi, ops[c.writer].call) <= present_lo;
  };
  std::uint32_t first = 0;
  bool found = false;
  if (first_kind_writes == 1) {
    first = first_kind;
    found = first_fits(first);
  } else {
    for (std::uint32_t k = 0; k < clusters.size() && !found; ++k) {
      if (blind[k] && first_fits(k)) first = k, found = true;
    }
  }
  std::optional<std::uint32_t> pending_first;
  if (!found) pending_first = unread_first(lo_min, bad.empty());
  if (!found && !pending_first) {
    return verdict_of(register_test::not_linearizable,
                      first_kind_writes == 1 ? "no order of the written values, the one that found the key absent first, respects real time"
                                             : "no order of the written values respects real time with a first one that may have found the key absent");
  }

  // The witness: the start state's reads, the first period, the others in
  // the canonical order, each its write then its reads; then the reads of
  // "some value", each at the point max(its call, the first write's point).
  r.outcome = register_test::linearizable;
  reads_of_start();
  auto emit = [&](std::uint32_t k) {
    r.witness.push_back(clusters[k].writer);
    for (std::uint32_t i : clusters[k].readers) r.witness.push_back(i);
  };
  const std::size_t first_write_at = r.witness.size();
  if (pending_first) {
    r.witness.push_back(*pending_first);
    for (std::uint32_t k : sorted) emit(k);
  } else {
    emit(first);
    for (std::uint32_t k : sorted) {
      if (k != first) emit(k);
    }
  }
  if (!present_reads.empty()) {
    std::vector<std::uint64_t> point(r.witness.size());
    std::uint64_t m = 0;
    for (std::size_t j = 0; j < r.witness.size(); ++j) point[j] = m = std::max(m, ops[r.witness[j]].call);
    const std::uint64_t first_point = point[first_write_at];
    std::vector<std::pair<std::uint64_t, std::uint32_t>> extra;  // (point, op)
    for (std::uint32_t i : present_reads) extra.emplace_back(std::max(ops[i].call, first_point), i);
    std::sort(extra.begin(), extra.end());
    std::vector<std::uint32_t> merged;
    merged.reserve(r.witness.size() + extra.size());
    std::size_t e = 0;
    for (std::size_t j = 0; j < r.witness.size(); ++j) {
      // After the first write, a read goes before the first operation whose point is past its own.
      while (j > first_write_at && e < extra.size() && extra[e].first < point[j]) merged.push_back(extra[e++].second);
      merged.push_back(r.witness[j]);
    }
    while (e < extra.size()) merged.push_back(extra[e++].second);
    r.witness = std::move(merged);
  }
  return r;
}

}  // namespace gfsl::lin
