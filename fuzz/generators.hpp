// RapidCheck generators for whole runs, composed from small pieces. Every
// piece shrinks towards the simpler run: fewer operations, fewer teams,
// smaller key ranges, then the simpler schedule (random before PCT, whole
// chunk reads before lines and lanes).
#pragma once

#include <rapidcheck.h>

#include "fuzz/run_config.hpp"

namespace gfsl::fuzz {

// The upper levels' rule of the generated runs (model::workload::reraise):
// the thesis' in every run, re-raise in every run, or each run's own (one bit
// of its workload seed). Mixed is the default: swarm testing varies every
// rule that changes the algorithm, so that a fault in either rule is within
// reach of a default campaign.
enum class upper_choice { thesis, reraise, mixed };
const char* upper_choice_name(upper_choice c);
bool parse_upper_choice(const std::string& text, upper_choice& out);

// What the generated runs' loads see (exec/sched/memory_model.hpp): sc in
// every run, ptx in every run, or each run's own: ptx in one run of
// `ptx_share_of_mixed` (two bits of its schedule seed, so that the sc runs
// are the runs a campaign made before), sc in the others. Mixed is the host
// campaigns' default: a bug made of a missing acquire or release shows only
// under ptx, a bug of interleavings alone is found faster under sc, where
// no load is stale. A ptx run draws its stale choices from a stream of its
// own (sched::options::stale_seed) with a share of stale loads that
// shrinks towards the model's half.
enum class memory_choice { sc, ptx, mixed };
inline constexpr unsigned ptx_share_of_mixed = 4;
const char* memory_choice_name(memory_choice c);
bool parse_memory_choice(const std::string& text, memory_choice& out);
// The run's model under `c`, from its schedule seed.
sched::memory memory_of(memory_choice c, std::uint64_t schedule_seed);

struct generator_limits {
  std::uint32_t max_teams = 64;         // 2..max_teams on the CPU
  std::uint64_t max_ops = 2000;
  std::uint32_t max_range = 1000000;
  bool vary_granularity = true;          // else always `granularity`
  // Targeted parks (exec/sched/scheduler.hpp, hold_directive): the directed
  // runs that need one hold their team with it, and host campaigns add
  // runs aimed at the coverage pairs a batch reached least
  // (fuzz/coverage.hpp). false: neither (the campaign as it was before).
  bool targeted_parks = true;
  sched::granularity granularity = sched::granularity::chunk;
  // What the runs' loads see: as its journal header records it.
  memory_choice memory = memory_choice::sc;
  upper_choice upper = upper_choice::mixed;
  // The structure the runs test; SlabHash's runs draw a bucket count that
  // shrinks towards one bucket, where every key collides.
  subject_kind subject = subject_kind::gfsl;
  // The directed runs that tear validations' second reads
  // (fuzz/scenarios.hpp, validation_tear): off only to measure a campaign
  // without them (tests/test_fuzz.cpp).
  bool validation_tears = true;
};

rc::Gen<model::workload> gen_workload(const generator_limits& lim);
rc::Gen<sched::options> gen_schedule(const generator_limits& lim, std::uint64_t ops);
// Runs of the limits' subject, with its variant and seeded bug as `c` holds
// them (run_config's choice).
rc::Gen<run_config> gen_run(const generator_limits& lim, const std::string& backend, const run_config& c);
// The same without SlabHash's scenario runs: generated workloads only.
rc::Gen<run_config> gen_run_generated(const generator_limits& lim, const std::string& backend, const run_config& c);

}  // namespace gfsl::fuzz
