// What a `gfsl stress` run is made of: options, the configurations they
// expand to, and the one-line replay form of one scheduled structure.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "exec/sched/scheduler.hpp"
#include "stress/stress.hpp"

namespace gfsl::stress {

struct options {
  std::string backend = "host";      // host | threads | cuda
  std::vector<int> chunks{32};       // a configuration per chunk size and range
  std::vector<std::uint32_t> ranges{};  // empty: the shape's default (stable-contains 40, owned-keys 16 per team)
  shape sh = shape::stable_contains;
  double seconds = 10;               // per configuration
  double rebuild_seconds = 5;        // threads, cuda: a fresh structure after R to 2R seconds (seeded)
  double slice_seconds = 1;          // cuda: length of one kernel launch (progress, stop)
  std::uint32_t writers_num = 1, writers_den = 32;  // team t writes iff t % den < num
  std::uint32_t stable_every = 2;
  std::uint32_t low_churn = 0;       // stable-contains: >0: writers churn keys 1..K, every key above is stable (params::low_churn)
  double p_chunk = 1.0;
  bool reraise = false;              // the upper levels' rule (model::workload::reraise)
  std::uint32_t teams = 0;           // 0: host 4, threads 2 per hardware thread, cuda every resident team
  std::uint64_t ops_per_team = 2000; // host: operations of each team per structure
  std::uint64_t max_structures = 0;  // stop after this many structures (0: only --seconds bounds)
  std::string sched = "random";
  sched::options so;                 // host: strategy, granularity, depth (the seed is the structure's)
  std::uint64_t seed = 1;
  std::uint32_t reports = 16;        // violation reports kept per configuration (the rest are counted)
  // The structure under test. A subject whose team reads a fixed number of
  // words (slabhash: a slab, lideng: a node) has `chunks` {16}.
  subject_kind subject = default_subject;
  subject_choice choice;             // the subject's variant and seeded bug (core/subject.hpp)
  std::uint32_t buckets = 0;         // slabhash: 0: one per 64 teams (slabhash_default_buckets)
  std::uint32_t levels = 0;          // lideng: the list's levels (0: its default, 8)
  std::uint32_t churn = 0;           // owned-keys: shared keys range+1 .. range+churn (params::churn); slabhash: 0 = 4 per bucket; batched subjects: 0 = 4
  std::uint32_t pool = 0;            // chunks (0: per backend)
  double hang_seconds = 30;          // a lock wait (cuda) or a team (threads) past this is a hang
  std::string replay;                // host: run only the structure this line describes
  std::uint64_t replay_structure_seed = 0;
  // Set by SIGINT/SIGTERM (cli/workers.hpp stop_on_signals): the teams stop
  // at their next operation, so that an interrupt ends a structure of any
  // size within one operation, not at its end (nullptr: never asked).
  const std::atomic<bool>* stop = nullptr;
};

// "stable-contains" or "owned-keys".
bool parse_shape(const std::string& text, shape& out);

// Parses "A/B" (team t writes iff t % B < A) or "A" (the first A teams: A/teams
// once the team count is known, here A/0). False when malformed.
bool parse_writers(const std::string& text, std::uint32_t& num, std::uint32_t& den);

// The workload parameters of one configuration, with the team count resolved.
params params_of(const options& o, std::uint32_t range, std::uint32_t teams);
std::uint32_t default_range(const options& o, std::uint32_t teams);
std::uint32_t default_teams(const options& o);

// Empty when the options make sense for every configuration they expand to
// (teams resolved as on the host backends; the cuda backend checks again with
// its own team count); otherwise one line naming the option.
std::string validate(const options& o, std::uint32_t teams);

// SlabHash's defaults on the device (docs/FINDINGS.md, "SlabHash"): every team on a bucket with
// about 63 others, so that chains stay a few slabs long while deletes of
// one key race; two owned keys a team; four shared keys per bucket.
std::uint32_t slabhash_default_buckets(std::uint32_t teams);
std::uint32_t slabhash_default_churn(std::uint32_t buckets);

// Seed of structure i of a configuration.
std::uint64_t structure_seed(std::uint64_t seed, int chunk, std::uint32_t range, std::uint64_t i);

// "gfsl-stress1:shape=...:chunk=32:...:seed=S": one scheduled structure.
inline constexpr const char* replay_magic = "gfsl-stress1:";
std::string encode_replay(const options& o, int chunk, std::uint32_t range, std::uint32_t teams, std::uint64_t structure_seed);
// Empty on success, with `o` set to run that one structure; otherwise one line.
std::string decode_replay(const std::string& text, options& o);

// The role a mutant plays in a stress run: the memory-order amplifiers make
// torn reads frequent; any other is a seeded bug.
const char* mutant_role(mutant m);

}  // namespace gfsl::stress
