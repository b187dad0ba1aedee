// gfsl run: executes a workload on a backend and prints a summary with the
// checks the run allows.
#include <cstdio>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/host_runner.hpp"
#include "model/final_state.hpp"
#include "model/workload.hpp"
#if defined(GFSL_HAVE_CUDA)
#include "core/cuda/device_runner.hpp"
#endif

namespace gfsl::cli {

namespace {

struct run_options {
  gfsl::model::workload w;
  std::string backend = "host";
  std::string mix = "10,10,80";
  std::uint32_t pool = 0;
  double watchdog = 120.0;
};

bool parse_mix(const std::string& text, gfsl::model::workload& w) {
  int i = -1, d = -1, c = -1;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d,%d,%d%c", &i, &d, &c, &extra) != 3) return false;
  w.insert_pct = i;
  w.delete_pct = d;
  w.contains_pct = c;
  return true;
}

std::string replay_line(const run_options& o) {
  std::ostringstream s;
  s << "gfsl run --backend " << o.backend << " --teams " << o.w.teams << " --ops " << o.w.ops << " --mix " << o.w.insert_pct
    << "," << o.w.delete_pct << "," << o.w.contains_pct << " --range " << o.w.range << " --prefill " << o.w.prefill
    << " --chunk " << o.w.chunk << " --p-chunk " << o.w.p_chunk << " --seed " << o.w.seed;
  if (o.pool) s << " --pool " << o.pool;
  return s.str();
}

int report(const run_options& o, const gfsl::host_run& r, const std::string& device) {
  using gfsl::op_kind;
  const auto& c = r.report.counts;
  auto kind = [&](const char* name, op_kind k) {
    const auto& b = c.by_kind[static_cast<int>(k)];
    std::printf("  %-9s %10llu  (true %llu, false %llu)\n", name, static_cast<unsigned long long>(b[0] + b[1]),
                static_cast<unsigned long long>(b[1]), static_cast<unsigned long long>(b[0]));
  };
  std::printf("gfsl run: backend %s%s%s\n", o.backend.c_str(), device.empty() ? "" : " on ", device.c_str());
  std::printf("workload: %s\n", o.w.describe().c_str());
  std::printf("prefill:  %zu keys\n", r.prefill.size());
  std::printf("operations:\n");
  kind("insert", op_kind::insert);
  kind("delete", op_kind::remove);
  kind("contains", op_kind::contains);
  if (c.errors) std::printf("  errors    %10llu\n", static_cast<unsigned long long>(c.errors));
  const auto& p = r.report.paths;
  std::printf("paths:    splits %llu, merges %llu, zombies skipped %llu, zombie unlinks %llu (head %llu), backtracks %llu, "
              "restarts %llu, down-pointer updates %llu, raised keys %llu, lock waits %llu\n",
              (unsigned long long)p.splits, (unsigned long long)p.merges, (unsigned long long)p.zombies_skipped,
              (unsigned long long)p.zombie_unlinks, (unsigned long long)p.head_unlinks, (unsigned long long)p.backtracks,
              (unsigned long long)p.restarts, (unsigned long long)p.down_ptr_updates, (unsigned long long)p.raised_keys,
              (unsigned long long)p.lock_waits);
  std::printf("structure: height %d, %llu of %u pool chunks allocated, %zu keys at the end\n", r.report.height,
              (unsigned long long)r.report.chunks_allocated, r.report.pool_chunks, r.final_entries.size());
  const double ops_done = static_cast<double>(r.records.empty() ? o.w.ops : r.records.size());
  std::printf("elapsed:  %.6f s concurrent phase (%.3f Mops/s)\n", r.report.seconds,
              r.report.seconds > 0 ? ops_done / r.report.seconds / 1e6 : 0.0);

  int rc = exit_ok;
  if (r.report.first_error != gfsl::status::ok) {
    std::printf("error:    %s\n", r.report.error_detail.c_str());
    rc = exit_run_error;
  }
  if (!r.structural_problems.empty()) {
    std::printf("check:    FAILED: the final structure is malformed (%zu problems), first: %s\n",
                r.structural_problems.size(), r.structural_problems.front().c_str());
    rc = exit_violation;
  } else {
    std::printf("check:    final structure well-formed\n");
  }
  const auto implied = gfsl::model::check_implied_final_state(r.prefill, r.records, r.final_entries);
  if (!implied.empty()) {
    std::printf("check:    FAILED: final contents disagree with the successful operations: %s\n", implied.front().c_str());
    rc = exit_violation;
  } else {
    std::printf("check:    final contents agree, key by key, with the successful operations\n");
  }
  if (o.backend == "host") {
    const std::string mismatch = gfsl::model::first_sequential_mismatch(r.prefill, r.records);
    if (!mismatch.empty()) {
      std::printf("check:    FAILED: %s\n", mismatch.c_str());
      rc = exit_violation;
    } else {
      std::printf("check:    every answer matches the sequential model (teams took turns)\n");
    }
  } else {
    std::printf("check:    answers of concurrent operations are not checked here (linearizability: gfsl check)\n");
  }
  std::printf("replay:   %s%s\n", replay_line(o).c_str(),
              o.backend == "host" ? "" : "   (threads and cuda runs interleave freely: the same workload, not the same schedule)");
  return rc;
}

int run_command(run_options& o) {
  if (!parse_mix(o.mix, o.w)) {
    std::fprintf(stderr, "gfsl run: --mix %s: expected three percentages I,D,C such as 10,10,80\n", o.mix.c_str());
    return exit_usage;
  }
  if (const std::string bad = o.w.validate(); !bad.empty()) {
    std::fprintf(stderr, "gfsl run: %s\n", bad.c_str());
    return exit_usage;
  }
  if (o.backend == "cuda") {
#if defined(GFSL_HAVE_CUDA)
    if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) {
      std::fprintf(stderr, "gfsl run: --backend cuda: %s\n", why.c_str());
      return exit_usage;
    }
    const gfsl::device_run d = gfsl::run_on_device(o.w, o.pool, true, o.watchdog);
    if (d.timed_out) {
      std::fprintf(stderr, "gfsl run: a kernel did not finish within %.0f s on %s: stopping (hang bound of the watchdog)\n",
                   o.watchdog, d.device_name.c_str());
      std::fflush(stderr);
      std::_Exit(exit_run_error);  // the kernel still holds the device; the process must go
    }
    return report(o, d.run, d.device_name);
#else
    std::fprintf(stderr, "gfsl run: --backend cuda: not available in this build (configured without nvcc)\n");
    return exit_usage;
#endif
  }
  const auto mode = o.backend == "threads" ? gfsl::host_mode::threads : gfsl::host_mode::sequential;
  return report(o, gfsl::run_on_host(o.w, mode, o.pool, true), "");
}

}  // namespace

command add_run_command(CLI::App& root) {
  auto o = std::make_shared<run_options>();
  CLI::App* run = root.add_subcommand("run", "execute a workload on a backend and check what the run allows");
  run->add_option("--backend", o->backend, "host (emulated teams taking turns), threads (one OS thread per team), cuda")
      ->check(CLI::IsMember({"host", "threads", "cuda"}))
      ->capture_default_str();
  run->add_option("--teams", o->w.teams, "teams (emulated warps / warps)")->check(CLI::Range(1u, 1u << 24))->capture_default_str();
  run->add_option("--ops", o->w.ops, "operations in the concurrent phase, over all teams")->capture_default_str();
  run->add_option("--mix", o->mix, "percentages of insert, delete, contains")->capture_default_str();
  run->add_option("--range", o->w.range, "keys uniform in [1, R]")->check(CLI::Range(1u, gfsl::max_user_key))->capture_default_str();
  run->add_option("--prefill", o->w.prefill, "fraction of the range inserted before the concurrent phase")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  run->add_option("--chunk", o->w.chunk, "entries per chunk (N)")->check(CLI::IsMember({16, 32}))->capture_default_str();
  run->add_option("--p-chunk", o->w.p_chunk, "probability that a split raises a key")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  run->add_option("--seed", o->w.seed, "workload seed")->capture_default_str();
  run->add_option("--pool", o->pool, "chunks in the pool (0: sized from the workload)")->capture_default_str();
  run->add_option("--watchdog", o->watchdog, "cuda: seconds a kernel may run before the run is stopped")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return {run, [o] {
            try {
              return run_command(*o);
            } catch (const std::exception& e) {
              std::fprintf(stderr, "gfsl run: %s\n", e.what());
              return exit_run_error;
            }
          }};
}

}  // namespace gfsl::cli
