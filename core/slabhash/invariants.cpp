// The SlabHash snapshot invariants (core/slabhash/invariants.hpp). Why
// each holds in `fixed`: the argument at the top of core/slabhash/algorithm.hpp
// ((S): pairs only move EMPTY -> live -> TOMBSTONE and chains only grow at
// their end; (P) the prefix; (U) one live pair per key).
#include "invariants.hpp"

#include "subject.hpp"
#include "../../invariants/snapshot.hpp"

#include <algorithm>
#include <map>

#include "../gfsl/layout.hpp"

namespace gfsl::slabhash {

namespace {

constexpr std::string_view table_size = "table-size";
constexpr std::string_view allocation_counter = "allocation-counter";
constexpr std::string_view pool_bounds = "pool-bounds";
constexpr std::string_view chains = "chains";
constexpr std::string_view pairs_well_formed = "pairs-well-formed";
constexpr std::string_view unreachable_pristine = "unreachable-slabs-pristine";
constexpr std::string_view unique_keys = "unique-keys";
constexpr std::string_view key_in_bucket = "key-in-its-bucket";
constexpr std::string_view prefix = "prefix";

std::string hex(std::uint64_t w) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) out += digits[(w >> shift) & 0xF];
  return out;
}

struct checker {
  const std::uint64_t* words;
  std::size_t count;
  const params& p;
  slab_variant variant;
  bool quiescent;
  std::size_t max_violations;
  slab_report report;
  std::uint32_t slabs = 0;                 // slabs of the pool that the words hold
  std::vector<std::int64_t> owner;         // slab -> bucket whose chain holds it, -1: none
  std::vector<std::vector<std::uint32_t>> chain_of;  // bucket -> its slabs in chain order

  void add(std::string_view invariant, std::uint64_t word, std::optional<std::uint32_t> bucket, std::string detail) {
    if (report.violations.size() >= max_violations) return;
    report.violations.push_back({std::string(invariant), word, describe_word(p, word, bucket), std::move(detail)});
  }
  bool runs(std::string_view name) const {
    for (const slab_invariant& i : slab_invariants()) {
      if (i.name == name) return quiescent || i.mid_run;
    }
    return false;
  }
  void mark(std::string_view name) { report.checked.emplace_back(name); }

  void run() {
    mark(table_size);
    if (count < header_words + static_cast<std::size_t>(p.buckets) * slab_words) {
      add(table_size, 0, std::nullopt,
          "the table has " + std::to_string(count) + " words, fewer than its header and " + std::to_string(p.buckets) +
              " bucket heads need");
      return;
    }
    // A snapshot may stop after the slabs handed out (the rest of the pool is
    // pristine and carries nothing): whole slabs, within the pool, covering
    // every allocated one.
    const std::size_t handed_out = std::min<std::uint64_t>(words[alloc_counter_word], slab_capacity(p));
    if (count > word_count(p) || (count - header_words) % slab_words != 0 ||
        count < header_words + handed_out * static_cast<std::size_t>(slab_words)) {
      add(table_size, 0, std::nullopt,
          "the table has " + std::to_string(count) + " words, its parameters " + std::to_string(word_count(p)) + " (" +
              std::to_string(handed_out) + " slabs allocated)");
    }
    slabs = static_cast<std::uint32_t>(std::min<std::size_t>(slab_capacity(p), (count - header_words) / slab_words));
    owner.assign(slabs, -1);
    chain_of.assign(p.buckets, {});

    const std::uint64_t counter = words[alloc_counter_word];
    const std::uint64_t error = words[error_word_index];
    report.slabs_allocated = std::min<std::uint64_t>(counter, slabs);

    mark(allocation_counter);
    if (counter < p.buckets) {
      add(allocation_counter, alloc_counter_word, std::nullopt,
          "the counter is " + std::to_string(counter) + ", below the " + std::to_string(p.buckets) +
              " bucket heads allocated from the start");
    }
    if (error != error_none && error != error_pool_exhausted && error != error_corrupt) {
      add(allocation_counter, error_word_index, std::nullopt, "unknown error code " + std::to_string(error));
    }
    // Mid-run a failed allocation has moved the counter past the pool before
    // it sets the error word: only at quiescence must the two agree.
    if (runs(pool_bounds)) {
      mark(pool_bounds);
      if (counter > slab_capacity(p) && error == error_none) {
        add(pool_bounds, alloc_counter_word, std::nullopt,
            "the counter is " + std::to_string(counter) + ", past the pool of " + std::to_string(slab_capacity(p)) +
                " slabs, and the error word says healthy");
      }
    }

    walk_chains();
    check_pairs();
    check_unreachable();
    check_keys();
    if (variant == slab_variant::fixed) check_prefix();

    std::sort(report.live.begin(), report.live.end());
  }

  // Bounded: a slab is entered at most once, over all chains.
  void walk_chains() {
    mark(chains);
    for (std::uint32_t b = 0; b < p.buckets; ++b) {
      std::uint32_t s = b;
      owner[s] = b;
      chain_of[b].push_back(s);
      for (;;) {
        const std::uint64_t next_at = slab_offset(s) + next_word;
        const std::uint32_t next = next_of(words[next_at]);
        if (next == no_slab) break;
        std::string bad;
        if (next >= report.slabs_allocated) {
          bad = "next slab " + std::to_string(next) + " is outside the allocated pool (" +
                std::to_string(report.slabs_allocated) + " slabs allocated)";
        } else if (next < p.buckets) {
          bad = "next slab " + std::to_string(next) + " is a bucket head";
        } else if (owner[next] == b) {
          bad = "next slab " + std::to_string(next) + " is earlier in this chain: a cycle";
        } else if (owner[next] >= 0) {
          bad = "next slab " + std::to_string(next) + " is already in bucket " + std::to_string(owner[next]) + "'s chain";
        }
        if (!bad.empty()) {
          add(chains, next_at, b, bad);
          break;
        }
        owner[next] = b;
        chain_of[b].push_back(next);
        s = next;
      }
      report.chain_slabs += chain_of[b].size();
    }
  }

  void check_pairs() {
    mark(pairs_well_formed);
    for (std::uint32_t b = 0; b < p.buckets; ++b) {
      for (std::uint32_t s : chain_of[b]) {
        for (int i = 0; i < pairs_per_slab; ++i) {
          const std::uint64_t at = slab_offset(s) + i;
          const std::uint64_t w = words[at];
          const key_type k = pair_key(w);
          if (k == empty_key && w != empty_pair) {
            add(pairs_well_formed, at, b, "an EMPTY key with value half " + hex(w >> 32) + " (EMPTY is all ones)");
          } else if (k == tombstone_key && variant == slab_variant::published) {
            add(pairs_well_formed, at, b, "a tombstone in the published variant, which deletes by emptying");
          }
        }
        const std::uint64_t at = slab_offset(s) + next_word;
        if ((words[at] & 0xFFFFFFFFull) != 0xFFFFFFFFull) {
          add(pairs_well_formed, at, b, "lane 30 holds " + hex(words[at] & 0xFFFFFFFFull) + ", not the constant 0xffffffff");
        }
      }
    }
  }

  // Nothing writes a slab before it is linked (the pool is pristine from the
  // start), and a slab whose link CAS lost is never written: every slab out
  // of the chains, allocated or not, is all ones.
  void check_unreachable() {
    mark(unreachable_pristine);
    for (std::uint32_t s = 0; s < slabs; ++s) {
      if (owner[s] >= 0) continue;
      for (int i = 0; i < slab_words; ++i) {
        const std::uint64_t at = slab_offset(s) + i;
        if (words[at] == empty_pair) continue;
        const std::string what = s < report.slabs_allocated ? "allocated but in no chain" : "not allocated";
        add(unreachable_pristine, at, std::nullopt, "slab " + std::to_string(s) + " is " + what + " yet holds " + hex(words[at]));
        break;  // one line a slab
      }
    }
  }

  void check_keys() {
    mark(unique_keys);
    mark(key_in_bucket);
    std::map<key_type, std::pair<std::uint64_t, std::uint32_t>> first;  // key -> (word, bucket) of its first live pair
    for (std::uint32_t b = 0; b < p.buckets; ++b) {
      for (std::uint32_t s : chain_of[b]) {
        for (int i = 0; i < pairs_per_slab; ++i) {
          const std::uint64_t at = slab_offset(s) + i;
          const key_type k = pair_key(words[at]);
          if (!is_live_key(k)) continue;
          report.live.emplace_back(k, pair_value(words[at]));
          const auto [it, fresh] = first.emplace(k, std::make_pair(at, b));
          if (!fresh) {
            add(unique_keys, at, b,
                "key " + std::to_string(k) + " is live twice (also at " + describe_word(p, it->second.first, it->second.second) + ")");
          }
          const std::uint32_t home = bucket_of(k, p);
          if (home != b) {
            add(key_in_bucket, at, b, "key " + std::to_string(k) + " hashes to bucket " + std::to_string(home));
          }
        }
      }
    }
  }

  // fixed: (P). After the first EMPTY pair of a chain, only EMPTY pairs.
  void check_prefix() {
    mark(prefix);
    for (std::uint32_t b = 0; b < p.buckets; ++b) {
      std::optional<std::uint64_t> first_empty;
      for (std::uint32_t s : chain_of[b]) {
        for (int i = 0; i < pairs_per_slab; ++i) {
          const std::uint64_t at = slab_offset(s) + i;
          if (pair_key(words[at]) == empty_key) {
            if (!first_empty) first_empty = at;
          } else if (first_empty) {
            add(prefix, at, b, "a non-EMPTY pair (" + hex(words[at]) + ") after the EMPTY pair at " + describe_word(p, *first_empty, b));
            return;  // one line a chain: the rest follows from it
          }
        }
      }
    }
  }
};

}  // namespace

const std::vector<slab_invariant>& slab_invariants() {
  static const std::vector<slab_invariant> all = {
      {table_size, true, "the words hold the header and every bucket head"},
      {allocation_counter, true, "the counter is at least the number of buckets; the error word is a known code"},
      {pool_bounds, false, "a counter past the pool comes with an error word (quiescent: mid-run the fetch_add precedes it)"},
      {chains, true, "every chain is acyclic, within the allocated pool, and no slab is in two chains or links to a head"},
      {pairs_well_formed, true, "EMPTY is all ones; tombstones only in fixed; a slab's lane 30 is 0xffffffff"},
      {unreachable_pristine, true, "a slab in no chain, allocated or not, is all ones"},
      {unique_keys, true, "no live key twice in the table (U)"},
      {key_in_bucket, true, "every live key lies in the bucket its hash names"},
      {prefix, true, "fixed: no non-EMPTY pair after an EMPTY one in chain order (P)"},
  };
  return all;
}

slab_report check_slab_snapshot(const std::uint64_t* words, std::size_t word_count, const params& p,
                                slab_variant variant, bool quiescent, std::size_t max_violations) {
  checker c{words, word_count, p, variant, quiescent, max_violations, {}, 0, {}, {}};
  c.run();
  return std::move(c.report);
}

contents inspect(const std::uint64_t* words, std::size_t word_count, const params& p, slab_variant variant) {
  slab_report r = check_slab_snapshot(words, word_count, p, variant, true);
  contents out;
  out.entries = std::move(r.live);
  out.slabs_allocated = r.slabs_allocated;
  for (const slab_violation& v : r.violations) out.problems.push_back(v.line());
  return out;
}

}  // namespace gfsl::slabhash

namespace gfsl::invariants {

// SlabHash's snapshots are checked by its own invariants
// (core/slabhash/invariants.hpp), reported in the same form.
snapshot_report check_slabhash_snapshot(const snapshot& s, bool quiescent,
                               const std::vector<std::pair<key_type, value_type>>* expected, std::size_t max_violations) {
  slabhash::params p;
  p.buckets = s.buckets;
  p.pool_slabs = s.capacity;
  const auto var = slabhash::variant_of(s.variant);
  const slabhash::slab_report rep = slabhash::check_slab_snapshot(s.words.data(), s.words.size(), p, var, quiescent, max_violations);
  snapshot_report r;
  r.checked = rep.checked;
  r.chunks = rep.slabs_allocated;
  r.live_chunks = rep.chain_slabs;
  r.keys = rep.live.size();
  for (const slabhash::slab_violation& sv : rep.violations) {
    violation v;
    v.invariant = sv.invariant;
    v.when = s.stamp;
    v.detail = sv.where + ": " + sv.detail;
    r.violations.push_back(std::move(v));
  }
  if (expected && rep.violations.empty() && rep.live != *expected) {
    violation v;
    v.invariant = "model-state";
    v.when = s.stamp;
    v.detail = "the table holds " + std::to_string(rep.live.size()) + " keys where the model holds " + std::to_string(expected->size());
    for (std::size_t i = 0; i < std::min(rep.live.size(), expected->size()); ++i) {
      if (rep.live[i] != (*expected)[i]) {
        v.detail = "key " + std::to_string(rep.live[i].first) + " -> " + std::to_string(rep.live[i].second) + " in the table where the model has " +
                   std::to_string((*expected)[i].first) + " -> " + std::to_string((*expected)[i].second);
        v.key = std::min(rep.live[i].first, (*expected)[i].first);
        break;
      }
    }
    r.checked.push_back("model-state");
    r.violations.push_back(std::move(v));
  }
  return r;
}


}  // namespace gfsl::invariants
