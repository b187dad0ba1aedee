#include "scheduler.hpp"

#include <boost/context/fiber.hpp>
#include <boost/context/fixedsize_stack.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "../../core/gfsl/layout.hpp"
#include "hold.hpp"
#include "park.hpp"
#include "pct.hpp"
#include "random.hpp"
#include "strategy.hpp"
#include "tear.hpp"

namespace gfsl::sched {

namespace ctx = boost::context;

const char* name(strategy s) {
  switch (s) {
    case strategy::random: return "random";
    case strategy::pct: return "pct";
    case strategy::fair_pct: return "fair-pct";
    case strategy::park: return "park";
  }
  return "?";
}
const char* name(granularity g) {
  switch (g) {
    case granularity::chunk: return "chunk";
    case granularity::line: return "line";
    case granularity::lane: return "lane";
  }
  return "?";
}
const char* name(park_point p) {
  switch (p) {
    case park_point::lock_cas: return "lock-cas";
    case park_point::after_read: return "after-read";
    case park_point::before_write: return "before-write";
    case park_point::mid_read: return "mid-read";
  }
  return "?";
}
const char* name(tear_target t) {
  switch (t) {
    case tear_target::none: return "none";
    case tear_target::validation: return "validation";
  }
  return "?";
}
bool parse(const std::string& text, tear_target& out) {
  for (tear_target t : {tear_target::none, tear_target::validation}) {
    if (text == name(t)) {
      out = t;
      return true;
    }
  }
  return false;
}
bool parse(const std::string& text, park_point& out) {
  for (park_point p : {park_point::lock_cas, park_point::after_read, park_point::before_write, park_point::mid_read}) {
    if (text == name(p)) {
      out = p;
      return true;
    }
  }
  return false;
}
const char* name(stop_reason r) {
  switch (r) {
    case stop_reason::completed: return "completed";
    case stop_reason::deadlock: return "deadlock";
    case stop_reason::livelock: return "livelock";
    case stop_reason::step_limit: return "step limit";
  }
  return "?";
}
bool parse(const std::string& text, strategy& out) {
  for (strategy s : {strategy::random, strategy::pct, strategy::fair_pct, strategy::park}) {
    if (text == name(s)) {
      out = s;
      return true;
    }
  }
  return false;
}
bool parse(const std::string& text, granularity& out) {
  for (granularity g : {granularity::chunk, granularity::line, granularity::lane}) {
    if (text == name(g)) {
      out = g;
      return true;
    }
  }
  return false;
}

namespace {
constexpr std::uint64_t fnv_prime = 0x100000001B3ull;
constexpr std::uint64_t pool_offset = header_offsets::pool;

// Thrown inside a fiber to leave it when the run stops; never escapes run().
struct stop_signal {};
}  // namespace

struct scheduler::impl {
  options opt;
  team_rng rng;
  std::size_t n = 0;
  std::vector<ctx::fiber> fibers;
  ctx::fiber main;  // the scheduler loop, while a team runs
  std::vector<char> done;    // the team's body returned
  std::vector<char> exited;  // its fiber has ended: returned, or unwound by a stop
  std::vector<std::uint64_t> wait_epoch;  // write epoch of the read that saw the lock taken, 0: not waiting
  std::vector<std::uint64_t> read_epoch;  // write epoch when the team's latest read began
  std::vector<wait_edge> wait;
  std::vector<std::uint32_t> boundaries;  // per team: which positions of its current team-wide read are steps
  pct_rule pct;
  std::vector<team_id> enabled_scratch;
  std::vector<team_id> unfinished;       // teams whose body has not returned, for the fast path
  std::uint64_t latest_wait_epoch = 0;   // the largest wait epoch set: nobody waits once writes pass it

  team_id current = no_team;
  team_id next = no_team;
  std::uint64_t write_epoch = 1;
  std::uint64_t steps = 0;
  std::uint64_t switches = 0;
  std::uint64_t priority_changes = 0;
  std::uint64_t since_completion = 0;
  std::uint64_t completed_total = 0;           // operations completed by all teams
  parking parked;                              // park, tear: who sleeps until completed_total reaches what
  std::uint64_t fingerprint = 0xCBF29CE484222325ull;
  bool stopping = false;
  stop_reason reason = stop_reason::completed;
  std::vector<logged_access> log;
  std::vector<access> last_access;  // per team, for the position in a stop report
  std::vector<char> accessed;       // the team has made an access
  // ptx: the model, and per team whether its latest read returned a stale
  // store somewhere (then a lock it saw taken may be free already: it may
  // not wait for a write) and the stale read of its latest load.
  std::unique_ptr<ptx_memory> memory;
  std::vector<char> stale_in_read;
  stale_read last_stale;
  coverage_hold cover;
  tearing tear;

  team_rng stale_rng;

  explicit impl(const options& o) : opt(o), rng(o.seed ^ 0x243F6A8885A308D3ull), stale_rng(o.stale_seed ^ 0x13198A2E03707344ull) {}

  std::uint64_t below(std::uint64_t bound) { return sched::below(rng, bound); }
  bool enabled(team_id t) const {
    return !done[t] && (wait_epoch[t] == 0 || write_epoch > wait_epoch[t]) && !parked.parked(t, completed_total) && t != cover.held;
  }

  bool waiting_now(team_id t) const { return !done[t] && wait_epoch[t] != 0 && write_epoch <= wait_epoch[t]; }

  bool pct_now() const { return pct_rule::rules(opt, steps); }

  bool nobody_waits() const { return write_epoch > latest_wait_epoch; }
  bool nobody_parked() const { return parked.nobody_parked(completed_total) && cover.held == no_team; }

  void finished(team_id t) {
    done[t] = 1;
    unfinished.erase(std::find(unfinished.begin(), unfinished.end(), t));
    pct.top_valid = false;
  }

  // A hold that nothing else can make progress under ends: the held team
  // goes on as if its window had closed without the effect.
  team_id choose() {
    team_id pick = choose_among_enabled();
    if (pick == no_team && cover.held != no_team) {
      cover.held = no_team;
      pick = choose_among_enabled();
    }
    return pick;
  }

  // Where the strategies meet (strategy.hpp): the choice rule of the step
  // (PCT's or random's) among the teams that park, tears and the hold
  // leave enabled.
  team_id choose_among_enabled() {
    // Fast paths while no team waits on a lock: every unfinished team is
    // enabled. They pick exactly what the full scans below would.
    if (nobody_waits() && nobody_parked()) {
      if (unfinished.empty()) return no_team;
      if (!pct_now()) return pick_random(unfinished, rng);
      return pct.top_of(unfinished);
    }
    if (pct_now()) {
      for (;;) {
        const team_id best = pct.best(n, [this](team_id t) { return enabled(t); });
        // A read held open (tear) while every other team waits: it goes on.
        if (best != no_team || opt.tear == tear_target::none || release_last_held() == no_team) return best;
      }
    }
    enabled_scratch.clear();
    for (team_id t : unfinished) {
      if (enabled(t)) enabled_scratch.push_back(t);
    }
    if (enabled_scratch.empty() && (opt.strat == strategy::park || opt.tear != tear_target::none)) {
      // Nobody can complete an operation: the team parked last goes on. It
      // is inside the operation the teams parked before it are waiting for
      // (they parked to let whole operations of others complete), so
      // letting it finish keeps their parks' meaning; releasing them all
      // would send them on before the operation they were parked across.
      // One that waits on a lock as well cannot go on: the next one then.
      // A read held open (tear) is released the same way.
      while (enabled_scratch.empty()) {
        const team_id last = release_last_held();
        if (last == no_team) break;
        if (enabled(last)) enabled_scratch.push_back(last);
      }
    }
    if (enabled_scratch.empty()) return no_team;
    return pick_random(enabled_scratch, rng);
  }

  team_id release_last_held() { return parked.release_last(unfinished, completed_total); }

  void stop(stop_reason r) {
    stopping = true;
    reason = r;
    throw stop_signal{};
  }

  // One scheduling point of the running team.
  void step() {
    if (stopping) throw stop_signal{};
    ++steps;
    ++since_completion;
    if (cover.held != no_team && since_completion > opt.livelock_steps / 4) cover.held = no_team;
    if (opt.max_steps && steps > opt.max_steps) stop(stop_reason::step_limit);
    if (since_completion > opt.livelock_steps) stop(stop_reason::livelock);
    if (opt.check_every && steps % opt.check_every == 0 && opt.on_check) opt.on_check(steps);
    pct.pass_change_points(opt, steps, current, priority_changes);
    const team_id pick = choose();
    if (pick == no_team) stop(stop_reason::deadlock);
    if (pick == current) return;
    next = pick;
    ++switches;
    main = std::move(main).resume();
    if (stopping) throw stop_signal{};
  }

  void note(const access& a, std::uint64_t result) {
    // One multiply-xorshift round per access over all its fields: cheap, and
    // any difference in any field changes the fingerprint with near certainty.
    std::uint64_t v = (static_cast<std::uint64_t>(a.team) << 16 | static_cast<std::uint64_t>(a.kind) << 8 | a.lane) ^
                      (a.word * 0x9E3779B97F4A7C15ull) ^ (a.value * 0xC2B2AE3D27D4EB4Full) ^ (result * 0x165667B19E3779F9ull);
    fingerprint = (fingerprint ^ v) * fnv_prime;
    fingerprint ^= fingerprint >> 29;
    if (opt.record_accesses) {
      log.push_back({a, result, {}});
      if (a.kind == access_kind::load && last_stale.stale) log.back().stale = last_stale;
    }
    if (memory) {
      // The model learns the writes in the order they took effect: one team
      // runs at a time, so this is the words' modification order.
      switch (a.kind) {
        case access_kind::load: break;
        case access_kind::store: memory->store(a.team, a.word, a.value, a.order); break;
        case access_kind::cas: memory->rmw(a.team, a.word, result, result == a.expected, a.value, a.order); break;
        case access_kind::fetch_add: memory->rmw(a.team, a.word, result, true, result + a.value, a.order); break;
        case access_kind::exchange: memory->rmw(a.team, a.word, result, true, a.value, a.order); break;
      }
    }
    if (a.team < n) {
      last_access[a.team] = a;
      accessed[a.team] = 1;
    }
    const bool wrote = a.kind == access_kind::store || a.kind == access_kind::fetch_add ||
                       a.kind == access_kind::exchange || (a.kind == access_kind::cas && result == a.expected);
    if (wrote) ++write_epoch;
    if (wrote && tear.held_now) tear.wrote(a, unfinished);
  }

  // "load of chunk 3 lane 14": where a team was when the run stopped (a
  // livelocked team's position in the structure).
  std::string describe_access(const access& a) const {
    static constexpr const char* kinds[] = {"load", "store", "cas", "fetch-add", "exchange"};
    const auto k = static_cast<std::size_t>(a.kind);
    std::string out = k < 5 ? kinds[k] : "access";
    if (opt.chunk_words && a.word >= pool_offset) {
      const std::uint64_t at = a.word - pool_offset;
      out += " of chunk " + std::to_string(at / opt.chunk_words) + " lane " + std::to_string(at % opt.chunk_words);
    } else {
      out += " of word " + std::to_string(a.word);
    }
    return out;
  }

  std::string describe_stop() const {
    std::string out;
    for (team_id t = 0; t < n; ++t) {
      if (done[t]) continue;
      out += "team " + std::to_string(t);
      if (waiting_now(t)) {
        const wait_edge& e = wait[t];
        out += " waits on chunk " + std::to_string(e.chunk);
        if (lock_is_held(e.lock_word)) {
          const team_id holder = lock_owner(e.lock_word);
          out += ", held by team " + std::to_string(holder);
          if (holder < n && done[holder]) out += ", which has finished without releasing it";
          if (holder == t) out += " (itself)";
        } else {
          out += " (lock word " + std::to_string(e.lock_word) + ")";
        }
      } else {
        out += " is running, not waiting on a lock";
      }
      if (accessed[t]) out += "; last access: " + describe_access(last_access[t]);
      if (opt.describe_team) {
        const std::string what = opt.describe_team(t);
        if (!what.empty()) out += "; " + what;
      }
      out += "\n";
    }
    return out;
  }
};

scheduler::scheduler(const options& o) : p_(std::make_unique<impl>(o)) {}
scheduler::~scheduler() = default;

team_id scheduler::current() const { return p_->current; }
std::uint64_t scheduler::steps() const { return p_->steps; }

void scheduler::point() {
  p_->step();
  p_->read_epoch[p_->current] = p_->write_epoch;
}
void scheduler::fence() {
  if (p_->memory) p_->memory->fence(p_->current);
}
void scheduler::stamp() {
  if (p_->memory) p_->memory->stamp(p_->current);
}
void scheduler::completed_operation() {
  impl& s = *p_;
  s.since_completion = 0;
  ++s.completed_total;
  if (s.current < s.n) s.cover.completed(s.current);
  if (s.tear.held_now) s.tear.extend(s.unfinished, s.parked, s.completed_total);
}

void scheduler::mark(team_id team, std::uint8_t what, std::uint32_t where) { p_->cover.mark(p_->opt.hold, p_->n, team, what, where); }
void scheduler::wait_on(std::uint32_t what, std::uint64_t holder_word) { lock_wait(p_->current, what, holder_word); }
void scheduler::wrote() { ++p_->write_epoch; }

void scheduler::before(const access& a) {
  impl& s = *p_;
  // A word's value before its first store of the run is the oldest of its
  // history; taken before any team can run again (at the step below).
  if (s.memory && a.kind != access_kind::load) s.memory->track(a.word);
  const bool tear = s.opt.tear != tear_target::none && (s.opt.park_teams == 0 || a.team < s.opt.park_teams) &&
                    s.tear.here(a, s.boundaries[a.team], s.rng);
  if (a.group_size > 1 && a.group_index < 32 && !((s.boundaries[a.team] >> a.group_index) & 1u)) return;
  if (tear) {
    s.tear.hold(a.team, s.parked, s.completed_total);
  } else if (s.opt.strat == strategy::park && (s.opt.park_teams == 0 || a.team < s.opt.park_teams) &&
             at_park_point(s.opt.park_at, a, s.accessed[a.team] != 0, s.last_access[a.team]) &&
             s.below(std::max<std::uint32_t>(s.opt.park_every, 1)) == 0) {
    s.parked.park_until(a.team, s.completed_total + s.opt.park_ops);
    ++s.parked.parks;
  }
  s.step();
  if (s.tear.held[a.team]) s.tear.resumed(a.team);
  // The write epoch a read starts from: what a lock wait after it compares
  // with. (A team-wide read spans several steps at line and lane
  // granularity; writes made during it must wake the team.)
  if (a.kind == access_kind::load && a.group_index == 0) {
    s.read_epoch[a.team] = s.write_epoch;
    if (s.memory) s.stale_in_read[a.team] = 0;
  }
}

void scheduler::after(const access& a, std::uint64_t result) { p_->note(a, result); }

std::uint64_t scheduler::load_value(const access& a, std::uint64_t latest) {
  impl& s = *p_;
  if (!s.memory) return latest;
  // Which visible store the load returns: the latest half the time, else
  // any visible one (the latest among them), uniformly. Stale reads are
  // then common enough that a fault needing one is found in few runs, and
  // a team re-reading a word reaches its latest store within a few reads.
  // With a stale stream of its own (options::stale_seed), stale_pct
  // percent of such loads return an older store, uniformly among them.
  const std::uint64_t v = s.memory->load(a.team, a.word, a.order, latest,
                                         [&s](std::uint32_t n) -> std::uint32_t {
                                           if (s.opt.stale_seed == 0) return s.below(2) == 0 ? 0u : static_cast<std::uint32_t>(s.below(n));
                                           if (below(s.stale_rng, 100) >= s.opt.stale_pct) return 0u;
                                           return 1u + static_cast<std::uint32_t>(below(s.stale_rng, n - 1));
                                         },
                                         s.last_stale);
  if (s.last_stale.stale) s.stale_in_read[a.team] = 1;
  return v;
}

void scheduler::lock_wait(team_id team, std::uint32_t chunk, std::uint64_t lock_word) {
  impl& s = *p_;
  // ptx: a read that returned a stale store may have seen a lock taken that
  // is free already; its re-read may see the release without any new
  // write, so it is not put to sleep (its re-reads reach the latest store:
  // coherence only moves them forward).
  if (s.memory && s.stale_in_read[team]) {
    s.wait[team] = {team, chunk, lock_word};
    return;
  }
  // The team decided from what its latest read saw; any write since that
  // read began may already have freed the lock, so it waits only for writes
  // after that point (a later epoch would lose such a wake-up).
  s.wait_epoch[team] = s.read_epoch[team];
  s.latest_wait_epoch = std::max(s.latest_wait_epoch, s.read_epoch[team]);
  s.wait[team] = {team, chunk, lock_word};
}

void scheduler::hint(team_id team, team_hint h) {
  impl& s = *p_;
  if (h == team_hint::validating && team < s.n) s.tear.validation_next[team] = 1;
}

void scheduler::lane_order(team_id team, int lanes, std::uint8_t* order) {
  impl& s = *p_;
  switch (s.opt.gran) {
    case granularity::chunk: s.boundaries[team] = 1u; break;
    case granularity::line: {
      // 128-byte lines of 8-byte words: 16 lanes a line.
      const int per_line = 16;
      const int lines = (lanes + per_line - 1) / per_line;
      std::array<int, 4> line_order{0, 1, 2, 3};
      for (int i = lines; i > 1; --i) std::swap(line_order[i - 1], line_order[s.below(i)]);
      int pos = 0;
      std::uint32_t b = 0;
      for (int l = 0; l < lines; ++l) {
        b |= 1u << pos;
        for (int k = 0; k < per_line && line_order[l] * per_line + k < lanes; ++k) {
          order[pos++] = static_cast<std::uint8_t>(line_order[l] * per_line + k);
        }
      }
      s.boundaries[team] = b;
      break;
    }
    case granularity::lane:
      for (int i = lanes; i > 1; --i) std::swap(order[i - 1], order[s.below(i)]);
      s.boundaries[team] = 0xFFFFFFFFu;
      break;
  }
}

outcome scheduler::run(std::vector<std::function<void()>> bodies) {
  impl& s = *p_;
  s.n = bodies.size();
  s.done.assign(s.n, 0);
  s.exited.assign(s.n, 0);
  s.wait_epoch.assign(s.n, 0);
  s.read_epoch.assign(s.n, 0);
  s.wait.assign(s.n, {});
  s.boundaries.assign(s.n, 1u);
  s.last_access.assign(s.n, {});
  s.parked.reset(s.n);
  s.completed_total = 0;
  s.tear.reset(s.n);
  s.accessed.assign(s.n, 0);
  s.cover.reset(s.n);
  s.stale_in_read.assign(s.n, 0);
  s.last_stale = {};
  s.memory.reset();
  if (s.opt.mem == memory::ptx) {
    if (!s.opt.memory_base) throw std::invalid_argument("the ptx memory model needs the run's shared words (options.memory_base)");
    s.memory = std::make_unique<ptx_memory>(s.n, s.opt.memory_base, s.opt.memory_words);
  }
  s.unfinished.clear();
  for (team_id t = 0; t < s.n; ++t) s.unfinished.push_back(t);
  s.latest_wait_epoch = 0;
  s.pct.top_valid = false;
  s.fibers.clear();
  s.stopping = false;
  s.reason = stop_reason::completed;
  if (s.opt.strat == strategy::pct || s.opt.strat == strategy::fair_pct) s.pct.setup(s.n, s.opt, s.rng);
  else s.pct.priority.assign(s.n, 0);

  for (std::size_t i = 0; i < s.n; ++i) {
    s.fibers.emplace_back(std::allocator_arg, ctx::fixedsize_stack(s.opt.stack_bytes),
                          [&s, i, body = std::move(bodies[i])](ctx::fiber&& caller) mutable {
                            s.main = std::move(caller);
                            try {
                              body();
                              s.finished(static_cast<team_id>(i));
                            } catch (const stop_signal&) {
                              // the run stopped while this team was in it
                            }
                            s.exited[i] = 1;
                            return std::move(s.main);
                          });
  }

  s.current = s.n ? s.choose() : no_team;
  while (s.current != no_team) {
    s.next = no_team;
    s.fibers[s.current] = std::move(s.fibers[s.current]).resume();
    if (s.stopping) break;
    if (s.next != no_team) {
      s.current = s.next;  // the running team yielded to the one it chose
      continue;
    }
    // The team finished: pick among the rest.
    s.current = s.choose();
    if (s.current == no_team) {
      for (std::size_t t = 0; t < s.n; ++t) {
        if (!s.done[t]) {
          s.stopping = true;
          s.reason = stop_reason::deadlock;
          break;
        }
      }
    }
  }

  outcome out;
  out.reason = s.reason;
  out.steps = s.steps;
  out.switches = s.switches;
  out.priority_changes = s.priority_changes;
  out.parks = s.parked.parks;
  out.tears = s.tear.tears;
  out.torn = s.tear.torn;
  out.fingerprint = s.fingerprint;
  out.stale_reads = s.memory ? s.memory->stale_reads() : 0;
  out.pairs = s.cover.pairs;
  out.windows_opened = s.cover.windows_opened;
  out.effects_made = s.cover.effects_made;
  out.window_opens = s.cover.window_opens;
  out.hold_taken = s.cover.taken;
  out.hold_met = s.cover.met;
  if (s.stopping) {
    out.report = s.describe_stop();
    for (team_id t = 0; t < s.n; ++t) {
      if (s.done[t]) continue;
      out.unfinished.push_back(t);
      if (s.waiting_now(t)) out.waits.push_back(s.wait[t]);
    }
    // Each unfinished team is resumed once more to unwind its stack: step()
    // throws stop_signal as soon as it returns into the team.
    for (std::size_t t = 0; t < s.n; ++t) {
      while (!s.exited[t] && s.fibers[t]) s.fibers[t] = std::move(s.fibers[t]).resume();
    }
  }
  s.fibers.clear();
  out.accesses = std::move(s.log);
  return out;
}

}  // namespace gfsl::sched
