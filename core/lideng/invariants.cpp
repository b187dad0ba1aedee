#include "invariants.hpp"

#include <algorithm>
#include <set>

#include "../../invariants/snapshot.hpp"
#include "subject.hpp"

namespace gfsl::lideng {

const std::vector<lideng_invariant>& lideng_invariants() {
  static const std::vector<lideng_invariant> all = {
      {"header", true,
       "the list has its words; the allocation counter is at least 2 (head and tail) and, between batches, within the "
       "pool unless the error word says the pool ran out; the error word holds a known code"},
      {"sentinels", true,
       "node 0 is the head (key 0, height `levels`, forward[] set on levels below `levels` only), node 1 the tail "
       "(key 0xFFFFFFFF, height `levels`, no forward[])"},
      {"level-bounds", true,
       "every level walked from the head reaches the tail through nodes handed out (below the counter), each at most "
       "once: no index outside the pool, no pristine node, no cycle"},
      {"sorted", true, "keys do not decrease along every level (property 1 of the paper needs it)"},
      {"unique-keys", true, "no key is on a level twice (a set)"},
      {"user-keys", true, "every node between head and tail holds a user key (1 .. 0xFFFFFFFE)"},
      {"heights", true,
       "a node on level l has a height above l and at most `levels`, and no forward[] at or above its height"},
      {"upper-in-lower", false,
       "every node on level l+1 is on level l (a batch relinks the levels one by one, so only between batches)"},
  };
  return all;
}

namespace {

struct checker {
  const std::uint64_t* w;
  const params& p;
  std::size_t max;
  lideng_report& r;

  bool full() const { return r.violations.size() >= max; }
  void add(std::string_view inv, std::uint64_t word, std::string detail) {
    if (full()) return;
    r.violations.push_back({std::string(inv), word, describe_word(p, word), std::move(detail)});
  }
  std::uint64_t node_word(std::uint32_t n, int i) const { return w[node_offset(n) + static_cast<std::size_t>(i)]; }
  std::size_t node_word_at(std::uint32_t n, int i) const { return node_offset(n) + static_cast<std::size_t>(i); }
};

std::string hex(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  bool started = false;
  for (int shift = 60; shift >= 0; shift -= 4) {
    const int d = static_cast<int>((v >> shift) & 0xF);
    if (d != 0 || started || shift == 0) {
      s += digits[d];
      started = true;
    }
  }
  return s;
}

}  // namespace

lideng_report check_lideng_snapshot(const std::uint64_t* words, std::size_t word_count_given, const params& p, bool quiescent,
                                    std::size_t max_violations) {
  lideng_report r;
  checker c{words, p, max_violations == 0 ? 1 : max_violations, r};
  for (const auto& inv : lideng_invariants()) {
    if (quiescent || inv.mid_run) r.checked.emplace_back(inv.name);
  }
  // header
  const std::size_t need = word_count(p);
  if (!validate(p).empty() || word_count_given < need) {
    c.add("header", 0,
          !validate(p).empty() ? "parameters: " + validate(p)
                               : "the list has " + std::to_string(word_count_given) + " words, its parameters need " +
                                     std::to_string(need));
    return r;
  }
  const std::uint64_t counter = words[alloc_counter_word];
  const std::uint64_t err = words[error_word_index];
  if (err != error_none && err != error_pool_exhausted && err != error_corrupt) {
    c.add("header", error_word_index, "unknown error code " + std::to_string(err));
  }
  if (counter < first_free_node) {
    c.add("header", alloc_counter_word, "counter " + std::to_string(counter) + " is below the head and tail (2)");
  } else if (quiescent && counter > p.pool_nodes && err != error_pool_exhausted) {
    // Mid-run the counter passes the pool one fetch_add before the error
    // word says so.
    c.add("header", alloc_counter_word,
          "counter " + std::to_string(counter) + " is past the pool of " + std::to_string(p.pool_nodes) +
              " nodes and the error word does not say the pool ran out");
  }
  r.nodes_allocated = std::min<std::uint64_t>(counter, p.pool_nodes);
  const std::uint32_t handed = static_cast<std::uint32_t>(std::max<std::uint64_t>(r.nodes_allocated, first_free_node));

  // sentinels
  bool sentinels_ok = true;
  const auto expect = [&](std::uint32_t n, int i, std::uint64_t want, const char* what) {
    const std::uint64_t got = c.node_word(n, i);
    if (got != want) {
      sentinels_ok = false;
      c.add("sentinels", c.node_word_at(n, i), std::string(what) + " is " + hex(got) + ", expected " + hex(want));
    }
  };
  expect(head_node, entry_word, make_entry(head_key, 0), "head key/value");
  expect(head_node, height_word, static_cast<std::uint64_t>(p.levels), "head height");
  expect(tail_node, entry_word, make_entry(tail_key, 0), "tail key/value");
  expect(tail_node, height_word, static_cast<std::uint64_t>(p.levels), "tail height");
  for (int l = 0; l < max_levels; ++l) {
    expect(tail_node, forward_word0 + l, no_node, "tail forward");
    if (l >= p.levels) expect(head_node, forward_word0 + l, no_node, "head forward above the levels");
  }

  // level walks: level-bounds, sorted, unique-keys, user-keys, heights
  std::vector<std::vector<std::uint32_t>> levels(static_cast<std::size_t>(p.levels));
  bool walks_ok = true;
  std::vector<char> seen_height_checked(handed, 0);
  for (int l = 0; l < p.levels && !c.full(); ++l) {
    std::vector<char> visited(handed, 0);
    std::set<key_type> keys;
    std::uint32_t cur = head_node;
    key_type prev_key = head_key;
    for (;;) {
      const std::size_t at = c.node_word_at(cur, forward_word0 + l);
      const std::uint64_t fw_word = words[at];
      const std::uint32_t fw = low_of(fw_word);
      if (fw == tail_node) break;
      if (fw == no_node || fw >= handed || fw == head_node) {
        walks_ok = false;
        c.add("level-bounds", at,
              "level " + std::to_string(l) + " goes to " + (fw == no_node ? std::string("no node") : "node " + std::to_string(fw)) +
                  ", not a node handed out (2 .. " + std::to_string(handed - 1) + ") or the tail");
        break;
      }
      if (visited[fw]) {
        walks_ok = false;
        c.add("level-bounds", at, "level " + std::to_string(l) + " comes back to node " + std::to_string(fw) + ": a cycle");
        break;
      }
      visited[fw] = 1;
      levels[static_cast<std::size_t>(l)].push_back(fw);
      const std::uint64_t e = c.node_word(fw, entry_word);
      const key_type k = entry_key(e);
      if (!is_user_key(k)) {
        c.add("user-keys", c.node_word_at(fw, entry_word), "level " + std::to_string(l) + " holds key " + hex(k));
      }
      if (k < prev_key) {
        c.add("sorted", at,
              "level " + std::to_string(l) + ": key " + std::to_string(k) + " after key " + std::to_string(prev_key));
      }
      if (!keys.insert(k).second) {
        c.add("unique-keys", c.node_word_at(fw, entry_word),
              "key " + std::to_string(k) + " is on level " + std::to_string(l) + " twice");
      }
      prev_key = k;
      if (!seen_height_checked[fw]) {
        seen_height_checked[fw] = 1;
        const std::uint64_t h = c.node_word(fw, height_word);
        if (h < 1 || h > static_cast<std::uint64_t>(p.levels)) {
          c.add("heights", c.node_word_at(fw, height_word),
                "height " + std::to_string(h) + " is outside 1.." + std::to_string(p.levels));
        } else {
          for (int j = static_cast<int>(h); j < max_levels; ++j) {
            if (low_of(c.node_word(fw, forward_word0 + j)) != no_node) {
              c.add("heights", c.node_word_at(fw, forward_word0 + j),
                    "forward[" + std::to_string(j) + "] is set on a node of height " + std::to_string(h));
              break;
            }
          }
        }
      }
      const std::uint64_t h = c.node_word(fw, height_word);
      if (h <= static_cast<std::uint64_t>(l)) {
        c.add("heights", c.node_word_at(fw, height_word),
              "on level " + std::to_string(l) + " with height " + std::to_string(h));
      }
      cur = fw;
    }
  }
  (void)sentinels_ok;
  for (std::size_t l = 0; l < levels.size(); ++l) r.level_sizes.push_back(levels[l].size());
  for (std::uint32_t n : levels.empty() ? std::vector<std::uint32_t>{} : levels[0]) {
    const std::uint64_t e = c.node_word(n, entry_word);
    r.live.emplace_back(entry_key(e), entry_value(e));
  }

  // upper-in-lower
  if (quiescent && walks_ok) {
    for (std::size_t l = 1; l < levels.size() && !c.full(); ++l) {
      std::vector<char> below(handed, 0);
      for (std::uint32_t n : levels[l - 1]) below[n] = 1;
      for (std::uint32_t n : levels[l]) {
        if (!below[n]) {
          c.add("upper-in-lower", c.node_word_at(n, forward_word0 + static_cast<int>(l)),
                "node " + std::to_string(n) + " (key " + std::to_string(entry_key(c.node_word(n, entry_word))) +
                    ") is on level " + std::to_string(l) + " but not on level " + std::to_string(l - 1));
        }
      }
    }
  }
  return r;
}

contents inspect(const std::uint64_t* words, std::size_t word_count_given, const params& p) {
  const lideng_report r = check_lideng_snapshot(words, word_count_given, p, true);
  contents out;
  out.entries = r.live;
  std::sort(out.entries.begin(), out.entries.end());
  out.nodes_allocated = r.nodes_allocated;
  for (const auto& v : r.violations) out.problems.push_back(v.line());
  return out;
}

// The testbed's form of the report (invariants::check_snapshot, through the
// descriptor). A snapshot records the pool (capacity) but not the levels: a
// trace's header holds them, and so does the head node, whose height is
// `levels` from the list's first word on (initial_word), so they are read
// there; a head height outside 1..14 is the sentinels violation it is.
invariants::snapshot_report check_snapshot(const invariants::snapshot& s, bool quiescent,
                                           const std::vector<std::pair<key_type, value_type>>* expected,
                                           std::size_t max_violations) {
  params p;
  p.pool_nodes = s.capacity;
  const std::size_t head_height = node_offset(head_node) + height_word;
  const std::uint64_t h = head_height < s.words.size() ? s.words[head_height] : 0;
  p.levels = h >= 1 && h <= static_cast<std::uint64_t>(max_levels) ? static_cast<int>(h) : max_levels;
  const lideng_report rep = check_lideng_snapshot(s.words.data(), s.words.size(), p, quiescent, max_violations);
  invariants::snapshot_report r;
  r.checked = rep.checked;
  r.chunks = rep.nodes_allocated;
  r.live_chunks = rep.live.size();
  r.keys = rep.live.size();
  for (const lideng_violation& lv : rep.violations) {
    invariants::violation v;
    v.invariant = lv.invariant;
    v.when = s.stamp;
    v.detail = lv.where + ": " + lv.detail;
    r.violations.push_back(std::move(v));
  }
  if (expected && rep.violations.empty()) {
    std::vector<std::pair<key_type, value_type>> held = rep.live;
    std::sort(held.begin(), held.end());
    if (held != *expected) {
      invariants::violation v;
      v.invariant = "model-state";
      v.when = s.stamp;
      v.detail = "level 0 holds " + std::to_string(held.size()) + " keys where the model holds " + std::to_string(expected->size());
      for (std::size_t i = 0; i < std::min(held.size(), expected->size()); ++i) {
        if (held[i] != (*expected)[i]) {
          v.detail = "key " + std::to_string(held[i].first) + " -> " + std::to_string(held[i].second) + " on level 0 where the model has " +
                     std::to_string((*expected)[i].first) + " -> " + std::to_string((*expected)[i].second);
          v.key = std::min(held[i].first, (*expected)[i].first);
          break;
        }
      }
      r.checked.push_back("model-state");
      r.violations.push_back(std::move(v));
    }
  }
  return r;
}

}  // namespace gfsl::lideng
