#include "linearizability/set_checker.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

namespace gfsl::lin {

namespace {

constexpr std::uint64_t infinity = std::numeric_limits<std::uint64_t>::max();

// Above this many words of remembered configurations the memo starts over:
// forgetting is sound, it only costs repeated work.
constexpr std::size_t memo_words_limit = std::size_t{1} << 24;

std::uint64_t mix(std::uint64_t h, std::uint64_t w) {
  h ^= w + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h *= 0xFF51AFD7ED558CCDull;
  return h ^ (h >> 32);
}

}  // namespace

void set_key_checker::prepare(std::span<const key_op> ops) {
  call_.clear();
  ret_.clear();
  val_.clear();
  cls_.clear();
  optional_.clear();
  source_.clear();
  opt_.clear();
  by_ret_.clear();
  finite_optional_ = false;
  for (std::uint32_t s = 0; s < ops.size(); ++s) {
    const key_op& o = ops[s];
    op_class c;
    if (!classify(o, c)) continue;
    const std::uint32_t i = static_cast<std::uint32_t>(call_.size());
    call_.push_back(o.call);
    ret_.push_back(o.optional && o.ret == never_returned ? infinity : o.ret);
    val_.push_back(o.value);
    cls_.push_back(c);
    optional_.push_back(o.optional ? 1 : 0);
    source_.push_back(s);
    if (o.optional) {
      opt_.push_back(i);
      if (o.ret != never_returned) finite_optional_ = true;
    } else {
      by_ret_.push_back(i);
    }
  }
  n_ = static_cast<std::uint32_t>(call_.size());
  must_ = static_cast<std::uint32_t>(by_ret_.size());
}

// Per-value lists for R3, built only when the search runs.
void set_key_checker::prepare_search() {
  inserters_.clear();
  needers_.clear();
  for (std::uint32_t i = 0; i < n_; ++i) {
    if (cls_[i] == write_insert || cls_[i] == opt_insert) inserters_.emplace_back(val_[i], i);
    if (cls_[i] == read_value || cls_[i] == write_delete) needers_.emplace_back(val_[i], i);
  }
  std::sort(inserters_.begin(), inserters_.end());
  std::sort(needers_.begin(), needers_.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : call_[a.second] > call_[b.second];
  });
  std::sort(by_ret_.begin(), by_ret_.end(),
            [&](std::uint32_t a, std::uint32_t b) { return std::tie(ret_[a], a) < std::tie(ret_[b], b); });
}

// No optional operation and no two intervals overlapping: the real-time order
// is total, so it is the only candidate linearization.
bool set_key_checker::sequential_pass(std::vector<std::uint32_t>* order, const key_check_options& options) {
  bool present = options.initially_present;
  value_type value = options.initial_value;
  for (std::uint32_t i = 0; i < n_; ++i) {
    const value_type v = val_[i];
    stuck_ = source_[i];
    switch (cls_[i]) {
      case read_absent: if (present) return false; break;
      case read_present: if (!present) return false; break;
      case read_value: if (!present || value != v) return false; break;
      case write_insert: if (present) return false; present = true; value = v; break;
      case write_delete: if (!present || value != v) return false; present = false; break;
      case write_delete_any: if (!present) return false; present = false; break;
      default: return false;
    }
  }
  if (order) order->assign(source_.begin(), source_.end());
  return true;
}

bool set_key_checker::legal_read(std::uint32_t i) const {
  switch (cls_[i]) {
    case read_absent: return !present_;
    case read_present: return present_;
    case read_value: return present_ && value_ == val_[i];
    default: return false;
  }
}

void set_key_checker::linearize(std::uint32_t i) {
  done_[i] = 1;
  log_.push_back(i);
  max_call_ = std::max(max_call_, call_[i]);
  switch (cls_[i]) {
    case write_insert:
    case opt_insert:
      present_ = true;
      value_ = val_[i];
      break;
    case write_delete:
    case write_delete_any:
    case opt_delete:
      present_ = false;
      break;
    default: break;
  }
  while (rp_ < must_ && done_[by_ret_[rp_]]) ++rp_;
  const std::uint64_t m = rp_ < must_ ? ret_[by_ret_[rp_]] : infinity;
  while (ce_ < n_ && call_[ce_] <= m) ++ce_;
  while (lo_ < n_ && (done_[lo_] || optional_[lo_])) ++lo_;
}

// The earliest end among optional operations that may still take effect
// (their end is not before a call already linearized). An operation may be
// moved to the front of a linearization only if its call is not after this:
// otherwise such an optional operation could no longer follow it.
std::uint64_t set_key_checker::optional_bound() const {
  std::uint64_t f = infinity;
  for (std::uint32_t i : opt_) {
    if (!done_[i] && ret_[i] >= max_call_) f = std::min(f, ret_[i]);
  }
  return f;
}

// Linearizes, without branching, every operation that changes nothing, may go
// next and whose answer holds in the current state: if any linearization
// exists, one exists that starts with it (README: R1).
void set_key_checker::closure() {
  bool again = true;
  while (again) {
    again = false;
    std::uint64_t f = finite_optional_ ? optional_bound() : infinity;
    for (std::uint32_t i = lo_; i < ce_; ++i) {
      if ((++ticks_ & 4095) == 0 && deadline_->passed()) {
        expired_ = true;
        return;
      }
      if (done_[i] || optional_[i] || !is_read(i) || call_[i] > f || !legal_read(i)) continue;
      linearize(i);
      if (finite_optional_) {
        const std::uint64_t nf = optional_bound();
        if (nf != f) again = true;  // a bound that moved may admit a read passed over
        f = nf;
      }
    }
  }
}

void set_key_checker::restore(const frame& f) {
  for (std::size_t k = f.log_size; k < log_.size(); ++k) done_[log_[k]] = 0;
  log_.resize(f.log_size);
  rp_ = f.rp;
  ce_ = f.ce;
  lo_ = f.lo;
  max_call_ = f.max_call;
  present_ = f.present;
  value_ = f.value;
}

// Zones (after Gibbons and Korach's test for registers with unique writes):
// a value inserted by exactly one operation, a completed one, is present in
// one period only, which must contain the moment between the earliest return
// and the latest call among that insert, the contains that found the value
// and the delete that removed it. Whatever overlaps such a zone's interior
// completely must hold with that value present. Each failure below names a
// few operations whose answers, with the facts the test relies on, cannot all
// hold (README: zones).
bool set_key_checker::zone_refutation(const key_check_options& options) {
  auto refute = [&](std::initializer_list<std::uint32_t> ops) {
    evidence_.clear();
    for (std::uint32_t i : ops) {
      if (i != 0xFFFFFFFFu && std::find(evidence_.begin(), evidence_.end(), source_[i]) == evidence_.end())
        evidence_.push_back(source_[i]);
    }
    std::sort(evidence_.begin(), evidence_.end());
    // No search ran: the operation stuck at is the latest called of those
    // whose answers cannot all hold (its answer is the one the others rule
    // out), not the key's first operation.
    if (!evidence_.empty()) stuck_ = evidence_.back();
    return true;
  };
  constexpr std::uint32_t none = 0xFFFFFFFFu;
  by_value_.clear();
  bool any_ender = false;  // a delete whose value is unknown, or a pending one, may end any period
  for (std::uint32_t i = 0; i < n_; ++i) {
    const std::uint8_t c = cls_[i];
    if (c == write_delete_any || c == opt_delete) any_ender = true;
    if (c == write_insert || c == opt_insert || c == read_value || c == write_delete) by_value_.emplace_back(val_[i], i);
  }
  std::sort(by_value_.begin(), by_value_.end());
  zones_.clear();
  const bool start_present = options.initially_present;
  for (std::size_t k = 0; k < by_value_.size();) {
    std::size_t e = k;
    const value_type v = by_value_[k].first;
    std::uint32_t inserts = 0, ins = none, del = none, del2 = none;
    while (e < by_value_.size() && by_value_[e].first == v) {
      const std::uint32_t i = by_value_[e++].second;
      if (cls_[i] == write_insert || cls_[i] == opt_insert) ++inserts, ins = i;
      if (cls_[i] == write_delete) (del == none ? del : del2) = i;
    }
    const bool initial = start_present && options.initial_value == v;
    if (inserts == 0 && !initial) {
      return refute({by_value_[k].second});  // a value that was never inserted was found or removed
    }
    if (inserts != 1 || initial || optional_[ins]) {
      k = e;
      continue;
    }
    if (del2 != none) return refute({ins, del, del2});  // removed twice, inserted once
    zone z{0, infinity, ins, ins, none, v};
    std::uint64_t lo = ret_[ins];
    for (std::size_t j = k; j < e; ++j) {
      const std::uint32_t i = by_value_[j].second;
      if (i == ins) continue;
      if (ret_[i] < call_[ins]) return refute({ins, i});  // saw the value before its insert was called
      if (ret_[i] < lo) lo = ret_[i], z.at_lo = i;
      if (z.at_hi == none || call_[i] > call_[z.at_hi]) z.at_hi = i;
    }
    z.lo = lo;
    if (del != none) {
      if (call_[z.at_hi] > ret_[del]) return refute({ins, del, z.at_hi});  // found after it was removed
      z.hi = call_[z.at_hi];
    } else if (!any_ender) {
      z.hi = infinity;  // nothing can ever remove it
    } else {
      z.hi = z.at_hi == none ? 0 : call_[z.at_hi];
    }
    if (z.lo < z.hi) zones_.push_back(z);
    k = e;
  }
  std::sort(zones_.begin(), zones_.end(), [](const zone& a, const zone& b) { return a.lo < b.lo; });
  for (std::size_t k = 1; k < zones_.size(); ++k) {
    const zone& a = zones_[k - 1];
    const zone& b = zones_[k];
    if (b.lo < a.hi) return refute({a.ins, a.at_lo, a.at_hi, b.ins, b.at_lo, b.at_hi});  // two values present at once
  }
  if (zones_.empty()) return false;
  // Completed operations inside a zone must hold with its value present.
  for (std::uint32_t i = 0; i < n_; ++i) {
    if (optional_[i]) continue;
    auto it = std::upper_bound(zones_.begin(), zones_.end(), call_[i], [](std::uint64_t c, const zone& z) { return c <= z.lo; });
    if (it == zones_.begin()) continue;
    const zone& z = *(it - 1);
    if (!(z.lo < call_[i] && ret_[i] < z.hi)) continue;
    const std::uint8_t c = cls_[i];
    const bool holds = c == read_present || (c == read_value && val_[i] == z.value);
    if (!holds) return refute({z.ins, z.at_lo, z.at_hi, i});
  }
  return false;
}

// A state lasts until an operation that changes it is linearized, and none
// can be before its call: every completed operation that returns before the
// earliest such call must be linearized in this state, so it must hold in it
// (README: R3).
// `skip`: an operation about to be linearized (not an ender, not pending).
bool set_key_checker::doomed(bool present, value_type value, std::uint32_t skip) const {
  std::uint64_t ends = infinity;
  for (std::uint32_t i = lo_; i < n_ && call_[i] < ends; ++i) {
    if (done_[i] || i == skip) continue;
    const std::uint8_t c = cls_[i];
    const bool ender = present ? (c == write_delete && val_[i] == value) || c == write_delete_any || c == opt_delete
                               : c == write_insert || c == opt_insert;
    if (ender && (!optional_[i] || ret_[i] >= max_call_)) ends = call_[i];
  }
  for (std::uint32_t i : opt_) {
    if (done_[i] || ret_[i] < max_call_ || call_[i] >= ends) continue;
    if (present ? cls_[i] == opt_delete : cls_[i] == opt_insert) ends = call_[i];
  }
  if (present) {
    // With no other insert of the value left, this period is its last: it
    // lasts until the last operation that needs the value has gone, and
    // that one cannot go before its call.
    auto first = [&](const std::vector<std::pair<value_type, std::uint32_t>>& v) {
      return std::lower_bound(v.begin(), v.end(), std::make_pair(value, std::uint32_t{0}),
                              [](const auto& a, const auto& b) { return a.first < b.first; });
    };
    bool last_period = true;
    for (auto it = first(inserters_); it != inserters_.end() && it->first == value && last_period; ++it) {
      const std::uint32_t i = it->second;
      if (!done_[i] && i != skip && (!optional_[i] || ret_[i] >= max_call_)) last_period = false;
    }
    if (last_period) {
      for (auto it = first(needers_); it != needers_.end() && it->first == value; ++it) {
        if (!done_[it->second]) {
          ends = std::max(ends, call_[it->second]);
          break;
        }
      }
    }
  }
  for (std::uint32_t k = rp_; k < must_; ++k) {
    const std::uint32_t i = by_ret_[k];
    if (ret_[i] >= ends) break;
    if (done_[i] || i == skip) continue;
    const std::uint8_t c = cls_[i];
    const bool holds = c == read_absent ? !present : c == read_present ? present : c == read_value ? present && value == val_[i] : false;
    if (!holds) return true;
  }
  return false;
}

// The moves worth trying from the current configuration, most promising
// first: one write per class (the one that returns first), and the rare read
// the closure could not take for an optional operation's sake.
void set_key_checker::collect_choices() {
  const std::uint64_t m = rp_ < must_ ? ret_[by_ret_[rp_]] : infinity;
  const std::uint64_t f = finite_optional_ ? optional_bound() : infinity;
  const std::size_t begin = choices_.size();
  for (std::uint32_t i = lo_; i < ce_; ++i) {
    if (done_[i] || optional_[i]) continue;
    const std::uint8_t c = cls_[i];
    if (present_ ? (c == write_delete && val_[i] == value_) || c == write_delete_any : c == write_insert) {
      choices_.push_back(i);
    } else if (is_read(i) && legal_read(i)) {
      choices_.push_back(i);  // passed over by the closure: its call is after an optional operation's end
    }
  }
  for (std::uint32_t i : opt_) {
    if (done_[i] || call_[i] > m || ret_[i] < max_call_) continue;
    if (present_ ? cls_[i] == opt_delete : cls_[i] == opt_insert) choices_.push_back(i);
  }
  // One per class: same class, same effect; the earliest return dominates
  // when its call is not after f (README: R2).
  auto group = [&](std::uint32_t i) {
    return (static_cast<std::uint64_t>(cls_[i]) << 32) | (cls_[i] == write_insert || cls_[i] == opt_insert ? val_[i] : 0u);
  };
  auto earlier = [&](std::uint32_t a, std::uint32_t b) { return std::tie(ret_[a], a) < std::tie(ret_[b], b); };
  const std::size_t count = choices_.size() - begin;
  if (f == infinity && count > 1) {
    // No optional operation ends early: every class keeps its earliest
    // return, found through a small hash table (O(choices)).
    std::size_t cap = 16;
    while (cap < 2 * count) cap *= 2;
    class_key_.assign(cap, ~std::uint64_t{0});
    class_pos_.resize(cap);
    std::size_t out = begin;
    for (std::size_t k = begin; k < choices_.size(); ++k) {
      const std::uint32_t i = choices_[k];
      const std::uint64_t key = group(i);
      for (std::size_t slot = (key * 0x9E3779B97F4A7C15ull) >> 40 & (cap - 1);; slot = (slot + 1) & (cap - 1)) {
        if (class_key_[slot] == ~std::uint64_t{0}) {
          class_key_[slot] = key;
          class_pos_[slot] = static_cast<std::uint32_t>(out);
          choices_[out++] = i;
          break;
        }
        if (class_key_[slot] == key) {
          std::uint32_t& kept = choices_[class_pos_[slot]];
          if (earlier(i, kept)) kept = i;
          break;
        }
      }
    }
    choices_.resize(out);
  } else if (count > 1) {
    std::sort(choices_.begin() + static_cast<std::ptrdiff_t>(begin), choices_.end(), [&](std::uint32_t a, std::uint32_t b) {
      return group(a) != group(b) ? group(a) < group(b) : earlier(a, b);
    });
    std::size_t out = begin;
    for (std::size_t k = begin; k < choices_.size();) {
      std::size_t e = k + 1;
      if (!is_read(choices_[k])) {
        while (e < choices_.size() && group(choices_[e]) == group(choices_[k])) ++e;
      }
      if (call_[choices_[k]] <= f) {
        choices_[out++] = choices_[k];
      } else {
        for (std::size_t j = k; j < e; ++j) choices_[out++] = choices_[j];
      }
      k = e;
    }
    choices_.resize(out);
  }

  // Order: the operation that must return first, if it can go now; then the
  // writes it waits for; then the rest, completed before optional, earliest
  // return first. Only the order of trying depends on this; the search picks
  // the best remaining choice when it needs one (pick_choice).
  const std::uint32_t d = by_ret_[rp_];
  const std::uint8_t dc = cls_[d];
  const bool wants_value = dc == read_value || dc == write_delete;
  auto priority = [&](std::uint32_t i) -> std::uint8_t {
    if (i == d) return 0;
    const std::uint8_t c = cls_[i];
    if ((c == write_insert || c == opt_insert) && wants_value && val_[i] == val_[d]) return 1;
    if (c == write_delete || c == write_delete_any || c == opt_delete) {
      if (present_ && (dc == read_absent || dc == write_insert || (wants_value && val_[d] != value_))) return 1;
    }
    return optional_[i] ? 3 : 2;
  };
  priority_.resize(choices_.size());
  for (std::size_t k = begin; k < choices_.size(); ++k) priority_[k] = priority(choices_[k]);
}

// Moves the best untried choice of `f` to f.next and returns it.
std::uint32_t set_key_checker::pick_choice(frame& f) {
  std::uint32_t best = f.next;
  for (std::uint32_t k = f.next + 1; k < f.choices_end; ++k) {
    const std::uint32_t a = choices_[k], b = choices_[best];
    if (std::tie(priority_[k], ret_[a], a) < std::tie(priority_[best], ret_[b], b)) best = k;
  }
  std::swap(choices_[best], choices_[f.next]);
  std::swap(priority_[best], priority_[f.next]);
  return choices_[f.next++];
}

// The configuration, exactly: the state, the first completed operation not
// done (all completed ones before it are done), the completed ones done after
// it (all called before the earliest pending return), and the optional ones
// done.
void set_key_checker::memo_key() {
  key_.clear();
  key_.push_back(present_ ? 1u : 0u);
  key_.push_back(present_ ? value_ : 0u);
  key_.push_back(lo_);
  key_.push_back(0);
  for (std::uint32_t i = lo_; i < ce_; ++i) {
    if (done_[i] && !optional_[i]) key_.push_back(i);
  }
  key_.push_back(0xFFFFFFFFu);
  for (std::uint32_t i : opt_) {
    if (done_[i]) key_.push_back(i);
  }
  key_[3] = static_cast<std::uint32_t>(key_.size());
}

namespace {
std::uint64_t hash_words(const std::vector<std::uint32_t>& k) {
  std::uint64_t h = 0x243F6A8885A308D3ull;
  for (std::uint32_t w : k) h = mix(h, w);
  return h | 1;  // 0 marks an empty slot
}
}  // namespace

bool set_key_checker::memo_contains() {
  if (table_used_ == 0) return false;
  const std::uint64_t h = hash_words(key_);
  const std::size_t mask = table_hash_.size() - 1;
  for (std::size_t s = h & mask;; s = (s + 1) & mask) {
    if (table_hash_[s] == 0) return false;
    if (table_hash_[s] != h) continue;
    const std::uint32_t off = table_off_[s];
    const std::uint32_t len = arena_[off];
    if (len == key_.size() && std::equal(key_.begin(), key_.end(), arena_.begin() + off + 1)) return true;
  }
}

void set_key_checker::memo_insert() {
  if (arena_.size() + key_.size() + 1 > memo_words_limit_) memo_clear();
  if (table_hash_.empty() || 2 * (table_used_ + 1) > table_hash_.size()) {
    const std::size_t size = table_hash_.empty() ? 1024 : 2 * table_hash_.size();
    std::vector<std::uint64_t> old_hash(size, 0);
    std::vector<std::uint32_t> old_off(size, 0);
    old_hash.swap(table_hash_);
    old_off.swap(table_off_);
    for (std::size_t s = 0; s < old_hash.size(); ++s) {
      if (old_hash[s] == 0) continue;
      for (std::size_t t = old_hash[s] & (size - 1);; t = (t + 1) & (size - 1)) {
        if (table_hash_[t] == 0) {
          table_hash_[t] = old_hash[s];
          table_off_[t] = old_off[s];
          break;
        }
      }
    }
  }
  const std::uint64_t h = hash_words(key_);
  const std::size_t mask = table_hash_.size() - 1;
  for (std::size_t s = h & mask;; s = (s + 1) & mask) {
    if (table_hash_[s] == 0) {
      table_hash_[s] = h;
      table_off_[s] = static_cast<std::uint32_t>(arena_.size());
      arena_.push_back(static_cast<std::uint32_t>(key_.size()));
      arena_.insert(arena_.end(), key_.begin(), key_.end());
      ++table_used_;
      return;
    }
  }
}

void set_key_checker::memo_clear() {
  arena_.clear();
  if (table_used_) {
    std::fill(table_hash_.begin(), table_hash_.end(), 0);
    table_used_ = 0;
  }
}

std::size_t set_key_checker::memory_bytes() const {
  const std::size_t per_op = call_.capacity() * 8 + ret_.capacity() * 8 + val_.capacity() * sizeof(value_type) + cls_.capacity() +
                             optional_.capacity() + done_.capacity() + (source_.capacity() + by_ret_.capacity() + opt_.capacity()) * 4 +
                             log_.capacity() * 4 + (inserters_.capacity() + needers_.capacity() + by_value_.capacity()) * 8 +
                             zones_.capacity() * sizeof(zone);
  const std::size_t search = frames_.capacity() * sizeof(frame) + choices_.capacity() * 4 + priority_.capacity() +
                             class_key_.capacity() * 8 + class_pos_.capacity() * 4 + key_.capacity() * 4;
  const std::size_t memo = arena_.capacity() * 4 + table_hash_.capacity() * 8 + table_off_.capacity() * 4;
  return per_op + search + memo;
}

verdict set_key_checker::check(std::span<const key_op> ops, const deadline& d, std::vector<std::uint32_t>* order,
                               const key_check_options& options) {
  nodes_ = 0;
  stuck_ = 0;
  out_of_memory_ = false;
  deadline_ = &d;
  ticks_ = 0;
  expired_ = false;
  // The memo may take a quarter of the budget; forgetting is sound.
  memo_words_limit_ = options.memory_budget ? std::min(memo_words_limit, options.memory_budget / 16) : memo_words_limit;
  if (options.memory_budget && ops.size() * 64 > options.memory_budget) {
    out_of_memory_ = true;
    return verdict::unknown;
  }
  prepare(ops);
  if (opt_.empty()) {
    bool disjoint = true;
    for (std::uint32_t i = 0; i + 1 < n_ && disjoint; ++i) disjoint = ret_[i] < call_[i + 1];
    if (disjoint) {
      if (sequential_pass(order, options)) return verdict::linearizable;
      evidence_.assign(source_.begin(), source_.end());
      return verdict::not_linearizable;
    }
  }

  if (zone_refutation(options)) return verdict::not_linearizable;
  evidence_.clear();
  prepare_search();

  done_.assign(n_, 0);
  log_.clear();
  max_call_ = 0;
  rp_ = ce_ = lo_ = 0;
  present_ = options.initially_present;
  value_ = options.initially_present ? options.initial_value : 0;
  std::uint32_t furthest = 0;
  auto note_progress = [&] {
    if (rp_ >= furthest && rp_ < must_) furthest = rp_, stuck_ = source_[by_ret_[rp_]];
  };
  {
    const std::uint64_t m = must_ ? ret_[by_ret_[0]] : infinity;
    while (ce_ < n_ && call_[ce_] <= m) ++ce_;
    while (lo_ < n_ && optional_[lo_]) ++lo_;
  }
  memo_clear();
  frames_.clear();
  choices_.clear();

  auto succeed = [&] {
    if (order) {
      order->clear();
      for (std::uint32_t i : log_) order->push_back(source_[i]);
    }
    return verdict::linearizable;
  };
  // Opens a node for the current configuration: false when nothing can go
  // next or the configuration is known to fail.
  auto open = [&] {
    const std::uint32_t begin = static_cast<std::uint32_t>(choices_.size());
    collect_choices();
    const std::uint32_t end = static_cast<std::uint32_t>(choices_.size());
    if (begin == end) return false;
    if (end - begin >= 2) {
      memo_key();
      if (memo_contains()) {
        choices_.resize(begin);
        return false;
      }
    }
    frames_.push_back(frame{static_cast<std::uint32_t>(log_.size()), rp_, ce_, lo_, max_call_, present_, value_, begin, end, begin});
    return true;
  };

  closure();
  if (expired_) return verdict::unknown;
  if (rp_ == must_) return succeed();
  note_progress();
  if (!open()) {
    evidence_.assign(source_.begin(), source_.end());
    return verdict::not_linearizable;
  }
  while (!frames_.empty()) {
    frame& f = frames_.back();
    if (f.next == f.choices_end) {
      const frame done = f;
      frames_.pop_back();
      restore(done);
      if (done.choices_end - done.choices_begin >= 2) {
        memo_key();
        memo_insert();
      }
      choices_.resize(done.choices_begin);
      continue;
    }
    const std::uint32_t c = pick_choice(f);
    restore(f);
    if (!is_read(c)) {
      // Writes whose resulting state cannot last long enough are not tried.
      const bool inserts = cls_[c] == write_insert || cls_[c] == opt_insert;
      if (doomed(inserts, inserts ? val_[c] : 0, c)) continue;
    }
    linearize(c);
    closure();
    if (expired_) return verdict::unknown;
    if (rp_ == must_) return succeed();
    note_progress();
    ++nodes_;
    if (options.node_budget && nodes_ >= options.node_budget) return verdict::unknown;
    // A step costs time in proportion to the operations in flight: on a big
    // key the deadline is looked at every step.
    if (((nodes_ & 1023) == 0 || n_ > 4096) && d.passed()) return verdict::unknown;
    open();
    if (options.memory_budget && memory_bytes() > options.memory_budget) {
      out_of_memory_ = true;
      return verdict::unknown;
    }
  }
  evidence_.assign(source_.begin(), source_.end());
  return verdict::not_linearizable;
}

}  // namespace gfsl::lin
