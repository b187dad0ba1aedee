#include "host_runner.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "algorithm.hpp"
#include "host_structure.hpp"
#include "host_team.hpp"

namespace gfsl {

std::uint32_t default_pool_chunks(const model::workload& w) {
  const double updates = static_cast<double>(w.ops) * (w.insert_pct + w.delete_pct) / 100.0;
  const double keys = std::llround(w.prefill * w.range) + updates;
  const double per_split = (w.chunk - 2) / 2.0;  // a split leaves two half-full chunks
  const double chunks = 2.0 * keys / per_split * 2.0 + 4.0 * w.chunk + 64.0;
  return static_cast<std::uint32_t>(std::min(chunks, 4.0e9));
}

namespace {


template <class Algo>
op_result apply_op(Algo& a, const model::operation& op) {
  switch (op.kind) {
    case op_kind::insert: return a.insert(op.key, op.value);
    case op_kind::remove: return a.remove(op.key);
    case op_kind::contains: return a.contains(op.key);
  }
  return {};
}

template <int N>
host_run run(const model::workload& w, host_mode mode, std::uint32_t pool_chunks, bool keep_records) {
  host_run out;
  const std::uint32_t pool = pool_chunks ? pool_chunks : default_pool_chunks(w);
  host_structure<N> s(pool);
  const std::uint64_t threshold = p_chunk_threshold_of(w.p_chunk);
  out.report.pool_chunks = pool;

  auto note_error = [&](const op_result& r, const model::operation& op, team_id t) {
    if (r.st == status::ok || out.report.first_error != status::ok) return;
    out.report.first_error = r.st;
    out.report.error_detail = std::string(status_name(r.st)) + " during " + model::describe(op) + " by team " +
                              std::to_string(t) + " (pool of " + std::to_string(pool) + " chunks)";
  };

  // Prefill: sequential inserts by team 0, before the concurrent phase.
  out.prefill = model::prefill_operations(w);
  {
    host_team<N> team(0, w.seed ^ 0xF1F1F1F1ull, s.words());
    algorithm<host_team<N>> a(team, s.view(), threshold);
    for (const model::operation& op : out.prefill) {
      const op_result r = apply_op(a, op);
      if (r.st != status::ok) {
        note_error(r, op, 0);
        break;
      }
    }
  }

  std::vector<std::vector<model::op_record>> per_team(w.teams);
  std::vector<op_counts> counts(w.teams);
  std::vector<path_stats> paths(w.teams);
  std::vector<std::unique_ptr<host_team<N>>> teams;
  for (std::uint32_t t = 0; t < w.teams; ++t) {
    teams.push_back(std::make_unique<host_team<N>>(t, w.seed, s.words(), nullptr, mode == host_mode::threads));
    if (keep_records) per_team[t].reserve(team_first_op(w, t + 1) - team_first_op(w, t));
  }
  // The run's clock: read before the operation's first shared access and after
  // its last, so that real-time order implies stamp order (model/history.hpp).
  std::atomic<std::uint64_t> clock{model::first_free_stamp(out.prefill.size())};
  auto step = [&](std::uint32_t t, algorithm<host_team<N>>& a, std::uint64_t j) {
    const model::operation op = model::operation_at(w, j);
    const std::uint64_t call = clock.fetch_add(1, std::memory_order_seq_cst);
    const op_result r = apply_op(a, op);
    const std::uint64_t ret = clock.fetch_add(1, std::memory_order_seq_cst);
    counts[t].add(op.kind, r);
    if (keep_records) {
      // Sequential runs keep the records in execution order: that order is a
      // linearization, checked exactly against the model.
      auto& into = mode == host_mode::sequential ? out.records : per_team[t];
      into.push_back({t, op, r.st, r.ok, r.value, call, ret});
    }
    return r;
  };

  const auto start = std::chrono::steady_clock::now();
  if (out.report.first_error == status::ok) {
    if (mode == host_mode::sequential) {
      // Teams take turns, one operation each, until all are done.
      std::vector<algorithm<host_team<N>>> algos;
      std::vector<std::uint64_t> next(w.teams), end(w.teams);
      for (std::uint32_t t = 0; t < w.teams; ++t) {
        algos.emplace_back(*teams[t], s.view(), threshold);
        next[t] = team_first_op(w, t);
        end[t] = team_first_op(w, t + 1);
      }
      bool stop = false, more = true;
      while (more && !stop) {
        more = false;
        for (std::uint32_t t = 0; t < w.teams && !stop; ++t) {
          if (next[t] == end[t]) continue;
          const op_result r = step(t, algos[t], next[t]++);
          if (r.st != status::ok) {
            note_error(r, model::operation_at(w, next[t] - 1), t);
            stop = true;
          }
          more = true;
        }
      }
    } else {
      std::barrier sync(static_cast<std::ptrdiff_t>(w.teams));
      std::vector<op_result> first_error(w.teams);
      std::vector<std::uint64_t> failed_op(w.teams, 0);
      std::vector<std::thread> threads;
      for (std::uint32_t t = 0; t < w.teams; ++t) {
        threads.emplace_back([&, t] {
          algorithm<host_team<N>> a(*teams[t], s.view(), threshold);
          sync.arrive_and_wait();
          for (std::uint64_t j = team_first_op(w, t); j < team_first_op(w, t + 1); ++j) {
            const op_result r = step(t, a, j);
            if (r.st != status::ok) {  // the structure is stopped: the others see it at their next operation
              first_error[t] = r;
              failed_op[t] = j;
              break;
            }
          }
        });
      }
      for (std::thread& th : threads) th.join();
      for (std::uint32_t t = 0; t < w.teams; ++t) {
        if (first_error[t].st != status::ok && first_error[t].st != status::stopped) {
          note_error(first_error[t], model::operation_at(w, failed_op[t]), t);
        }
      }
    }
  }
  out.report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  for (std::uint32_t t = 0; t < w.teams; ++t) {
    for (int k = 0; k < 3; ++k)
      for (int b = 0; b < 2; ++b) out.report.counts.by_kind[k][b] += counts[t].by_kind[k][b];
    out.report.counts.errors += counts[t].errors;
    out.report.paths += teams[t]->stats();
    if (keep_records && mode == host_mode::threads) {
      out.records.insert(out.records.end(), per_team[t].begin(), per_team[t].end());
    }
  }
  const structure_view<N> v = s.view();
  out.report.chunks_allocated = std::min<std::uint64_t>(v.alloc_counter()[0], pool);
  for (int level = 1; level < N; ++level) {
    if (static_cast<std::int64_t>(v.level_counts()[level]) > 0) out.report.height = level;
  }
  out.final_entries = level_entries(v, 0);
  out.structural_problems = structural_problems(v);
  return out;
}

}  // namespace

host_run run_on_host(const model::workload& w, host_mode mode, std::uint32_t pool_chunks, bool keep_records) {
  return w.chunk == 16 ? run<16>(w, mode, pool_chunks, keep_records) : run<32>(w, mode, pool_chunks, keep_records);
}

}  // namespace gfsl
