#include "temporal.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "../core/gfsl/layout.hpp"

namespace gfsl::invariants {

const std::vector<std::string>& temporal_invariant_names() {
  static const std::vector<std::string> names{"max-monotonic", "zombie-frozen", "final-never-zombie",
                                              "zombie-next-receiver", "lock-discipline"};
  return names;
}

namespace {

struct chunk_state {
  key_type max = key_empty;
  chunk_index next = no_chunk;
  std::uint64_t lock = lock_free_word;
  bool zombie = false;
  std::uint64_t locked_at = 0;   // seq of the lock acquisition (or allocation) by the current holder
  bool fresh = false;            // allocated, LOCK not yet initialised
  team_id allocated_by = 0;
};

}  // namespace

temporal_report check_events(const snapshot& before, const std::vector<structural_event>& events,
                             std::size_t max_violations) {
  temporal_report r;
  r.checked = temporal_invariant_names();
  r.events = events.size();
  const int n = before.chunk;
  const int next_lane = n - 2, lock_lane = n - 1;
  auto flag = [&](const char* name, std::vector<chunk_index> chunks, const structural_event& e, std::string detail) {
    if (r.violations.size() >= max_violations) return;
    violation v;
    v.invariant = name;
    v.chunks = std::move(chunks);
    v.when = e.stamp;
    v.detail = std::move(detail);
    v.event = e.seq;
    v.team = e.team;
    // A data entry's write names the key it wrote (EMPTY entries name none).
    if (e.kind != event_kind::alloc && e.lane < next_lane && entry_key(e.value) != key_empty) v.key = entry_key(e.value);
    r.violations.push_back(std::move(v));
  };
  std::map<chunk_index, chunk_state> chunks;
  auto state_of = [&](chunk_index c) -> chunk_state& {
    auto [it, fresh] = chunks.try_emplace(c);
    if (fresh) {
      const std::size_t base = header_offsets::pool + static_cast<std::size_t>(c) * n;
      if (base + n <= before.words.size()) {
        it->second.max = entry_key(before.words[base + next_lane]);
        it->second.next = entry_value(before.words[base + next_lane]);
        it->second.lock = before.words[base + lock_lane];
        it->second.zombie = lock_is_zombie(it->second.lock);
      }
    }
    return it->second;
  };
  // Last data write by (team, chunk): the receiver test of a merge.
  std::map<std::pair<team_id, chunk_index>, std::uint64_t> last_data_write;

  for (const structural_event& e : events) {
    chunk_state& c = state_of(e.chunk);
    const std::string at = "chunk " + std::to_string(e.chunk);
    if (e.kind == event_kind::alloc) {
      c = chunk_state{};
      c.fresh = true;
      c.allocated_by = e.team;
      continue;
    }
    if (e.lane == lock_lane) {
      const std::uint64_t w = e.value;
      if (e.kind == event_kind::cas) {
        // A successful lock CAS: the chunk must have been free (a CAS from 0).
        if (c.zombie) {
          flag("lock-discipline", {e.chunk}, e, at + " locked after its zombie mark");
        } else if (lock_is_held(c.lock)) {
          flag("lock-discipline", {e.chunk}, e, at + " locked while team " + std::to_string(lock_owner(c.lock)) + " held it");
        }
        c.lock = w;
        c.locked_at = e.seq;
        continue;
      }
      if (c.fresh && lock_is_held(w) && lock_owner(w) == e.team && e.team == c.allocated_by) {
        c.lock = w;
        c.locked_at = e.seq;
        c.fresh = false;
        continue;
      }
      const bool holder = lock_is_held(c.lock) && lock_owner(c.lock) == e.team;
      if (lock_is_zombie(w)) {
        if (!holder) flag("lock-discipline", {e.chunk}, e, at + " marked a zombie by a team that does not hold its lock");
        if (c.zombie) flag("zombie-frozen", {e.chunk}, e, at + " marked a zombie twice");
        if (c.max == key_empty) flag("final-never-zombie", {e.chunk}, e, at + ", a final chunk (infinite max), marked a zombie");
        const auto it = last_data_write.find({e.team, c.next});
        if (c.next == no_chunk || it == last_data_write.end() || it->second < c.locked_at) {
          flag("zombie-next-receiver", {e.chunk, c.next}, e,
               at + " marked a zombie while its NEXT (" + (c.next == no_chunk ? std::string("none") : std::to_string(c.next)) +
                   ") received no keys from the marking team");
        }
        c.zombie = true;
        c.lock = w;
      } else if (holder && lock_is_held(w) && lock_owner(w) == e.team) {
        // The robust variant's write version (core/gfsl/types.hpp): the holder
        // bumps it by one around each burst of writes, keeping the lock.
        if (lock_version(w) != ((lock_version(c.lock) + 1) & (lock_version_mask >> lock_version_shift))) {
          flag("lock-discipline", {e.chunk}, e, at + " write version moved from " + std::to_string(lock_version(c.lock)) + " to " +
                                                    std::to_string(lock_version(w)) + " (one step at a time)");
        }
        c.lock = w;
      } else if (lock_is_free(w)) {
        if (!holder) {
          flag("lock-discipline", {e.chunk}, e, at + " unlocked by a team that does not hold it" +
                                                    (c.zombie ? std::string(" (a zombie)") : std::string()));
        }
        c.lock = w;
      } else {
        flag("lock-discipline", {e.chunk}, e, at + " LOCK entry stored directly with an owner outside allocation");
        c.lock = w;
      }
      continue;
    }
    // A data or NEXT entry.
    if (c.zombie) flag("zombie-frozen", {e.chunk}, e, at + ": entry " + std::to_string(e.lane) + " written after its zombie mark");
    const bool holder = lock_is_held(c.lock) && lock_owner(c.lock) == e.team;
    if (!holder) {
      flag("lock-discipline", {e.chunk}, e, at + ": entry " + std::to_string(e.lane) + " written by a team that does not hold its lock" +
                                                (lock_is_held(c.lock) ? " (held by team " + std::to_string(lock_owner(c.lock)) + ")"
                                                                      : std::string(" (free)")));
    }
    if (e.lane == next_lane) {
      const key_type max = entry_key(e.value);
      if (max > c.max) {
        flag("max-monotonic", {e.chunk}, e, at + ": max field raised from " + std::to_string(c.max) + " to " + std::to_string(max));
      }
      c.max = max;
      c.next = entry_value(e.value);
    } else {
      last_data_write[{e.team, e.chunk}] = e.seq;
    }
  }
  return r;
}

void name_operations_in_flight(std::vector<violation>& violations, const std::vector<model::op_record>& history,
                               std::size_t max_per_violation) {
  for (violation& v : violations) {
    for (const model::op_record& r : history) {
      if (v.in_flight.size() >= max_per_violation) break;
      const bool started = r.call <= v.when;
      const bool not_done = r.ret == model::no_stamp || r.ret >= v.when;
      if (started && not_done) {
        v.in_flight.push_back("team " + std::to_string(r.team) + " " + model::describe(r.op) +
                              (r.ret == model::no_stamp ? " (pending)" : ""));
      }
    }
  }
}

}  // namespace gfsl::invariants
