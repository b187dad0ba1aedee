#include "linearizability/jit_search.hpp"

#include <algorithm>
#include <limits>

namespace gfsl::lin {

namespace {

using enum op_classes::op_class;

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// One state (0: absent; i: present with value i) through one operation:
// false when a completed operation's answer does not hold in it.
bool step_one(std::uint8_t c, std::uint32_t value, std::uint32_t s, std::uint32_t& next) {
  next = s;
  switch (c) {
    case read_absent: return s == 0;
    case read_present: return s != 0;
    case read_value: return s == value;
    case write_insert: next = value; return s == 0;
    case write_delete: next = 0; return s == value;
    case write_delete_any: next = 0; return s != 0;
    case opt_insert: next = s == 0 ? value : s; return true;
    case opt_delete: next = 0; return true;
    default: return false;
  }
}

bool is_optional(std::uint8_t c) { return c == opt_insert || c == opt_delete; }

}  // namespace

bool jit_key_search::has(const state_set& s, std::uint32_t value) const {
  const auto b = sets_.begin() + s.off, e = b + s.len;
  return std::binary_search(b, e, value);
}

bool jit_key_search::same(const state_set& a, const state_set& b) const {
  return a.absent == b.absent && a.len == b.len && std::equal(sets_.begin() + a.off, sets_.begin() + a.off + a.len, sets_.begin() + b.off);
}

jit_key_search::effect jit_key_search::effect_of(std::uint8_t c, std::uint32_t value, const state_set& s) const {
  switch (c) {
    case read_absent: return !s.absent ? effect::fails : s.len == 0 ? effect::none : effect::changes;
    case read_present: return s.len == 0 ? effect::fails : s.absent ? effect::changes : effect::none;
    case read_value: return !has(s, value) ? effect::fails : s.len == 1 && !s.absent ? effect::none : effect::changes;
    case write_insert: return s.absent ? effect::changes : effect::fails;
    case write_delete: return has(s, value) ? effect::changes : effect::fails;
    case write_delete_any: return s.len ? effect::changes : effect::fails;
    case opt_insert: return s.absent && !has(s, value) ? effect::changes : effect::none;
    case opt_delete: return s.len && !s.absent ? effect::changes : effect::none;
    default: return effect::fails;
  }
}

bool jit_key_search::step(std::uint8_t c, std::uint32_t value, const state_set& s, state_set& out) {
  out.off = static_cast<std::uint32_t>(sets_.size());
  out.len = 0;
  out.absent = false;
  auto copy_values = [&] {
    for (std::uint32_t k = 0; k < s.len; ++k) sets_.push_back(sets_[s.off + k]);
    out.len = s.len;
  };
  auto only = [&](std::uint32_t v) {
    sets_.push_back(v);
    out.len = 1;
  };
  switch (c) {
    case read_absent:
      if (!s.absent) return false;
      out.absent = true;
      return true;
    case read_present:
      if (!s.len) return false;
      copy_values();
      return true;
    case read_value:
      if (!has(s, value)) return false;
      only(value);
      return true;
    case write_insert:
      if (!s.absent) return false;
      only(value);
      return true;
    case write_delete:
      if (!has(s, value)) return false;
      out.absent = true;
      return true;
    case write_delete_any:
      if (!s.len) return false;
      out.absent = true;
      return true;
    case opt_insert:
      out.absent = s.absent;
      copy_values();
      if (s.absent && !has(s, value)) {
        sets_.push_back(value);
        std::inplace_merge(sets_.begin() + out.off, sets_.end() - 1, sets_.end());
        ++out.len;
      }
      return true;
    case opt_delete:
      out.absent = s.absent || s.len;
      copy_values();
      return true;
    default: return false;
  }
}

void jit_key_search::collect_choices(const frame& f, std::uint64_t m) {
  // Candidates, one per effect (the one returning first: rule J3), keyed by
  // (class, value).
  scratch_.clear();
  const std::size_t n = ops_.size();
  for (std::uint32_t i = f.lo; i < n && ops_[i].call <= m; ++i) {
    if (done_[i]) continue;
    const op& o = ops_[i];
    const effect e = effect_of(o.c, o.value, f.s);
    if (e == effect::fails) continue;
    if (o.c <= read_value && e == effect::none) {
      // Rule J2: a read that holds in every state goes at once, alone.
      choices_.push_back(i);
      return;
    }
    const std::uint64_t k = std::uint64_t{o.value} << 8 | o.c;
    bool merged = false;
    for (auto& [key, at] : scratch_) {
      if (key != k) continue;
      if (o.ret < ops_[at].ret) at = i;
      merged = true;
      break;
    }
    if (!merged) scratch_.emplace_back(k, i);
  }
  // The operation that must return first goes first when it can, then the
  // rest by call: the order of a linear history, tried first.
  const std::uint32_t first = by_ret_[f.rp];
  for (const auto& [key, at] : scratch_) {
    if (at == first) choices_.push_back(at);
  }
  std::sort(scratch_.begin(), scratch_.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  for (const auto& [key, at] : scratch_) {
    if (at != first) choices_.push_back(at);
  }
  // Operations that never returned, one per effect, the earliest called not
  // yet used (J4), and only where they change the state set (J5).
  for (std::uint32_t k = 0; k < classes_.size(); ++k) {
    const pending_class& pc = classes_[k];
    if (used_[k] == pc.calls.size() || pc.calls[used_[k]] > m) continue;
    if (effect_of(pc.c, pc.value, f.s) != effect::changes) continue;
    choices_.push_back(static_cast<std::uint32_t>(n + k));
  }
}

bool jit_key_search::enter(frame& child) {
  key_.clear();
  key_.push_back(child.lo);
  key_.push_back(0);
  for (std::uint32_t i = child.lo; i < child.hi; ++i) {
    if (done_[i]) key_.push_back(i);
  }
  key_[1] = static_cast<std::uint32_t>(key_.size() - 2);
  key_.insert(key_.end(), used_.begin(), used_.end());
  key_.push_back(child.s.absent ? 1 : 0);
  std::uint64_t set_hash = child.s.absent ? 0x5EEDull : 0;
  for (std::uint32_t k = 0; k < child.s.len; ++k) {
    const std::uint32_t v = sets_[child.s.off + k];
    key_.push_back(v);
    set_hash = splitmix(set_hash ^ v);
  }
  std::uint64_t h = splitmix(child.zobrist ^ child.class_hash ^ set_hash);
  if ((table_used_ + 1) * 2 > table_hash_.size()) {
    const std::size_t size = std::max<std::size_t>(1024, table_hash_.size() * 2);
    std::vector<std::uint64_t> hashes(size, 0);
    std::vector<std::uint32_t> offs(size, 0);
    for (std::size_t k = 0; k < table_hash_.size(); ++k) {
      if (!table_off_[k]) continue;
      std::size_t at = table_hash_[k] & (size - 1);
      while (offs[at]) at = (at + 1) & (size - 1);
      hashes[at] = table_hash_[k];
      offs[at] = table_off_[k];
    }
    table_hash_.swap(hashes);
    table_off_.swap(offs);
  }
  const std::size_t mask = table_hash_.size() - 1;
  std::size_t at = h & mask;
  for (; table_off_[at]; at = (at + 1) & mask) {
    if (table_hash_[at] != h) continue;
    const std::uint32_t off = table_off_[at] - 1;
    if (arena_[off] == key_.size() && std::equal(key_.begin(), key_.end(), arena_.begin() + off + 1)) return false;
  }
  if (arena_.size() + key_.size() + 1 >= std::numeric_limits<std::uint32_t>::max()) return true;  // not remembered: still exact
  table_hash_[at] = h;
  table_off_[at] = static_cast<std::uint32_t>(arena_.size() + 1);
  arena_.push_back(static_cast<std::uint32_t>(key_.size()));
  arena_.insert(arena_.end(), key_.begin(), key_.end());
  ++table_used_;
  return true;
}

std::size_t jit_key_search::memory_bytes() const {
  return arena_.capacity() * 4 + table_hash_.capacity() * 8 + table_off_.capacity() * 4 + stack_.capacity() * sizeof(frame) +
         choices_.capacity() * 4 + ops_.capacity() * sizeof(op) + by_ret_.capacity() * 4 + done_.capacity() + zob_.capacity() * 8 +
         sets_.capacity() * 4;
}

verdict jit_key_search::check(std::span<const key_op> in, const deadline& d, std::vector<std::uint32_t>* order,
                              const key_check_options& options) {
  nodes_ = 0;
  out_of_memory_ = false;
  ops_.clear();
  classes_.clear();
  values_.clear();
  arena_.clear();
  table_hash_.clear();
  table_off_.clear();
  table_used_ = 0;
  stack_.clear();
  choices_.clear();
  sets_.clear();

  for (const key_op& o : in) {
    op_class c;
    if (!classify(o, c)) continue;
    if (c == read_value || c == write_insert || c == write_delete || c == opt_insert) values_.push_back(o.value);
  }
  if (options.initially_present) values_.push_back(options.initial_value);
  std::sort(values_.begin(), values_.end());
  values_.erase(std::unique(values_.begin(), values_.end()), values_.end());
  auto index_of = [&](value_type v) {
    return static_cast<std::uint32_t>(std::lower_bound(values_.begin(), values_.end(), v) - values_.begin() + 1);
  };
  for (std::uint32_t p = 0; p < in.size(); ++p) {
    const key_op& o = in[p];
    op_class c;
    if (!classify(o, c)) continue;
    const std::uint32_t v = c == read_value || c == write_insert || c == write_delete || c == opt_insert ? index_of(o.value) : 0;
    if (o.optional && o.ret == never_returned) {
      auto it = std::find_if(classes_.begin(), classes_.end(), [&](const pending_class& k) { return k.c == c && k.value == v; });
      if (it == classes_.end()) {
        classes_.push_back(pending_class{c, v, {}, {}, splitmix(0xC1A55ull + classes_.size())});
        it = classes_.end() - 1;
      }
      it->calls.push_back(o.call);  // ascending: `in` is sorted by call
      it->pos.push_back(p);
    } else {
      ops_.push_back(op{o.call, o.ret, p, v, c});
    }
  }
  const std::size_t n = ops_.size();
  by_ret_.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) by_ret_[i] = i;
  std::sort(by_ret_.begin(), by_ret_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return ops_[a].ret != ops_[b].ret ? ops_[a].ret < ops_[b].ret : a < b;
  });
  done_.assign(n, 0);
  zob_.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) zob_[i] = splitmix(i * 0x2545F4914F6CDD1Dull + 17);
  used_.assign(classes_.size(), 0);

  constexpr std::uint32_t unset = std::numeric_limits<std::uint32_t>::max();
  frame root{};
  if (options.initially_present) {
    sets_.push_back(index_of(options.initial_value));
    root.s.len = 1;
  } else {
    root.s.absent = true;
  }
  root.move = unset;
  root.choices_begin = root.choices_end = root.next = unset;
  enter(root);
  stack_.push_back(root);
  while (!stack_.empty()) {
    if (stack_.back().lo == n) break;  // every operation with a return is linearized
    if ((++nodes_ & 1023) == 0) {
      if (d.passed()) return verdict::unknown;
      if (options.memory_budget && memory_bytes() > options.memory_budget) {
        out_of_memory_ = true;
        return verdict::unknown;
      }
    }
    if (options.node_budget && nodes_ > options.node_budget) return verdict::unknown;
    if (stack_.back().choices_begin == unset) {
      frame& f = stack_.back();
      f.choices_begin = static_cast<std::uint32_t>(choices_.size());
      collect_choices(f, ops_[by_ret_[f.rp]].ret);
      stack_.back().choices_end = static_cast<std::uint32_t>(choices_.size());
      stack_.back().next = stack_.back().choices_begin;
    }
    bool pushed = false;
    while (stack_.back().next < stack_.back().choices_end) {
      frame& f = stack_.back();
      const std::uint32_t mv = choices_[f.next++];
      frame child = f;
      child.move = mv;
      child.choices_begin = child.choices_end = child.next = unset;
      const std::size_t sets_before = sets_.size();
      if (mv < n) {
        const op& o = ops_[mv];
        if (!step(o.c, o.value, f.s, child.s)) {
          sets_.resize(sets_before);
          continue;
        }
        done_[mv] = 1;
        while (child.lo < n && done_[child.lo]) ++child.lo;
        while (child.rp < n && done_[by_ret_[child.rp]]) ++child.rp;
        child.hi = std::max(child.hi, mv + 1);
        child.zobrist ^= zob_[mv];
        if (enter(child)) {
          stack_.push_back(child);
          pushed = true;
          break;
        }
        done_[mv] = 0;
      } else {
        const pending_class& pc = classes_[mv - n];
        step(pc.c, pc.value, f.s, child.s);
        ++used_[mv - n];
        child.class_hash += pc.salt;
        if (enter(child)) {
          stack_.push_back(child);
          pushed = true;
          break;
        }
        --used_[mv - n];
      }
      sets_.resize(sets_before);
    }
    if (pushed) continue;
    // Every move from here failed: undo the one that led here.
    const frame gone = stack_.back();
    stack_.pop_back();
    if (gone.choices_begin != unset) choices_.resize(gone.choices_begin);
    if (stack_.empty()) return verdict::not_linearizable;
    sets_.resize(gone.s.off);
    if (gone.move < n) done_[gone.move] = 0;
    else --used_[gone.move - n];
  }
  if (stack_.empty()) return verdict::not_linearizable;
  if (!order) return verdict::linearizable;

  // A witness: one state out of each set, from the last back, each reached
  // from the one chosen before it; an optional operation is kept when it
  // changed the state.
  order->clear();
  const std::size_t levels = stack_.size();
  std::vector<std::uint32_t> chosen(levels, 0);
  std::vector<std::uint8_t> took_effect(levels, 1);
  auto members = [&](const state_set& st) {
    std::vector<std::uint32_t> m;
    if (st.absent) m.push_back(0);
    for (std::uint32_t k = 0; k < st.len; ++k) m.push_back(sets_[st.off + k]);
    return m;
  };
  chosen[levels - 1] = members(stack_.back().s).front();
  for (std::size_t k = levels - 1; k > 0; --k) {
    const std::uint32_t mv = stack_[k].move;
    const std::uint8_t c = mv < n ? ops_[mv].c : classes_[mv - n].c;
    const std::uint32_t v = mv < n ? ops_[mv].value : classes_[mv - n].value;
    const std::vector<std::uint32_t> before = members(stack_[k - 1].s);
    const std::uint32_t t = chosen[k];
    bool found = false;
    if (is_optional(c) && std::find(before.begin(), before.end(), t) != before.end()) {
      chosen[k - 1] = t, took_effect[k] = 0, found = true;  // it did not take effect
    }
    for (std::size_t q = 0; q < before.size() && !found; ++q) {
      std::uint32_t next = 0;
      if (step_one(c, v, before[q], next) && next == t) chosen[k - 1] = before[q], found = true;
    }
    if (!found) return verdict::unknown;  // cannot happen: each set is the image of the one before
  }
  std::vector<std::uint32_t> uses(classes_.size(), 0);
  for (std::size_t k = 1; k < levels; ++k) {
    const std::uint32_t mv = stack_[k].move;
    const std::uint32_t pos = mv < n ? ops_[mv].pos : classes_[mv - n].pos[uses[mv - n]++];
    if (took_effect[k]) order->push_back(pos);
  }
  return verdict::linearizable;
}

}  // namespace gfsl::lin
