// The team interface: the only way the algorithm touches lanes or shared memory.
//
// A team is the N lanes that execute one operation together (thesis 3: one team
// per warp, one lane per chunk entry). Per-lane values live in `Team::lanes`,
// one register on the GPU (each lane holds its own) and an array of N values on
// the CPU (one emulated warp holds them all). Everything the algorithm decides
// is made uniform through ballot and shfl, exactly as on a warp, so one source
// serves both backends.
//
// Every access to shared memory goes through the team: `load_lanes` (lane i
// loads word base[i]; `load_row` the same for a row named once by
// `row_of`, the form the searches' loops use), `gather` (lane i loads the
// word it names),
// `store_lanes` (the named lanes store at once, in no order), `load`, `store`,
// `cas` (acq_rel unless told acquire), `fetch_add` and `exchange` (performed
// by the named lane, result broadcast).
// `hint` tells a scheduler what the team's next step is
// (team_hint::validating: its next read is the second read of a validation,
// the robust variant's seqlock; a scheduler may hold it open,
// sched::tear_target::validation); nothing else changes, on any backend.
// `lock_wait(where, word)` says that the team found the word it waits on
// (at `where`, a unit of the structure's own: GFSL's chunk, Li and Deng's
// barrier word) not yet as it needs it, `word` being what it read, and will
// read it again.
// `shfl_high` and `shfl_low` broadcast one half of a lane's word (an
// entry's value, a down or NEXT pointer; its key; a chunk index), one 32-bit
// shuffle where `shfl` makes two. On the CPU each per-lane access passes one
// hook (core/host_team.hpp), the point where a scheduler interleaves teams.
// Besides its accesses a structure tells the testbed two things: `count`, a
// path taken, one of its own counters (stat_id below; GFSL's:
// core/gfsl/stats.hpp), and `mark`, a step of its operation or an
// effect it completed on a chunk (core/coverage.hpp); the device team keeps
// the counts and ignores the marks.
#pragma once

#include <concepts>
#include <cstdint>

#include "platform.hpp"
#include "types.hpp"

namespace gfsl {

// Memory orders the algorithm asks for; each backend maps them onto its atomics.
enum class mem_order : std::uint8_t { relaxed, acquire, release, acq_rel };

// What a structure tells a scheduler of its next step (Team::hint).
enum class team_hint : std::uint8_t {
  validating,  // the next team-wide read is the second read of a validation
};

// A structure's own counters (Team::count), numbered by the subject in its
// folder (GFSL's path_stat, core/gfsl/stats.hpp): at most max_team_stats.
// Counter reads_stat counts the structure's team-wide reads, the one a
// search counts on every step: the device team adds that one on every lane
// (core/cuda/device_team.cuh), so it costs no compare.
using stat_id = std::uint8_t;
inline constexpr int max_team_stats = 16;
inline constexpr stat_id reads_stat = 14;

// A team's counters by stat_id. Count: 64-bit on the host; the device team
// counts in 32-bit registers and adds them into 64-bit totals.
template <class Count>
struct basic_team_stats {
  Count count[max_team_stats] = {};
  template <class Other>
  GFSL_FN basic_team_stats& operator+=(const basic_team_stats<Other>& o) {
    for (int i = 0; i < max_team_stats; ++i) count[i] += o.count[i];
    return *this;
  }
};
using team_stats = basic_team_stats<std::uint64_t>;

#if !defined(__CUDACC__)
// The interface, spelled out for the host compiler (nvcc's device pass checks
// the same calls by instantiation).
template <class T>
concept team = requires(T t, const T ct, typename T::lanes& l, const typename T::lanes& cl, std::uint64_t* p,
                        std::uint64_t& expected) {
  { T::width } -> std::convertible_to<int>;
  { ct.id() } -> std::convertible_to<team_id>;
  { t.load_lanes(p) } -> std::same_as<typename T::lanes>;
  { ct.row_of(p) } -> std::same_as<typename T::row>;
  { t.load_row(ct.row_of(p), std::uint64_t{}) } -> std::same_as<typename T::lanes>;
  { ct.ballot(cl, [](int, std::uint64_t) { return true; }) } -> std::same_as<std::uint32_t>;
  { ct.shfl(cl, 0) } -> std::same_as<std::uint64_t>;
  { ct.shfl_high(cl, 0) } -> std::same_as<std::uint32_t>;
  { ct.shfl_low(cl, 0) } -> std::same_as<std::uint32_t>;
  { ct.set_lane(l, 0, std::uint64_t{}) };
  { t.load(p, 0) } -> std::same_as<std::uint64_t>;
  { t.store(p, 0, std::uint64_t{}, mem_order::release) };
  { t.cas(p, 0, expected, std::uint64_t{}) } -> std::same_as<bool>;
  { t.cas(p, 0, expected, std::uint64_t{}, mem_order::acquire) } -> std::same_as<bool>;
  { t.fetch_add(p, 0, std::uint64_t{}, mem_order::relaxed) } -> std::same_as<std::uint64_t>;
  { t.exchange(p, 0, std::uint64_t{}, mem_order::relaxed) } -> std::same_as<std::uint64_t>;
  { t.load_lanes(p, mem_order::relaxed) } -> std::same_as<typename T::lanes>;
  { t.gather([](int) -> const std::uint64_t* { return nullptr; }) } -> std::same_as<typename T::lanes>;
  { ct.shfl_from(cl, [](int lane) { return lane; }) } -> std::same_as<typename T::lanes>;
  { ct.map(cl, cl, [](int, std::uint64_t a, std::uint64_t) { return a; }) } -> std::same_as<typename T::lanes>;
  { ct.splat(std::uint64_t{}) } -> std::same_as<typename T::lanes>;
  { t.store_lanes(p, cl, std::uint32_t{}, mem_order::release) };
  { t.lock_wait(std::uint32_t{}, std::uint64_t{}) };
  { t.hint(team_hint::validating) };
  { t.random_u32() } -> std::same_as<std::uint32_t>;
  { t.count(stat_id{}) };
  { t.mark(std::uint8_t{}, std::uint32_t{}) };
};
#endif

// Per-team generator for the p_chunk coin (thesis 4.2.2: "randomly generated
// on-device"): splitmix64, small enough to live in a register on every lane,
// and every lane draws the same number so the decision stays uniform.
struct team_rng {
  std::uint64_t state = 0;
  GFSL_FN explicit team_rng(std::uint64_t seed = 0) : state(seed) {}
  GFSL_FN std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// Seed of team `t` in a run seeded with `seed`: distinct streams per team.
GFSL_FN std::uint64_t team_seed(std::uint64_t seed, team_id t) {
  team_rng mix(seed ^ (0xD1B54A32D192ED03ull * (static_cast<std::uint64_t>(t) + 1)));
  return mix.next();
}

}  // namespace gfsl
