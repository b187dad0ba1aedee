#include "memory_model.hpp"

#include <algorithm>

namespace gfsl::sched {

const char* name(memory m) { return m == memory::ptx ? "ptx" : "sc"; }
bool parse(const std::string& text, memory& out) {
  if (text == "sc") out = memory::sc;
  else if (text == "ptx") out = memory::ptx;
  else return false;
  return true;
}

ptx_memory::ptx_memory(std::size_t teams, const std::uint64_t* base, std::size_t words)
    : n_(teams), base_(base), index_(words, untracked), vc_(teams * teams, 0), pending_(teams * teams, 0),
      fence_clock_(teams * teams, 0), fenced_(teams, 0), sc_clock_(teams, 0), stamp_clock_(teams, 0) {
  // Epochs start at 1: a store by team t at epoch e happens before team u's
  // access when u's clock holds t's component >= e, and a team's clock of
  // others starts at 0, before all of their stores.
  for (std::size_t t = 0; t < teams; ++t) vc_[t * teams + t] = 1;
}

std::uint32_t ptx_memory::cell_of(std::uint64_t word) {
  std::uint32_t& i = index_[word];
  if (i != untracked) return i;
  i = static_cast<std::uint32_t>(cells_.size());
  cells_.push_back({});
  entries_.resize(entries_.size() + history);
  clocks_.resize(clocks_.size() + static_cast<std::size_t>(history) * n_, 0);
  seen_.resize(seen_.size() + n_, 0);
  // The value from before the run: the prefill (one team, finished before
  // the teams started) or the initial layout, ordered before every team.
  cell& k = cells_[i];
  k.head = 0;
  k.count = 1;
  k.next_mo = 1;
  entry& e = slot(i, 0);
  e = {};
  e.value = base_[word];
  e.mo = 0;
  e.writer = no_writer;
  return i;
}

void ptx_memory::track(std::uint64_t word) {
  if (word < index_.size()) (void)cell_of(word);
}

std::uint32_t ptx_memory::floor_age(std::uint32_t c, team_id t) {
  const cell& k = cells_[c];
  const std::uint32_t mine = seen(c, t);
  for (std::uint32_t age = 0; age < k.count; ++age) {
    const entry& e = slot(c, (k.head + history - age) % history);
    // The newest store that the team has read or written here, or that
    // happens before this load, hides every older one (coherence and
    // happens-before); stores evicted from the history are all older than
    // every kept one, so when none qualifies the oldest kept is the floor.
    if (e.mo + 1 <= mine || happens_before(e, t)) return age;
  }
  return k.count - 1;
}

std::uint32_t ptx_memory::push(std::uint32_t c, team_id writer, std::uint64_t value) {
  cell& k = cells_[c];
  const std::uint32_t s = (k.head + 1) % history;
  k.head = s;
  if (k.count < history) ++k.count;
  entry& e = slot(c, s);
  e.value = value;
  e.mo = k.next_mo++;
  e.writer = writer;
  e.epoch = writer == no_writer ? 0 : team_clock(writer)[writer];
  e.has_clock = false;
  if (writer != no_writer) seen(c, writer) = e.mo + 1;
  return s;
}

void ptx_memory::join_into(std::uint32_t* into, const std::uint32_t* from) {
  for (std::size_t u = 0; u < n_; ++u) into[u] = std::max(into[u], from[u]);
}

void ptx_memory::acquire_from(team_id t, std::uint32_t c, std::uint32_t s) {
  join_into(team_clock(t), slot_clock(c, s));
}

void ptx_memory::publish(team_id t, std::uint32_t c, std::uint32_t s) {
  entry& e = slot(c, s);
  std::uint32_t* into = slot_clock(c, s);
  const std::uint32_t* mine = team_clock(t);
  if (e.has_clock) join_into(into, mine);  // an RMW that read a published store: both
  else std::copy(mine, mine + n_, into);
  e.has_clock = true;
}

void ptx_memory::store(team_id t, std::uint64_t word, std::uint64_t value, mem_order o) {
  if (word >= index_.size()) return;
  const std::uint32_t c = cell_of(word);
  const std::uint32_t s = push(c, t, value);
  if (o == mem_order::release || o == mem_order::acq_rel) {
    publish(t, c, s);
    after_release(t);
  } else if (fenced_[t]) {
    // A relaxed store after a fence publishes what the fence did.
    entry& e = slot(c, s);
    std::copy(&fence_clock_[t * n_], &fence_clock_[t * n_] + n_, slot_clock(c, s));
    e.has_clock = true;
  }
}

void ptx_memory::rmw(team_id t, std::uint64_t word, std::uint64_t found, bool wrote, std::uint64_t value, mem_order o) {
  if (word >= index_.size()) return;
  const std::uint32_t c = cell_of(word);
  cell& k = cells_[c];
  if (slot(c, k.head).value != found) push(c, no_writer, found);  // written outside the teams
  const std::uint32_t read = k.head;
  std::uint32_t& mine = seen(c, t);
  mine = std::max(mine, slot(c, read).mo + 1);
  const bool acquire = o == mem_order::acquire || o == mem_order::acq_rel || !wrote;  // a failed CAS is an acquire read
  const bool release = wrote && (o == mem_order::release || o == mem_order::acq_rel);
  // The clock the read store carries: joined now (acquire) or at the next
  // fence (relaxed), and passed on by the RMW's own store (observation
  // order through RMW chains).
  std::vector<std::uint32_t> carried;
  if (slot(c, read).has_clock) {
    const std::uint32_t* from = slot_clock(c, read);
    if (acquire) join_into(team_clock(t), from);
    else join_into(&pending_[t * n_], from);
    if (wrote) carried.assign(from, from + n_);
  }
  if (!wrote) return;
  const std::uint32_t s = push(c, t, value);
  if (!carried.empty()) {
    std::copy(carried.begin(), carried.end(), slot_clock(c, s));
    slot(c, s).has_clock = true;
  }
  if (release) {
    publish(t, c, s);
    after_release(t);
  } else if (fenced_[t]) {
    std::uint32_t* into = slot_clock(c, s);
    if (slot(c, s).has_clock) join_into(into, &fence_clock_[t * n_]);
    else std::copy(&fence_clock_[t * n_], &fence_clock_[t * n_] + n_, into);
    slot(c, s).has_clock = true;
  }
}

void ptx_memory::stamp(team_id t) {
  // Every earlier stamp is in this RMW's release sequence (RMWs on one word
  // read the latest): acquire all of them, then publish this team's clock.
  std::uint32_t* mine = team_clock(t);
  join_into(mine, stamp_clock_.data());
  join_into(stamp_clock_.data(), mine);
  after_release(t);
}

void ptx_memory::fence(team_id t) {
  std::uint32_t* mine = team_clock(t);
  // Acquire half: what earlier relaxed loads read now happens before.
  join_into(mine, &pending_[t * n_]);
  // fence.sc order: every fence.sc that ran before this one synchronises with it.
  join_into(mine, sc_clock_.data());
  join_into(sc_clock_.data(), mine);
  // Release half: later relaxed stores publish this clock.
  std::copy(mine, mine + n_, &fence_clock_[t * n_]);
  fenced_[t] = 1;
  after_release(t);
}

}  // namespace gfsl::sched
