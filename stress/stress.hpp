// gfsl stress: checker-free oracles. A history needs a checker; a key whose
// every answer is known in advance needs none, so each answer is judged where
// it is given, at the speed of the structure itself. This header is shared by
// every backend (host compiler and nvcc): the workload shapes, the team roles,
// one operation of a team with its verdict, and the team wrapper that keeps
// the last chunk a team read, so that a failing read comes with what it saw.
#pragma once

#include <cstdint>

#include "core/gfsl/layout.hpp"
#include "core/platform.hpp"
#include "core/team.hpp"
#include "core/types.hpp"

namespace gfsl::stress {

// The oracles that judge operations as they return (the third, `structure`,
// judges each structure at the end of its lifetime: core of every shape).
enum class shape : std::uint8_t {
  // Stable keys (multiples of `stable_every`) are inserted before the
  // concurrent phase and never deleted; writers churn the other keys of the
  // same chunks; readers call contains on stable keys. Violation: false, or a
  // value other than the one inserted.
  stable_contains = 0,
  // Key k belongs to team (k - 1) % teams, so every chunk interleaves many
  // teams' keys; a team inserts, deletes and looks up only its own keys and
  // knows every answer. Violation: any answer that differs.
  owned_keys = 1,
};

GFSL_FN constexpr const char* shape_name(shape s) {
  return s == shape::stable_contains ? "stable-contains" : "owned-keys";
}

// The most keys one team owns (its present keys are one 64-bit mask).
inline constexpr std::uint32_t max_owned_per_team = 64;

// Everything a team needs to know about the workload: plain data, passed to
// kernels by value.
struct params {
  shape sh = shape::stable_contains;
  std::uint32_t range = 40;         // keys 1..range
  std::uint32_t stable_every = 2;   // stable-contains: the stable keys are its multiples
  // stable-contains, when > 0: writers churn keys 1..low_churn and every key
  // above is stable (stable_every unused). Every insert or delete of a churn
  // key then shifts every stable key of its chunk by one entry, so the stable
  // key at the boundary of the chunk's two 128-byte lines crosses it at
  // every write: the move a torn read misses (docs/FINDINGS.md).
  std::uint32_t low_churn = 0;
  std::uint32_t writers_num = 1;    // team t writes iff t % writers_den < writers_num
  std::uint32_t writers_den = 32;
  std::uint32_t teams = 1;
  // owned-keys: keys range+1 .. range+churn belong to no team; writers spend
  // half of their operations inserting and deleting them, unjudged. Two
  // deletes of one key racing on one pair is what erases another key's
  // insert in SlabHash's published delete (docs/FINDINGS.md, "SlabHash"); owned keys alone never
  // have two deleters. 0 (GFSL's default): no shared keys.
  std::uint32_t churn = 0;
};

GFSL_FN constexpr bool is_writer(const params& p, team_id t) { return t % p.writers_den < p.writers_num; }
GFSL_FN constexpr bool is_stable(const params& p, key_type k) {
  return p.low_churn ? k > p.low_churn : k % p.stable_every == 0;
}
GFSL_FN constexpr std::uint32_t stable_count(const params& p) {
  return p.low_churn ? (p.range > p.low_churn ? p.range - p.low_churn : 0) : p.range / p.stable_every;
}
GFSL_FN constexpr std::uint32_t churn_count(const params& p) { return p.range - stable_count(p); }
// The i-th stable key and the i-th other key, i from 0.
GFSL_FN constexpr key_type stable_key(const params& p, std::uint32_t i) {
  return p.low_churn ? p.low_churn + 1 + i : (i + 1) * p.stable_every;
}
GFSL_FN constexpr key_type churn_key(const params& p, std::uint32_t i) {
  return p.low_churn ? i + 1 : i + i / (p.stable_every - 1) + 1;
}
// The value stored with k: a function of k, so that a reader knows it.
GFSL_FN constexpr value_type value_of(key_type k) { return (k * 2654435761u) ^ 0x5BD1E995u; }
// owned-keys: team t's j-th key, and how many it owns.
GFSL_FN constexpr key_type owned_key(const params& p, team_id t, std::uint32_t j) { return t + 1 + j * p.teams; }
GFSL_FN constexpr std::uint32_t owned_count(const params& p, team_id t) {
  if (t + 1 > p.range) return 0;
  const std::uint32_t n = (p.range - (t + 1)) / p.teams + 1;
  return n < max_owned_per_team ? n : max_owned_per_team;
}
// owned-keys: whether key j of team t is present at the start of a structure
// (half of them, chosen by the structure's seed).
GFSL_FN constexpr bool owned_initially(std::uint64_t structure_seed, key_type k) {
  std::uint64_t z = structure_seed ^ (0x9E3779B97F4A7C15ull * k);
  z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
  return ((z ^ (z >> 29)) & 1) != 0;
}

// Operation counters of a team, a structure or a whole configuration.
struct counters {
  std::uint64_t reads = 0;       // answers judged by an oracle (stable contains, owned ops)
  std::uint64_t inserts = 0;
  std::uint64_t removes = 0;
  std::uint64_t contains = 0;
  std::uint64_t violations = 0;
  std::uint64_t stopped = 0;     // operations that ended on an error of the structure (pool), not judged
  // Of the violations: answers false where the oracle knew true (a key
  // missing: a lost insert) and true where it knew false (a key present
  // twice, or inserted over itself).
  std::uint64_t missing = 0;
  std::uint64_t extra = 0;
  GFSL_FN std::uint64_t ops() const { return inserts + removes + contains; }
  GFSL_FN void add(const counters& o) {
    reads += o.reads;
    inserts += o.inserts;
    removes += o.removes;
    contains += o.contains;
    violations += o.violations;
    stopped += o.stopped;
    missing += o.missing;
    extra += o.extra;
  }
};

// A team's state that outlives one slice of the run (device) or one call.
struct team_state {
  std::uint64_t rng = 0;
  std::uint64_t owned = 0;  // owned-keys: bit j set while the team's key j is present
  std::uint32_t stopped = 0;  // the team saw an error of the structure: it makes no more operations
  std::uint32_t pad = 0;
};

GFSL_FN team_state initial_team_state(const params& p, team_id t, std::uint64_t structure_seed) {
  team_state s;
  s.rng = team_seed(structure_seed ^ 0x5EED5EEDull, t);
  if (p.sh == shape::owned_keys) {
    const std::uint32_t n = owned_count(p, t);
    for (std::uint32_t j = 0; j < n; ++j) {
      if (owned_initially(structure_seed, owned_key(p, t, j))) s.owned |= 1ull << j;
    }
  }
  return s;
}

// Whether key k is in the structure before the concurrent phase.
GFSL_FN bool initially_present(const params& p, std::uint64_t structure_seed, key_type k) {
  if (p.sh == shape::stable_contains) return is_stable(p, k);
  return k <= p.range && k - 1 < p.teams * max_owned_per_team && owned_initially(structure_seed, k);
}

// One operation and its verdict.
struct step {
  op_kind kind = op_kind::contains;
  key_type key = 0;
  op_result r{};
  bool want_ok = false;    // the answer the oracle expects (when judged)
  bool judged = false;     // an oracle knows the answer
  bool violation = false;
};

// What every step's answer adds to the team's counters; an operation that
// did not end ok is neither judged nor a violation, and stops the team.
GFSL_FN void tally(step& s, team_state& st, counters& c) {
  switch (s.kind) {
    case op_kind::insert: ++c.inserts; break;
    case op_kind::remove: ++c.removes; break;
    case op_kind::contains: ++c.contains; break;
  }
  if (s.r.st != status::ok) {
    s.judged = false;
    s.violation = false;
    ++c.stopped;
    st.stopped = 1;
  } else if (s.judged) {
    ++c.reads;
  }
  if (s.violation) {
    ++c.violations;
    if (s.want_ok) ++c.missing;
    else ++c.extra;
  }
}

// One operation of team t under the shape's oracle. The algorithm's answer
// is compared with the one the oracle knows; nothing else is recorded.
template <class Algo>
GFSL_FN step stress_step(Algo& a, const params& p, team_id t, team_state& st, counters& c) {
  team_rng rng{st.rng};
  const std::uint64_t r = rng.next();
  st.rng = rng.state;
  step s;
  const std::uint32_t pick = static_cast<std::uint32_t>(r >> 32);
  const bool writer = is_writer(p, t);
  if (p.sh == shape::stable_contains) {
    if (writer) {
      s.key = churn_key(p, pick % churn_count(p));
      s.kind = (r & 1) ? op_kind::insert : op_kind::remove;
      s.r = s.kind == op_kind::insert ? a.insert(s.key, value_of(s.key)) : a.remove(s.key);
    } else {
      s.key = stable_key(p, pick % stable_count(p));
      s.kind = op_kind::contains;
      s.r = a.contains(s.key);
      s.judged = true;
      s.want_ok = true;
      s.violation = s.r.st == status::ok && (!s.r.ok || s.r.value != value_of(s.key));
    }
  } else if (p.churn != 0 && writer && ((r >> 16) & 1) != 0) {
    s.key = p.range + 1 + pick % p.churn;
    s.kind = (r & 1) ? op_kind::insert : op_kind::remove;
    s.r = s.kind == op_kind::insert ? a.insert(s.key, value_of(s.key)) : a.remove(s.key);
  } else {
    const std::uint32_t n = owned_count(p, t);
    const std::uint32_t j = pick % n;
    s.key = owned_key(p, t, j);
    const bool present = ((st.owned >> j) & 1) != 0;
    const std::uint32_t which = writer ? static_cast<std::uint32_t>(r & 0xFFFF) % 3 : 2;
    s.kind = static_cast<op_kind>(which);
    s.judged = true;
    s.want_ok = s.kind == op_kind::insert ? !present : present;
    if (s.kind == op_kind::insert) {
      s.r = a.insert(s.key, value_of(s.key));
      s.violation = s.r.st == status::ok && s.r.ok == present;
      if (s.r.st == status::ok) st.owned |= 1ull << j;
    } else if (s.kind == op_kind::remove) {
      s.r = a.remove(s.key);
      s.violation = s.r.st == status::ok && (s.r.ok != present || (present && s.r.value != value_of(s.key)));
      if (s.r.st == status::ok) st.owned &= ~(1ull << j);
    } else {
      s.r = a.contains(s.key);
      s.violation = s.r.st == status::ok && (s.r.ok != present || (present && s.r.value != value_of(s.key)));
    }
  }
  tally(s, st, c);
  return s;
}

// The kind of operation j of every team of a structure whose operations come
// in batches of one kind (Li and Deng's skiplist: operation j of every team
// is one batch): a third each, drawn from the structure's seed.
GFSL_FN op_kind batch_kind(std::uint64_t structure_seed, std::uint64_t j) {
  std::uint64_t z = structure_seed ^ 0xBA7C4B1Dull ^ (0x9E3779B97F4A7C15ull * (j + 1));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<op_kind>((z ^ (z >> 31)) % 3);
}

// One operation of team t of kind `kind`, the batch's, under the shape's
// oracle. owned-keys: every team writes (options.cpp refuses readers), on one
// of its own keys, or on a shared key half of the time when there are
// some (unjudged). stable-contains: writers churn their keys unjudged in
// every kind; a reader looks a stable key up (true), inserts one (false: it
// is present) or deletes key range + 1, which no team inserts (false).
template <class Algo>
GFSL_FN step lockstep_step(Algo& a, const params& p, team_id t, team_state& st, counters& c, op_kind kind) {
  team_rng rng{st.rng};
  const std::uint64_t r = rng.next();
  st.rng = rng.state;
  step s;
  s.kind = kind;
  const std::uint32_t pick = static_cast<std::uint32_t>(r >> 32);
  auto call = [&](key_type k) {
    s.key = k;
    return kind == op_kind::insert ? a.insert(k, value_of(k)) : kind == op_kind::remove ? a.remove(k) : a.contains(k);
  };
  if (p.sh == shape::stable_contains) {
    if (is_writer(p, t)) {
      s.r = call(churn_key(p, pick % churn_count(p)));
    } else {
      s.judged = true;
      if (kind == op_kind::contains) {
        s.r = call(stable_key(p, pick % stable_count(p)));
        s.want_ok = true;
        s.violation = s.r.st == status::ok && (!s.r.ok || s.r.value != value_of(s.key));
      } else {
        s.r = call(kind == op_kind::insert ? stable_key(p, pick % stable_count(p)) : p.range + 1);
        s.want_ok = false;
        s.violation = s.r.st == status::ok && s.r.ok;
      }
    }
  } else if (p.churn != 0 && ((r >> 16) & 1) != 0) {
    s.r = call(p.range + 1 + pick % p.churn);
  } else {
    const std::uint32_t j = pick % owned_count(p, t);
    const bool present = ((st.owned >> j) & 1) != 0;
    s.r = call(owned_key(p, t, j));
    s.judged = true;
    s.want_ok = kind == op_kind::insert ? !present : present;
    if (s.r.st == status::ok) {
      if (kind == op_kind::insert) {
        s.violation = s.r.ok == present;
        st.owned |= 1ull << j;
      } else {
        s.violation = s.r.ok != present || (present && s.r.value != value_of(s.key));
        if (kind == op_kind::remove) st.owned &= ~(1ull << j);
      }
    }
  }
  tally(s, st, c);
  return s;
}

// A team that remembers the last chunk it read (index and words, per lane),
// so that a failing read reports what it saw. Everything else is the
// wrapped team's.
//
// On the GPU the memory lives in shared memory, one slot per thread of a
// block of at most Threads threads: a team the algorithm builds for one of
// its calls made apart (algorithm::apart) from the detached values then
// remembers into the same slots, so the rare paths stay apart as in every
// other device kernel. Kept in the team object, the memory had to stay in
// place (calls_apart false): the whole algorithm inlined into the stress
// kernel, held to 32 registers, spilled, and the kernel ran at a third of
// the speed of the same algorithm without it (docs/BENCHMARKS.md, "gfsl
// stress on the GPU"). On the host the memory is the object's.
template <class Team, int Threads = 1024>
class last_read_team : public Team {
 public:
  using lanes = typename Team::lanes;
  using Team::Team;
#if defined(__CUDACC__)
  static constexpr bool calls_apart = Team::calls_apart;
#else
  static constexpr bool calls_apart = false;
#endif

  // Where the chunk pool starts: reads below it (heads, counters) are not chunks.
  GFSL_FN void watch(const std::uint64_t* pool) {
#if defined(__CUDA_ARCH__)
    memory().pool = pool;  // every thread writes the same address
    memory().chunk[threadIdx.x] = no_chunk;
    memory().word[threadIdx.x] = 0;
#else
    pool_ = pool;
#endif
  }

  GFSL_FN lanes load_lanes(const std::uint64_t* p) {
    const lanes v = Team::load_lanes(p);
    remember(p, v);
    return v;
  }
  GFSL_FN lanes load_lanes(const std::uint64_t* p, mem_order o) {
    const lanes v = Team::load_lanes(p, o);
    remember(p, v);
    return v;
  }
  // Rows by their first word, so that every chunk read passes load_lanes.
  using row = const std::uint64_t*;
  GFSL_FN row row_of(const std::uint64_t* p) const { return p; }
  GFSL_FN lanes load_row(row r, std::uint64_t words) { return load_lanes(r + words); }
#if defined(__CUDA_ARCH__)
  GFSL_FN chunk_index last_chunk() const { return memory().chunk[threadIdx.x]; }
  GFSL_FN lanes last_words() const { return lanes{memory().word[threadIdx.x]}; }
#else
  GFSL_FN chunk_index last_chunk() const { return last_chunk_; }
  GFSL_FN lanes last_words() const { return last_; }
#endif

 private:
#if defined(__CUDA_ARCH__)
  struct shared_memory {
    const std::uint64_t* pool;
    chunk_index chunk[Threads];
    std::uint64_t word[Threads];
  };
  __device__ static shared_memory& memory() {
    __shared__ shared_memory m;
    return m;
  }
  __device__ void remember(const std::uint64_t* p, const lanes& v) {
    shared_memory& m = memory();
    if (m.pool != nullptr && p >= m.pool) {
      m.chunk[threadIdx.x] = static_cast<chunk_index>((p - m.pool) / Team::width);
      m.word[threadIdx.x] = v.v;
    }
  }
#else
  GFSL_FN void remember(const std::uint64_t* p, const lanes& v) {
    if (pool_ != nullptr && p >= pool_) {
      last_chunk_ = static_cast<chunk_index>((p - pool_) / Team::width);
      last_ = v;
    }
  }
#endif
  // The host's memory (unused on the device; kept in both compilations so
  // that the type has one layout).
  const std::uint64_t* pool_ = nullptr;
  chunk_index last_chunk_ = no_chunk;
  lanes last_{};
};

// What a violation report holds: who, what, when, and the chunk the failing
// read saw. Plain data (the device writes it into a slot).
struct violation_record {
  std::uint32_t team = 0;
  std::uint32_t key = 0;
  std::uint8_t kind = 0;       // op_kind
  std::uint8_t answer = 0;     // the answer given (found / inserted / deleted)
  std::uint8_t chunk_size = 0; // N
  std::uint8_t expected = 0;   // the answer the oracle expected
  std::uint32_t value = 0;     // the value returned with it
  std::uint32_t chunk = no_chunk;  // the last chunk read
  std::uint32_t structure = 0;     // which structure of the run (0: the first)
  std::uint8_t subject = 0;        // subject_kind: how `chunk` and `words` read (slabhash: a slab)
  std::uint32_t bucket = 0;        // slabhash: the key's bucket
  std::uint64_t time_ns = 0;   // since the run's timed phase began (host: scheduling points)
  std::uint64_t words[32] = {};
};

}  // namespace gfsl::stress
