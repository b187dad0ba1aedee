// A user's structure as the registry's user subject (core/user/subject.hpp):
// the run entry that drives the user's device callables through the
// CUDA-on-CPU layer, and gfsl::cpu::main, which registers the structure and
// runs gfsl's own command line (cli/gfsl.cpp) on it.
//
// A run is the generic runner's shape (exec/host_run.hpp) with warps for
// teams: the prefill as one warp's inserts, then one launch of `teams` warps
// under the campaign's scheduler options, warp t running team t's
// operations; each operation is bracketed by __syncwarp so that lane 0's
// call stamp precedes every lane's first access and its return stamp
// follows every lane's last (real-time order implies stamp order,
// model/history.hpp). Stamps come from one counter: every lane runs on one
// OS thread, so the counter's order is the run's order.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <tuple>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/registry.hpp"
#include "exec/host_runner.hpp"
#include "exec/sched/scheduler.hpp"
#include "model/history.hpp"
#include "model/script.hpp"
#include "model/sequential_map.hpp"
#include "model/workload.hpp"

#define GFSL_CPU_ALLOW_ASM
#include "gfsl/cpu/cuda.hpp"
#include "gfsl/cpu/subject.hpp"

namespace gfsl::cpu::detail {
// exec/cuda_on_cpu/runtime.cpp: a launch under scheduler options as the
// campaigns make them, with the scheduler's whole outcome.
launch_result launch_under(const options& o, const sched::options& so, dim3 grid, dim3 block, std::function<void()> lane_body,
                           sched::outcome* whole);
}  // namespace gfsl::cpu::detail

namespace gfsl::cpu {

namespace {

const structure* registered = nullptr;

std::string stop_line(const launch_result& r) {
  if (!r.faults.empty()) return r.faults.front();
  return "the run stopped (" + r.stop + ")";
}

host_run run_user(const model::workload& w, host_mode mode, std::uint32_t, bool keep_records, const sched::options* so,
                  sched::outcome* outcome, const run_extras& extras) {
  const structure& s = *registered;
  const user::slot_state& slot = user::slot();
  if (mode != host_mode::scheduled) {
    throw std::invalid_argument(slot.name + " runs under the deterministic scheduler only (backend host): its lanes are fibers");
  }
  const bool values = slot.model == user::user_model::map;
  host_run out;
  const model::script* script = extras.script;
  if (script && script->team_ops.size() != w.teams) {
    throw std::invalid_argument("the script lists " + std::to_string(script->team_ops.size()) + " teams, the workload " +
                                std::to_string(w.teams));
  }
  std::vector<std::uint64_t> first(w.teams + 1, 0);
  std::vector<model::operation> listed;
  for (std::uint32_t t = 0; t < w.teams; ++t) {
    if (script) listed.insert(listed.end(), script->team_ops[t].begin(), script->team_ops[t].end());
    first[t + 1] = script ? listed.size() : model::team_first_op(w, t + 1);
  }
  // A set's history carries no values: what a find returns is not read.
  auto shaped = [&](model::operation op) {
    if (!values) op.value = 0;
    return op;
  };
  auto op_at = [&](std::uint64_t j) { return shaped(script ? listed[j] : model::operation_at(w, j)); };

  const void* memory_base = nullptr;
  std::size_t memory_bytes = 0;
  // Without the structure's memory the ptx model has no words to track: such
  // a run is an sc run (the same in every replay).
  const bool ptx = so && so->mem == sched::memory::ptx && s.memory;
  if (ptx) std::tie(memory_base, memory_bytes) = s.memory();

  reset_device_globals();
  s.reset();

  options lo;  // what the layer's fault lines and stacks take from the user's options
  lo.quiet = true;
  lo.strategy = so ? sched::name(so->strat) : "random";

  // Prefill: one warp's inserts, in lane order, as the generic runner's
  // prefill is one team's.
  out.prefill = script ? script->prefill : model::prefill_operations(w);
  for (model::operation& op : out.prefill) op = shaped(op);
  std::string error;
  {
    sched::options po;
    po.gran = sched::granularity::chunk;
    po.seed = w.seed ^ 0xF1F1F1F1ull;
    if (so) po.livelock_steps = so->livelock_steps;
    std::size_t done = 0;
    sched::outcome prefilled;
    const launch_result r = detail::launch_under(lo, po, 1, 32, [&] {
      for (std::size_t i = 0; i < out.prefill.size(); ++i) {
        (void)s.insert(out.prefill[i].key, out.prefill[i].value);
        if ((threadIdx.x & 31) == 0) {
          done = i + 1;
          completed_operation();
        }
      }
    }, &prefilled);
    if (prefilled.reason != sched::stop_reason::completed) {
      out.prefill_stop = prefilled.reason;
      out.prefill_report = prefilled.report + (r.faults.empty() ? "" : r.faults.front() + "\n");
      out.prefill.resize(done);
    } else if (!r.faults.empty()) {
      error = "in the prefill: " + r.faults.front();
    }
  }

  std::uint64_t clock = model::first_free_stamp(out.prefill.size());
  live_history* live = keep_records ? extras.live : nullptr;
  std::vector<std::vector<model::op_record>> own_records;
  std::vector<std::vector<model::op_record>>& per_team = live ? live->per_team : own_records;
  per_team.assign(w.teams, {});
  for (std::uint32_t t = 0; t < w.teams && keep_records; ++t) per_team[t].reserve(first[t + 1] - first[t]);
  if (live) {
    live->started = std::make_unique<std::atomic<std::size_t>[]>(w.teams);
    live->completed = std::make_unique<std::atomic<std::size_t>[]>(w.teams);
    live->ready.store(true, std::memory_order_release);
  }
  std::vector<op_counts> counts(w.teams);

  if (error.empty() && out.prefill_stop == sched::stop_reason::completed) {
    sched::options cso = so ? *so : sched::options{};
    cso.chunk_words = 32;
    if (!ptx) cso.mem = sched::memory::sc;
    cso.memory_base = static_cast<const std::uint64_t*>(memory_base);
    cso.memory_words = memory_bytes / 8;
    cso.describe_team = [&](team_id t) -> std::string {
      if (!keep_records || t >= per_team.size() || per_team[t].empty() || !per_team[t].back().pending()) return {};
      return "in " + model::describe(per_team[t].back().op);
    };
    const auto body = [&] {
      const std::uint32_t lane = threadIdx.x & 31, t = threadIdx.x / 32;
      for (std::uint64_t j = first[t]; j < first[t + 1]; ++j) {
        const model::operation op = op_at(j);
        std::size_t slot_at = 0;
        __syncwarp();
        if (lane == 0) {
          stamp();  // the memory model's happens-before at the call (ptx)
          if (keep_records) {
            slot_at = per_team[t].size();
            per_team[t].push_back({t, op, status::ok, false, 0, clock++, model::no_stamp});
            if (live) live->started[t].store(slot_at + 1, std::memory_order_release);
          } else {
            ++clock;
          }
        }
        __syncwarp();
        std::uint32_t value = 0;
        bool ok = false;
        switch (op.kind) {
          case op_kind::insert: ok = s.insert(op.key, op.value); break;
          case op_kind::remove: ok = s.erase ? s.erase(op.key) : false; break;
          case op_kind::contains: ok = s.find(op.key, value); break;
        }
        __syncwarp();
        if (lane == 0) {
          stamp();
          const std::uint64_t ret = clock++;
          if (keep_records) {
            model::op_record& rec = per_team[t][slot_at];
            rec.ok = ok;
            rec.value = values && op.kind == op_kind::contains && ok ? value : 0;
            rec.ret = ret;
            if (live) live->completed[t].store(slot_at + 1, std::memory_order_release);
          }
          counts[t].add(op.kind, {status::ok, ok, value});
          completed_operation();
        }
      }
    };
    sched::outcome whole;
    const auto start = std::chrono::steady_clock::now();
    const launch_result r = detail::launch_under(lo, cso, 1, 32 * w.teams, body, &whole);
    out.report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (outcome) *outcome = whole;
    // A fault of the layer (a divergent collective, a lane that threw, an
    // exited lane in a mask) is the run's error; a scheduler stop
    // (deadlock, livelock) is the outcome's, which the fuzzer reports as a
    // hang.
    if (!r.faults.empty() && whole.reason == sched::stop_reason::completed) error = r.faults.front();
    if (!r.faults.empty() && whole.reason != sched::stop_reason::completed && outcome) {
      outcome->report = stop_line(r) + "\n" + outcome->report;
    }
  }
  if (!error.empty()) {
    out.report.first_error = status::corrupt;
    out.report.error_detail = error;
  }
  for (std::uint32_t t = 0; t < w.teams; ++t) {
    for (int k = 0; k < 3; ++k)
      for (int b = 0; b < 2; ++b) out.report.counts.by_kind[k][b] += counts[t].by_kind[k][b];
    if (keep_records) out.records.insert(out.records.end(), per_team[t].begin(), per_team[t].end());
  }

  // The contents at quiescence: the user's inspector, or one warp's find of
  // every key of the range.
  final_state f;
  const bool quiescent = error.empty() && out.prefill_stop == sched::stop_reason::completed &&
                         (!outcome || outcome->reason == sched::stop_reason::completed);
  if (quiescent) {
    if (s.contents) {
      for (const auto& [k, v] : s.contents()) f.entries.emplace_back(k, values ? v : 0);
      std::sort(f.entries.begin(), f.entries.end());
    } else {
      sched::options fo;
      fo.gran = sched::granularity::chunk;
      if (so) fo.livelock_steps = so->livelock_steps;
      const launch_result r = detail::launch_under(lo, fo, 1, 32, [&] {
        for (std::uint32_t k = 1; k <= w.range; ++k) {
          std::uint32_t v = 0;
          const bool there = s.find(k, v);
          if ((threadIdx.x & 31) == 0) {
            if (there) f.entries.emplace_back(k, values ? v : 0);
            completed_operation();
          }
        }
      }, nullptr);
      if (!r.ok()) f.problems.push_back("reading the contents: " + stop_line(r));
    }
  }
  take_final_state(out, std::move(f));
  out.final_snapshot.subject = subject_kind::user;
  out.final_snapshot.chunk = 32;
  out.final_snapshot.stamp = clock;
  return out;
}

}  // namespace

int main(int argc, char** argv, const structure& s) {
  const std::string bad_name = user::check_user_name(s.name);
  std::string missing;
  if (!s.reset) missing = "reset";
  else if (!s.insert) missing = "insert";
  else if (!s.find) missing = "find";
  if (!bad_name.empty() || !missing.empty() || (s.model != "set" && s.model != "map") || s.max_warps < 2 || s.max_warps > 32 ||
      s.max_key < 2) {
    std::fprintf(stderr, "gfsl::cpu::main: structure '%s': %s\n", s.name.c_str(),
                 !bad_name.empty()   ? bad_name.c_str()
                 : !missing.empty()  ? ("no " + missing + " callable (every structure names reset, insert and find)").c_str()
                 : s.model != "set" && s.model != "map" ? ("model '" + s.model + "' (set or map)").c_str()
                 : s.max_warps < 2 || s.max_warps > 32 ? "max_warps must be in [2, 32]"
                                                       : "max_key must be 2 or more");
    return cli::exit_usage;
  }
  registered = &s;
  user::slot_state& slot = user::slot();
  slot.name = s.name;
  slot.summary = s.summary.empty() ? s.name + ", a user's structure through the CUDA-on-CPU layer" : s.summary;
  slot.model = s.model == "map" ? user::user_model::map : user::user_model::set;
  slot.max_key = s.max_key;
  slot.max_warps = s.max_warps;
  slot.has_erase = static_cast<bool>(s.erase);
  slot.registered = true;
  slot.named = true;
  user::descriptor.name = slot.name;
  user::descriptor.summary = slot.summary;
  user::descriptor.run_host = &run_user;
  user::descriptor.stores_values = slot.model == user::user_model::map;

  // Its replay lines are this program's to run.
  if (argc >= 1) cli::replay_program() = std::filesystem::path(argv[0]).filename().string();
  // The commands that take --subject run the user's unless told otherwise.
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() >= 2 && (args[1] == "fuzz" || args[1] == "run")) {
    const bool given = std::any_of(args.begin() + 2, args.end(), [](const std::string& a) {
      return a == "--subject" || a.rfind("--subject=", 0) == 0;
    });
    if (!given) args.insert(args.begin() + 2, {"--subject", s.name});
  }
  std::vector<char*> av;
  for (std::string& a : args) av.push_back(a.data());
  av.push_back(nullptr);
  return cli::gfsl_main(static_cast<int>(args.size()), av.data());
}

}  // namespace gfsl::cpu
