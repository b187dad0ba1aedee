// The Li-Deng skiplist as the generic CPU runner sees it (exec/host_run.hpp;
// its entry is core/lideng/host.cpp): memory, the operations on a host team,
// the contents at quiescence, a snapshot.
//
// What a run must look like for it (core/lideng/README.md): the concurrent
// phase is `batch` teams, every team the same number of operations, and
// operation j of every team of one kind (phase-separated batches); the
// prefill is one team alone (batch 1: no barrier). A run that gives one team
// fewer operations leaves the others waiting at a barrier; the host entry
// makes every run it is given of that shape (host.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "../../exec/host_runner.hpp"
#include "../../exec/host_structure.hpp"
#include "../../invariants/snapshot.hpp"
#include "../../model/workload.hpp"
#include "../host_team.hpp"
#include "../subject.hpp"
#include "algorithm.hpp"
#include "invariants.hpp"
#include "layout.hpp"

namespace gfsl {

template <lideng::lideng_variant V, bool Mutable>
class lideng_host_subject {
 public:
  static constexpr int width = lideng::node_words;
  static constexpr bool has_events = false;
  using team_type = host_team<width>;
  using prefill_ops = lideng::algorithm<team_type, V, false>;
  using concurrent_ops = lideng::algorithm<team_type, V, Mutable>;

  // The generic runner's (exec/host_run.hpp): the levels are the workload's
  // (0: the default), the seeded bug the run's choice.
  lideng_host_subject(const model::workload& w, std::uint32_t pool, const run_extras& ex)
      : lideng_host_subject(w, pool, w.levels ? static_cast<int>(w.levels) : 8, static_cast<lideng::lideng_mutant>(ex.choice.mutant)) {}
  // `pool`: nodes, head and tail included. The batch is the workload's teams.
  lideng_host_subject(const model::workload& w, std::uint32_t pool, int levels = 8,
                      lideng::lideng_mutant m = lideng::lideng_mutant::none)
      : mut_(m) {
    params_.levels = levels;
    params_.batch = w.teams;
    params_.pool_nodes = pool;
    if (const std::string bad = lideng::validate(params_); !bad.empty()) throw std::invalid_argument(bad);
    count_ = lideng::word_count(params_);
    words_.reset(static_cast<std::uint64_t*>(::operator new[](count_ * sizeof(std::uint64_t), std::align_val_t{256})));
    for (std::size_t i = 0; i < count_; ++i) words_[i] = lideng::initial_word(i, params_);
  }

  const lideng::params& params() const { return params_; }
  std::uint64_t* words() const { return words_.get(); }
  std::size_t word_count() const { return count_; }
  // The prefill is one team: a batch of one, which crosses no barrier.
  prefill_ops prefill_algorithm(team_type& t) const {
    lideng::params one = params_;
    one.batch = 1;
    return prefill_ops(t, words_.get(), one);
  }
  std::unique_ptr<concurrent_ops> concurrent_algorithm(team_type& t) const {
    return std::make_unique<concurrent_ops>(t, words_.get(), params_, mut_);
  }
  template <class Ops>
  static op_result apply(Ops& a, const model::operation& op) {
    return a.apply(op.kind, op.key, op.value);
  }
  final_state inspect() const {
    lideng::contents c = lideng::inspect(words_.get(), count_, params_);
    final_state f;
    f.chunks_allocated = c.nodes_allocated;
    f.entries = std::move(c.entries);
    f.problems = std::move(c.problems);
    return f;
  }
  // The snapshot carries the pool and the variant; its `buckets` field
  // carries the levels (the snapshot has no field of its own for them yet).
  invariants::snapshot snapshot(std::uint64_t stamp) const {
    invariants::snapshot snap;
    snap.subject = subject_kind::lideng;
    snap.chunk = width;
    snap.capacity = params_.pool_nodes;
    snap.buckets = static_cast<std::uint32_t>(params_.levels);
    snap.variant = static_cast<std::uint8_t>(V);
    snap.stamp = stamp;
    snap.words.assign(words_.get(), words_.get() + count_);
    return snap;
  }

 private:
  struct aligned_delete {
    void operator()(std::uint64_t* p) const { ::operator delete[](p, std::align_val_t{256}); }
  };
  lideng::params params_;
  std::size_t count_ = 0;
  std::unique_ptr<std::uint64_t[], aligned_delete> words_;
  lideng::lideng_mutant mut_;
};

}  // namespace gfsl
