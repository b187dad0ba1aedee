// A deterministic scheduler for emulated teams: each team is a fiber
// (Boost.Context) and every shared-memory access it makes through the team
// interface is a scheduling point, where the strategy picks the team that
// makes the next step. One OS thread runs everything, and every choice comes
// from one seeded generator, so a seed replays the same interleaving bit for
// bit.
//
// A team that found a lock taken (lock_wait) is not scheduled again until some
// team writes shared memory after the read that saw it taken began: until
// then its re-reads would return what it already saw, so skipping them loses
// no behaviour, and no strategy can starve a lock holder with a spinning team. When every unfinished team waits
// so, the run is deadlocked; when teams keep stepping but no operation
// completes for a bounded number of steps, it is livelocked. Either stops the
// run with a report of who waits on which chunk, held by whom.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../../core/host_team.hpp"
#include "../../core/types.hpp"
#include "memory_model.hpp"

namespace gfsl::sched {

enum class strategy : std::uint8_t {
  random,    // every step: a uniformly random runnable team
  pct,       // PCT (Burckhardt et al., ASPLOS 2010): random priorities, depth-1 change points in [1, k]
  fair_pct,  // PCT for the first `fair_after` steps, random after
  park,      // random, but a team at a chosen kind of point is parked until the others complete whole operations
};
// Where the park strategy parks a team: the interleavings where one team is
// paused for the whole of another team's operation (a split, merge or unlink).
enum class park_point : std::uint8_t {
  lock_cas,      // just before a CAS (taking a lock, unlinking a zombie)
  after_read,    // just after a team-wide chunk read
  before_write,  // between a read and the write it decided
  mid_read,      // inside a team-wide read, some lanes loaded and the rest not (a torn read held open)
};
// Directed tears (fuzz/scenarios.hpp): which reads the scheduler holds open on
// purpose, whatever the strategy.
enum class tear_target : std::uint8_t {
  none,
  // The second read of a validation, the read a team makes after it says
  // so (Team::validating: GFSL robust's validated_read, the chunk read
  // again before its LOCK word). The read is held after a random number of
  // its lanes (one of its scheduling points: lane granularity, or line with
  // rows of more than 16 words) until another team has written the row
  // and completed an operation, so that a whole burst of writes lands
  // between its lanes.
  // With park_teams, only those teams' reads are held (the victims').
  validation,
};
enum class granularity : std::uint8_t {
  chunk,  // a team-wide read is one step (the thesis' idealised view)
  line,   // one step per 128-byte line of the read, lines in random order
  lane,   // one step per lane, lanes in random order
};

const char* name(strategy s);
const char* name(granularity g);
const char* name(park_point p);
const char* name(tear_target t);
bool parse(const std::string& text, park_point& out);
bool parse(const std::string& text, tear_target& out);
bool parse(const std::string& text, strategy& out);
bool parse(const std::string& text, granularity& out);

// A targeted park: the `nth` time a team (any team, or team `team`) opens
// coverage window `window` (core/coverage.hpp) on a chunk, it is held there,
// before its next access, until another team completes an operation that
// made effect `effect` on that chunk. A hold that could only deadlock the
// run (no other team can step) or starve it (a quarter of the livelock bound
// without a completed operation) is let go early: the run goes on, and the
// outcome says the effect never came (hold_met false).
struct hold_directive {
  static constexpr std::uint32_t any_team = 0xFFFFFFFFu;
  bool active = false;
  std::uint8_t window = 0;
  std::uint8_t effect = 0;
  std::uint32_t nth = 1;
  std::uint32_t team = any_team;
};

struct options {
  strategy strat = strategy::random;
  granularity gran = granularity::lane;
  int depth = 3;                      // PCT: bug depth d (d-1 change points)
  std::uint64_t seed = 1;
  std::uint64_t pct_steps = 100000;   // PCT: k, the expected length of the run in steps
  std::uint64_t fair_after = 0;       // fair-pct: steps of PCT before random (0: pct_steps)
  std::uint64_t livelock_steps = 2000000;  // steps without a completed operation that count as livelock
  std::uint64_t max_steps = 0;        // stop after this many steps (0: no bound)
  park_point park_at = park_point::lock_cas;  // park: where teams are parked
  std::uint32_t park_ops = 1;         // park: whole operations of other teams a parked team waits for
  std::uint32_t park_every = 20;      // park: a team parks at one in this many such points, on average
  // park: only teams 0 .. park_teams-1 park (0: every team). Chosen victims
  // sleep through the other teams' operations without those teams' own
  // parks handing the turn back to them.
  std::uint32_t park_teams = 0;
  // Reads held open on purpose (tear_target), with any strategy.
  tear_target tear = tear_target::none;
  bool record_accesses = false;       // keep every access (tests)
  // Called every `check_every` scheduling points, between two accesses (no
  // team is inside one): where mid-run checks of shared memory go.
  std::uint64_t check_every = 0;
  std::function<void(std::uint64_t step)> on_check;
  // Words per chunk of the structure the teams access (0: unknown): lets a
  // stop report name the chunk and lane of each team's last access.
  std::uint32_t chunk_words = 0;
  // What a stop report says of a team beyond its wait or position (the
  // operation it is in); empty: nothing.
  std::function<std::string(team_id)> describe_team;
  std::size_t stack_bytes = 256 * 1024;
  // What loads see (memory_model.hpp): sc, every load the latest store; ptx,
  // the PTX model, where which visible store a load returns is a choice of
  // this schedule (drawn from the seed, replayed bit for bit). ptx needs the
  // teams' shared words: `memory_base`, `memory_words`.
  memory mem = memory::sc;
  // ptx: which loads return an older store than the latest. stale_seed 0:
  // the choices come from the schedule's own stream, half of them the
  // latest (as every run before these fields). Otherwise from a stream of
  // their own, seeded by stale_seed, with stale_pct percent of the loads
  // that may see an older store returning one (uniformly among those
  // visible): a campaign and its shrinking then vary which loads are stale
  // apart from how the teams interleave (docs/BACKENDS.md, "stale choices").
  std::uint64_t stale_seed = 0;
  std::uint32_t stale_pct = 50;
  const std::uint64_t* memory_base = nullptr;
  std::size_t memory_words = 0;
  // A targeted park (any strategy): replayed bit for bit like the rest.
  hold_directive hold;
};

enum class stop_reason : std::uint8_t { completed, deadlock, livelock, step_limit };
const char* name(stop_reason r);

struct wait_edge {
  team_id team = 0;
  std::uint32_t chunk = 0;
  std::uint64_t lock_word = 0;  // the lock word it saw: names the holder
};

struct logged_access {
  access a;
  std::uint64_t result = 0;
  stale_read stale;  // a load under the ptx model that did not return the latest store
  friend bool operator==(const logged_access& x, const logged_access& y) {
    return x.a.team == y.a.team && x.a.kind == y.a.kind && x.a.lane == y.a.lane && x.a.word == y.a.word &&
           x.a.value == y.a.value && x.result == y.result;
  }
};

struct outcome {
  stop_reason reason = stop_reason::completed;
  std::uint64_t steps = 0;        // scheduling points passed
  std::uint64_t switches = 0;     // times the running team changed
  std::uint64_t priority_changes = 0;  // PCT: change points the run reached while PCT ruled (at most depth - 1)
  std::uint64_t parks = 0;        // park: times a team was parked
  std::uint64_t tears = 0;        // tear: reads held open on purpose
  std::uint64_t torn = 0;         // tear: of those, reads that a write landed in while held
  std::uint64_t fingerprint = 0;  // hash of every access (team, kind, lane, word, value, result) in order
  std::vector<wait_edge> waits;   // deadlock / livelock: what each unfinished team waits on
  std::vector<team_id> unfinished;
  std::string report;             // one line per unfinished team, on a stop
  std::vector<logged_access> accesses;  // with options.record_accesses
  std::uint64_t stale_reads = 0;  // ptx: loads that returned a store older than the latest
  // Interleaving coverage (core/coverage.hpp): bit pair_bit(w, e) of
  // `pairs` when a team's window w was open on a chunk while another team
  // made effect e on it; the windows opened and effects made, each at all;
  // how often each window was opened (what a hold's nth counts).
  std::uint64_t pairs = 0;
  std::uint32_t windows_opened = 0, effects_made = 0;
  std::array<std::uint32_t, 8> window_opens{};
  bool hold_taken = false;  // the hold's nth opening came and its team was held
  bool hold_met = false;    // and an operation with the effect let it go
};

class scheduler final : public access_hook {
 public:
  explicit scheduler(const options& o);
  ~scheduler() override;
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  // Runs body i as team i, each on its own fiber, until all finish or the run
  // stops. A stopped run's fibers are unwound (their destructors run).
  outcome run(std::vector<std::function<void()>> bodies);

  // A scheduling point for code that does not go through the team interface
  // (the toy programs of the tests).
  void point();
  // Tells the scheduler that the running team completed an operation.
  void completed_operation();
  // A lock a toy program wants: lets it report waits as teams do.
  void wait_on(std::uint32_t what, std::uint64_t holder_word);
  // A write by a toy program: wakes the teams waiting on locks.
  void wrote();
  team_id current() const;
  std::uint64_t steps() const;
  // fence.sc by the running team (ptx: memory_model.hpp; sc: nothing to do).
  // For toy programs: the team interface has no fence, as the structures
  // call none.
  void fence();
  // The running team stamps the run's history clock (ptx: an acq_rel RMW,
  // memory_model.hpp; sc: nothing to do). Not a scheduling point: the clock
  // is the observer's.
  void stamp();

  void before(const access& a) override;
  void after(const access& a, std::uint64_t result) override;
  std::uint64_t load_value(const access& a, std::uint64_t latest) override;
  void lock_wait(team_id team, std::uint32_t chunk, std::uint64_t lock_word) override;
  void lane_order(team_id team, int lanes, std::uint8_t* order) override;
  void mark(team_id team, std::uint8_t what, std::uint32_t where) override;
  void hint(team_id team, team_hint h) override;

 private:
  struct impl;
  std::unique_ptr<impl> p_;
};

}  // namespace gfsl::sched
