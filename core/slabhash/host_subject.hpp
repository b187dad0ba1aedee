// SlabHash as the CPU runner sees it (exec/host_run.hpp): its memory, the
// operations on a host team, the contents at quiescence and a snapshot.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../exec/host_runner.hpp"
#include "invariants.hpp"
#include "../../invariants/snapshot.hpp"
#include "../../model/workload.hpp"
#include "../host_team.hpp"
#include "algorithm.hpp"
#include "layout.hpp"
#include "subject.hpp"

namespace gfsl {

// SlabHash: a slab of 16 eight-byte words per team-wide read, a team of 16
// lanes (core/slabhash/algorithm.hpp).
template <slabhash::slab_variant V, bool Mutable>
class slabhash_host_subject {
 public:
  static constexpr int width = slabhash::slab_words;
  static constexpr bool has_events = false;
  using team_type = host_team<width>;
  using prefill_ops = slabhash::algorithm<team_type, V, false>;
  using concurrent_ops = slabhash::algorithm<team_type, V, Mutable>;

  slabhash_host_subject(const model::workload& w, std::uint32_t pool, const run_extras& ex) : mut_(slabhash::mutant_of(ex.choice)) {
    params_.buckets = w.buckets;
    params_.pool_slabs = pool;
    if (pool < w.buckets) {
      throw std::invalid_argument("pool of " + std::to_string(pool) + " slabs is too small: need at least one per bucket (" +
                                  std::to_string(w.buckets) + ")");
    }
    count_ = slabhash::word_count(params_);
    words_.reset(static_cast<std::uint64_t*>(::operator new[](count_ * sizeof(std::uint64_t), std::align_val_t{256})));
    for (std::size_t i = 0; i < count_; ++i) words_[i] = slabhash::initial_word(i, params_);
  }

  std::uint64_t* words() const { return words_.get(); }
  std::size_t word_count() const { return count_; }
  prefill_ops prefill_algorithm(team_type& t) const { return prefill_ops(t, words_.get(), params_); }
  std::unique_ptr<concurrent_ops> concurrent_algorithm(team_type& t) const {
    return std::make_unique<concurrent_ops>(t, words_.get(), params_, mut_);
  }
  template <class Ops>
  static op_result apply(Ops& a, const model::operation& op) {
    return a.apply(op.kind, op.key, op.value);
  }
  final_state inspect() const {
    slabhash::contents c = slabhash::inspect(words_.get(), count_, params_, V);
    final_state f;
    f.chunks_allocated = c.slabs_allocated;
    f.entries = std::move(c.entries);
    f.problems = std::move(c.problems);
    return f;
  }
  // The header and the slabs handed out (a mid-run check copies only what
  // the run has touched).
  invariants::snapshot snapshot(std::uint64_t stamp) const {
    const std::size_t n = slabhash::handed_out_words(words_[slabhash::alloc_counter_word], params_);
    return slabhash::table_snapshot(params_, V, std::vector<std::uint64_t>(words_.get(), words_.get() + n), stamp);
  }

 private:
  struct aligned_delete {
    void operator()(std::uint64_t* p) const { ::operator delete[](p, std::align_val_t{256}); }
  };
  slabhash::params params_;
  std::size_t count_ = 0;
  std::unique_ptr<std::uint64_t[], aligned_delete> words_;
  slabhash::slab_mutant mut_;
};

}  // namespace gfsl
