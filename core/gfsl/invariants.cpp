#include "invariants.hpp"

#include "../registry.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "algorithm.hpp"
#include "../host_team.hpp"
#include "layout.hpp"

namespace gfsl::invariants {

const std::vector<std::string>& snapshot_invariant_names() {
  static const std::vector<std::string> names{
      "level-list",           // each level a finite list of valid chunks ending at its final chunk
      "final-not-zombie",     // the final chunk of a level is never a zombie
      "chunk-sorted",         // live chunk: keys strictly ascending, EMPTY entries grouped at the end
      "max-field",            // live chunk: max = its largest key; the final chunk's is infinite
      "lateral-order",        // consecutive live chunks: max(c) < min(next live chunk)
      "level-head",           // first live chunk starts with -inf; above 0 it points at the first chunk below
      "level-subset",         // every key of level i+1 is in level i
      "down-reachability",    // a level-(i+1) key's down pointer reaches its enclosing chunk in level i
      "bottom-search",        // every bottom key is found by a contains traversal from the head
      "no-locks",             // no chunk locked at quiescence
      "level-counters",       // counters = live chunks, 0 exactly when a level holds only -inf
      "fill-bound",           // live non-final chunks hold between dsize/3 and dsize keys
      "model-state",          // level 0 equals the model's final state
  };
  return names;
}

const std::vector<std::string>& mid_run_invariant_names() {
  // Hold at every step (each access is atomic and every writer keeps them):
  // lists stay lists, the final chunk is never marked, the first live chunk
  // of a level keeps -inf first (a merge copies it before marking), and a down
  // pointer always reaches the enclosing chunk of its key (thesis 4.3). The
  // others can be broken in passing: keys are briefly duplicated or unsorted
  // during shifts and merges, the max field drops before its key leaves, a key
  // is in level i+1 before or after it is in level i during an insert or a
  // delete, locks are held, counters lag.
  static const std::vector<std::string> names{"level-list", "final-not-zombie", "level-head", "down-reachability"};
  return names;
}

int min_keys_of_live_nonfinal_chunk(int chunk) { return (chunk - 2) / 3; }

namespace {

struct budget_spent {};
struct out_of_snapshot {
  std::uint64_t word;
};

// Vertices are allocated chunks, edges NEXT pointers.
using chunk_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// Visitor that stops at the first back edge of a DFS: a cycle.
struct cycle_found {};
struct cycle_detector : boost::default_dfs_visitor {
  chunk_index* at;
  explicit cycle_detector(chunk_index* where) : at(where) {}
  template <class Edge, class Graph>
  void back_edge(Edge e, const Graph& g) {
    *at = static_cast<chunk_index>(boost::source(e, g));
    throw cycle_found{};
  }
};

template <int N>
class checker {
 public:
  using shape = chunk_shape<N>;
  checker(const snapshot& s, bool quiescent, const std::vector<std::pair<key_type, value_type>>* expected,
          std::size_t max_violations)
      : s_(s), quiescent_(quiescent), expected_(expected), max_(max_violations) {
    view_.words = const_cast<std::uint64_t*>(s.words.data());
    view_.capacity = s.capacity;
  }

  snapshot_report run() {
    if (s_.words.size() < header_offsets::pool) {
      report_.checked.push_back("level-list");
      flag("level-list", {}, "snapshot of " + std::to_string(s_.words.size()) + " words has no room for the header");
      return report_;
    }
    const std::uint64_t counter = view_.alloc_counter()[0];
    allocated_ = static_cast<chunk_index>(std::min<std::uint64_t>(counter, s_.capacity));
    const std::uint64_t have = (s_.words.size() - header_offsets::pool) / N;
    if (have < allocated_) {
      flag("level-list", {}, "snapshot holds " + std::to_string(have) + " chunks but " + std::to_string(allocated_) +
                                 " are allocated");
      allocated_ = static_cast<chunk_index>(have);
    }
    const bool lists_ok = check_lists();
    for (const std::string& name : quiescent_ ? snapshot_invariant_names() : mid_run_invariant_names()) {
      // model-state needs the expected contents: without them it does not
      // run; with broken lists only the two list checks ran.
      if (name == "model-state" && !expected_) continue;
      if (!lists_ok && name != "level-list" && name != "final-not-zombie") continue;
      report_.checked.push_back(name);
    }
    if (!lists_ok) return report_;  // the rest walks the lists
    live_max_.assign(shape::max_levels, {});
    monotone_.assign(shape::max_levels, true);
    for (int level = 0; level < shape::max_levels; ++level) {
      for (chunk_index c : live(level)) {
        if (!live_max_[level].empty() && max_of(c) <= live_max_[level].back().first) monotone_[level] = false;
        live_max_[level].emplace_back(max_of(c), c);
      }
    }
    check_chunks();
    check_levels();
    check_down_pointers();
    if (quiescent_) {
      check_bottom_search();
      check_model_state();
    }
    return report_;
  }

 private:
  bool on(const char* name) const {
    const auto& names = quiescent_ ? snapshot_invariant_names() : mid_run_invariant_names();
    return std::find(names.begin(), names.end(), name) != names.end();
  }
  void flag(const std::string& name, std::vector<chunk_index> chunks, std::string detail, std::optional<key_type> key = {}) {
    if (report_.violations.size() >= max_) return;
    violation v;
    v.invariant = name;
    v.chunks = std::move(chunks);
    v.when = s_.stamp;
    v.detail = std::move(detail);
    v.key = key;
    report_.violations.push_back(std::move(v));
  }
  const std::uint64_t* chunk(chunk_index c) const { return view_.chunk(c); }
  key_type max_of(chunk_index c) const { return entry_key(chunk(c)[shape::next_lane]); }
  chunk_index next_of(chunk_index c) const { return entry_value(chunk(c)[shape::next_lane]); }
  bool zombie(chunk_index c) const { return lock_is_zombie(chunk(c)[shape::lock_lane]); }
  std::vector<key_type> keys_of(chunk_index c) const {
    std::vector<key_type> k;
    for (int i = 0; i < shape::dsize; ++i) {
      if (entry_key(chunk(c)[i]) != key_empty) k.push_back(entry_key(chunk(c)[i]));
    }
    return k;
  }

  // level-list and final-not-zombie: a DFS over NEXT edges from each head
  // finds cycles; then each level is walked to its end.
  bool check_lists() {
    bool ok = true;
    chunk_graph next_only(allocated_);
    for (chunk_index c = 0; c < allocated_; ++c) {
      const chunk_index nx = next_of(c);
      if (nx != no_chunk && nx >= allocated_) {
        flag("level-list", {c}, "NEXT points at chunk " + std::to_string(nx) + ", outside the " +
                                    std::to_string(allocated_) + " allocated chunks");
        ok = false;
      } else if (nx != no_chunk) {
        boost::add_edge(c, nx, next_only);
      }
    }
    levels_.assign(shape::max_levels, {});
    for (int level = 0; level < shape::max_levels; ++level) {
      const auto head = static_cast<chunk_index>(view_.heads()[level]);
      if (head >= allocated_) {
        flag("level-list", {head}, "level " + std::to_string(level) + ": head " + std::to_string(head) +
                                       " outside the allocated chunks");
        ok = false;
        continue;
      }
      std::vector<boost::default_color_type> color(allocated_, boost::white_color);
      chunk_index where = no_chunk;
      try {
        boost::depth_first_visit(next_only, head, cycle_detector(&where),
                                 boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, next_only)));
      } catch (const cycle_found&) {
        flag("level-list", {where}, "level " + std::to_string(level) + ": NEXT pointers form a cycle");
        ok = false;
        continue;
      }
      for (chunk_index c = head; c != no_chunk && c < allocated_; c = next_of(c)) levels_[level].push_back(c);
      if (!ok) continue;
      const chunk_index last = levels_[level].back();
      if (max_of(last) != key_empty || next_of(last) != no_chunk) {
        flag("level-list", {last}, "level " + std::to_string(level) + " ends at a chunk that is not final");
      }
      for (std::size_t i = 0; i + 1 < levels_[level].size(); ++i) {
        if (max_of(levels_[level][i]) == key_empty) {
          flag("level-list", {levels_[level][i]}, "level " + std::to_string(level) + ": a final max field before the end");
        }
      }
      if (zombie(last)) flag("final-not-zombie", {last}, "level " + std::to_string(level) + ": the final chunk is a zombie");
      report_.chunks += levels_[level].size();
    }
    return ok;
  }

  std::vector<chunk_index> live(int level) const {
    std::vector<chunk_index> out;
    for (chunk_index c : levels_[level]) {
      if (!zombie(c)) out.push_back(c);
    }
    return out;
  }

  void check_chunks() {
    const int min_keys = min_keys_of_live_nonfinal_chunk(N);
    for (int level = 0; level < shape::max_levels; ++level) {
      for (chunk_index c : live(level)) {
        ++report_.live_chunks;
        const std::uint64_t lock = chunk(c)[shape::lock_lane];
        if (on("no-locks") && lock_is_held(lock)) {
          flag("no-locks", {c}, "locked by team " + std::to_string(lock_owner(lock)) + " at quiescence");
        }
        bool seen_empty = false, sorted = true;
        key_type prev = 0;
        int count = 0;
        for (int i = 0; i < shape::dsize; ++i) {
          const key_type k = entry_key(chunk(c)[i]);
          if (k == key_empty) {
            seen_empty = true;
            continue;
          }
          if (seen_empty && on("chunk-sorted")) {
            flag("chunk-sorted", {c}, "key " + std::to_string(k) + " at entry " + std::to_string(i) + " after an EMPTY entry", k);
          }
          if (count > 0 && k <= prev) sorted = false;
          prev = k;
          ++count;
        }
        if (!sorted && on("chunk-sorted")) flag("chunk-sorted", {c}, "keys not strictly ascending");
        const bool final_chunk = next_of(c) == no_chunk;
        if (on("max-field")) {
          if (final_chunk && max_of(c) != key_empty) flag("max-field", {c}, "final chunk with a finite max field");
          if (!final_chunk && count == 0) flag("max-field", {c}, "non-final chunk without keys");
          if (!final_chunk && count > 0 && max_of(c) != prev) {
            flag("max-field", {c}, "max field " + std::to_string(max_of(c)) + " but largest key " + std::to_string(prev), prev);
          }
        }
        if (on("fill-bound") && !final_chunk && (count < min_keys || count > shape::dsize)) {
          flag("fill-bound", {c}, "live non-final chunk holds " + std::to_string(count) + " keys, outside [" +
                                      std::to_string(min_keys) + ", " + std::to_string(shape::dsize) + "]");
        }
        report_.keys += level == 0 ? count : 0;
      }
    }
  }

  void check_levels() {
    std::vector<std::set<key_type>> keys(shape::max_levels);
    for (int level = 0; level < shape::max_levels; ++level) {
      const std::vector<chunk_index> chunks = live(level);
      std::int64_t present = 0;
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        const std::vector<key_type> k = keys_of(chunks[i]);
        for (key_type key : k) {
          if (key != key_neg_inf) keys[level].insert(key);
        }
        if (on("lateral-order") && i + 1 < chunks.size() && !k.empty()) {
          const std::vector<key_type> nk = keys_of(chunks[i + 1]);
          if (!nk.empty() && max_of(chunks[i]) >= nk.front()) {
            flag("lateral-order", {chunks[i], chunks[i + 1]},
                 "max " + std::to_string(max_of(chunks[i])) + " not below the next live chunk's smallest key " +
                     std::to_string(nk.front()),
                 nk.front());
          }
        }
      }
      present = static_cast<std::int64_t>(chunks.size());
      if (on("level-counters")) {
        const auto counter = static_cast<std::int64_t>(view_.level_counts()[level]);
        const std::int64_t expected = keys[level].empty() ? 0 : present;
        if (counter != expected) {
          flag("level-counters", {}, "level " + std::to_string(level) + ": counter " + std::to_string(counter) + " but " +
                                         std::to_string(expected) + " expected (" + std::to_string(present) +
                                         " live chunks, " + std::to_string(keys[level].size()) + " keys)");
        }
      }
      if (chunks.empty()) continue;
      const chunk_index first = chunks.front();
      const key_type first_key = entry_key(chunk(first)[0]);
      if (on("level-head") && first_key != key_neg_inf) {
        flag("level-head", {first}, "level " + std::to_string(level) + ": first live chunk begins with " +
                                        (first_key == key_empty ? std::string("EMPTY") : std::to_string(first_key)) +
                                        ", not -inf");
      }
      if (on("level-head") && level > 0 && first_key == key_neg_inf) {
        // The -inf entry must lead, over zombies only, to the first live chunk below.
        const std::vector<chunk_index> below = live(level - 1);
        chunk_index d = entry_value(chunk(first)[0]);
        std::size_t steps = 0;
        while (d < allocated_ && zombie(d) && steps++ <= allocated_) d = next_of(d);
        if (below.empty() || d != below.front()) {
          flag("level-head", {first}, "level " + std::to_string(level) + ": -inf points at chunk " +
                                          std::to_string(entry_value(chunk(first)[0])) + ", not at the first chunk below");
        }
      }
    }
    if (on("level-subset")) {
      for (int level = 1; level < shape::max_levels; ++level) {
        for (key_type k : keys[level]) {
          if (!keys[level - 1].count(k)) {
            flag("level-subset", {}, "key " + std::to_string(k) + " of level " + std::to_string(level) +
                                         " is not in level " + std::to_string(level - 1),
                 k);
          }
        }
      }
    }
  }

  // The enclosing chunk of k in a level: the first live chunk with max >= k.
  // The enclosing chunk of k in a level: the first live chunk with max >= k.
  // Max fields rise along a well-formed level, so a binary search finds it;
  // where they do not (lateral-order reports it), a linear scan does.
  chunk_index enclosing(int level, key_type k) const {
    const std::vector<std::pair<key_type, chunk_index>>& m = live_max_[level];
    if (monotone_[level]) {
      const auto it = std::lower_bound(m.begin(), m.end(), std::make_pair(k, chunk_index{0}));
      return it == m.end() ? no_chunk : it->second;
    }
    for (const auto& [max, c] : m) {
      if (max >= k) return c;
    }
    return no_chunk;
  }

  void check_down_pointers() {
    if (!on("down-reachability")) return;
    // Reachability over NEXT edges. The NEXT graph is acyclic here (level-list
    // passed), so one reverse topological pass (boost::topological_sort)
    // gives every chunk the first chunk of its level's list that it reaches,
    // and d reaches t exactly when that chunk comes no later than t in the
    // list: one pass for all the down pointers instead of a search each.
    chunk_graph next_only(allocated_);
    for (chunk_index c = 0; c < allocated_; ++c) {
      if (next_of(c) != no_chunk && next_of(c) < allocated_) boost::add_edge(c, next_of(c), next_only);
    }
    std::vector<chunk_index> order;
    try {
      boost::topological_sort(next_only, std::back_inserter(order));  // sinks first
    } catch (const boost::not_a_dag&) {
      flag("level-list", {}, "NEXT pointers of unlisted chunks form a cycle");
      return;
    }
    std::vector<std::int64_t> position(allocated_, -1);  // position in its level's list
    std::vector<int> level_of(allocated_, -1);
    for (int level = 0; level < shape::max_levels; ++level) {
      for (std::size_t i = 0; i < levels_[level].size(); ++i) {
        position[levels_[level][i]] = static_cast<std::int64_t>(i);
        level_of[levels_[level][i]] = level;
      }
    }
    std::vector<chunk_index> first_listed(allocated_, no_chunk);
    for (const chunk_index v : order) {  // a chunk's successor comes before it
      if (position[v] >= 0) first_listed[v] = v;
      else if (next_of(v) < allocated_) first_listed[v] = first_listed[next_of(v)];
    }
    for (int level = 1; level < shape::max_levels; ++level) {
      for (chunk_index c : live(level)) {
        for (int i = 0; i < shape::dsize; ++i) {
          const entry_type e = chunk(c)[i];
          const key_type k = entry_key(e);
          if (k == key_empty) continue;
          const chunk_index d = entry_value(e);
          if (d >= allocated_) {
            flag("down-reachability", {c}, "key " + std::to_string(k) + " points at chunk " + std::to_string(d) +
                                               ", outside the allocated chunks",
                 k);
            continue;
          }
          const chunk_index target = enclosing(level - 1, k);
          const chunk_index entry = first_listed[d];
          const bool reaches = target != no_chunk && entry != no_chunk && level_of[entry] == level - 1 &&
                               position[entry] <= position[target];
          if (!reaches) {
            flag("down-reachability", {c, d},
                 "level " + std::to_string(level) + " key " + std::to_string(k) + " points at chunk " + std::to_string(d) +
                     ", from which its enclosing chunk " + (target == no_chunk ? std::string("(none)") : std::to_string(target)) +
                     " in level " + std::to_string(level - 1) + " is not reachable",
                 k);
          }
        }
      }
    }
  }

  // bottom-search: run the algorithm's own contains on a copy. The copy's
  // error word is cleared (a stopped structure refuses operations), and an
  // access budget ends a traversal that a corrupt structure would trap.
  void check_bottom_search() {
    std::vector<std::uint64_t> copy(s_.words);
    copy[header_offsets::error_word] = error_none;
    // Also a bounds check: every access is vetted before it is made, so a
    // pointer out of the snapshot ends the search instead of reading past it.
    struct budget final : access_hook {
      std::uint64_t left, words;
      budget(std::uint64_t n, std::uint64_t w) : left(n), words(w) {}
      void before(const access& a) override {
        if (a.word >= words) throw out_of_snapshot{a.word};
        if (left-- == 0) throw budget_spent{};
      }
    };
    // On large structures an evenly spaced sample of keys (every chunk's
    // first and last key among them): a traversal per key is the costliest
    // check, and 20,000 of them cover every level's routing.
    std::size_t bottom_keys = 0;
    for (const chunk_index c : live(0)) bottom_keys += keys_of(c).size();
    const std::size_t stride = std::max<std::size_t>(1, (bottom_keys + 19999) / 20000);
    std::size_t seen = 0;
    for (const chunk_index c : live(0)) {
      int first_key = -1, last_key = -1;
      for (int i = 0; i < shape::dsize; ++i) {
        const key_type k = entry_key(chunk(c)[i]);
        if (k == key_empty || k == key_neg_inf) continue;
        if (first_key < 0) first_key = i;
        last_key = i;
      }
      for (int i = 0; i < shape::dsize; ++i) {
        const entry_type e = chunk(c)[i];
        const key_type k = entry_key(e);
        if (k == key_empty || k == key_neg_inf) continue;
        if (seen++ % stride != 0 && i != first_key && i != last_key) continue;
        budget b(64ull * N * (allocated_ + 16), copy.size());
        host_team<N> team(0, 1, copy.data(), &b);
        // The published search: its routing rules are the strict ones (the
        // robust variant's head fallback would hide a stale key above).
        algorithm<host_team<N>, false, variant::thesis> a(team, structure_view<N>{copy.data(), s_.capacity}, 0);
        try {
          const op_result r = a.contains(k);
          if (!r.ok || r.value != entry_value(e)) {
            flag("bottom-search", {c}, "contains(" + std::to_string(k) + ") from the head answers " +
                                           (r.ok ? "value " + std::to_string(r.value) : std::string("not found")) +
                                           ", but chunk holds it with value " + std::to_string(entry_value(e)),
                 k);
          }
        } catch (const budget_spent&) {
          flag("bottom-search", {c}, "contains(" + std::to_string(k) + ") did not finish within its access budget", k);
        } catch (const out_of_snapshot& o) {
          flag("bottom-search", {c}, "contains(" + std::to_string(k) + ") followed a pointer out of the structure (word " +
                                         std::to_string(o.word) + ")",
               k);
        }
      }
    }
  }

  void check_model_state() {
    if (!expected_) return;
    std::vector<std::pair<key_type, value_type>> bottom;
    for (chunk_index c : live(0)) {
      for (int i = 0; i < shape::dsize; ++i) {
        const key_type k = entry_key(chunk(c)[i]);
        if (k != key_empty && k != key_neg_inf) bottom.emplace_back(k, entry_value(chunk(c)[i]));
      }
    }
    // Level 0 in list order need not be sorted (chunk-sorted says so): compare as sets.
    std::sort(bottom.begin(), bottom.end());
    std::vector<std::pair<key_type, value_type>> expected(*expected_);
    std::sort(expected.begin(), expected.end());
    std::size_t i = 0, j = 0;
    while (i < bottom.size() || j < expected.size()) {
      if (j == expected.size() || (i < bottom.size() && bottom[i].first < expected[j].first)) {
        flag("model-state", {}, "key " + std::to_string(bottom[i].first) + " is in level 0, not in the model's final state", bottom[i].first);
        ++i;
      } else if (i == bottom.size() || expected[j].first < bottom[i].first) {
        flag("model-state", {}, "key " + std::to_string(expected[j].first) + " of the model's final state is missing", expected[j].first);
        ++j;
      } else {
        if (bottom[i].second != expected[j].second) {
          flag("model-state", {}, "key " + std::to_string(bottom[i].first) + " has value " + std::to_string(bottom[i].second) +
                                      ", the model " + std::to_string(expected[j].second),
               bottom[i].first);
        }
        ++i, ++j;
      }
    }
  }

  const snapshot& s_;
  bool quiescent_;
  const std::vector<std::pair<key_type, value_type>>* expected_;
  std::size_t max_;
  structure_view<N> view_{};
  chunk_index allocated_ = 0;
  std::vector<std::vector<chunk_index>> levels_;
  std::vector<std::vector<std::pair<key_type, chunk_index>>> live_max_;
  std::vector<bool> monotone_;
  snapshot_report report_;
};

}  // namespace

snapshot_report check_gfsl_snapshot(const snapshot& s, bool quiescent,
                                    const std::vector<std::pair<key_type, value_type>>* expected_bottom,
                                    std::size_t max_violations) {
  if (s.chunk == 8) return checker<8>(s, quiescent, expected_bottom, max_violations).run();
  if (s.chunk == 16) return checker<16>(s, quiescent, expected_bottom, max_violations).run();
  if (s.chunk == 32) return checker<32>(s, quiescent, expected_bottom, max_violations).run();
  snapshot_report r;
  violation v;
  v.invariant = "level-list";
  v.when = s.stamp;
  v.detail = "chunk size " + std::to_string(s.chunk) + " is not 8, 16 or 32";
  r.violations.push_back(std::move(v));
  return r;
}

}  // namespace gfsl::invariants
