// Histories that are linearizable by construction, for benchmarks and tests:
// teams run operations back to back, each operation gets an interval, a point
// is drawn inside every interval, and the answers are those of the sequential
// map applied in the order of the points. Nothing here runs GFSL.
#pragma once

#include <cstdint>
#include <vector>

#include "model/history.hpp"

namespace gfsl::lin {

struct synthetic_options {
  std::uint64_t ops = 1000000;      // operations after the prefill, over all teams
  std::uint32_t keys = 1000;        // keys uniform in [1, keys]
  double prefill = 0.5;             // fraction of the keys inserted first, one at a time
  int insert_pct = 10;              // the rest of the mix is contains
  int delete_pct = 10;
  std::uint32_t teams = 64;         // operations in flight at once
  std::uint64_t max_duration = 64;  // an interval lasts 1..max_duration stamps
  std::uint64_t max_gap = 4;        // a team waits 1..max_gap stamps between operations
  std::uint32_t pending = 0;        // this many teams leave their last operation pending
  std::uint64_t seed = 1;
};

// Records team by team (as the threads backend writes them), prefill first.
// A pending operation took effect or not, at random.
std::vector<model::op_record> synthetic_history(const synthetic_options& o);

// Histories built to defeat a per-key search (tests, benchmarks): each key's
// operations come in rounds of `width` operations that are all mutually
// concurrent (calls all before returns), one round after the other; with
// `width` = 0 a key's operations form one round. The answers are those of the
// sequential map applied in a random order of each round: linearizable by
// construction, unless `violation` is set.
struct adversarial_options {
  std::uint64_t ops = 1000000;  // over all keys
  std::uint32_t keys = 1;
  std::uint32_t width = 0;      // operations per round (0: a key's operations are one round)
  std::uint32_t values = 1;     // inserts draw from this many values (0: a fresh value for each)
  int insert_pct = 34;          // the rest of the mix is contains
  int delete_pct = 33;
  int pending_pct = 0;          // never return (took effect or not, at random)
  int error_pct = 0;            // end in an error (pool_exhausted): took effect or not, answer unseen
  // The middle round of the first key is made impossible: one successful
  // delete becomes a successful insert, in a round whose successful inserts
  // already match its deletes, so that it has two more than any order of it
  // allows. No operation of that key is pending or ends in an error up to
  // that round (their effect could otherwise make up the difference).
  bool violation = false;
  std::uint64_t seed = 1;
};

std::vector<model::op_record> adversarial_history(const adversarial_options& o);

// The hard history families, built as a GPU run records them: `in_flight`
// teams on one hot key (key 1), each operation's interval drawn at random
// and the answers those of the sequential map at a point inside each;
// operations that end in an error or never return took effect or not, at
// random. Optionally, one answer flipped in the middle: in a stretch where
// only contains run, the second of two that team 0 runs back to back answers
// otherwise than the first, which no order explains (nothing can change the
// key between them); and a second key holding one operation that no order
// explains (a contains that finds a value nobody inserted).
struct hard_options {
  std::uint64_t ops = 10000;     // on the hot key
  std::uint32_t in_flight = 8;   // teams, each running one operation at a time
  std::uint32_t values = 2;      // inserts draw from 1..values
  int insert_pct = 40;           // the rest of the mix is contains
  int delete_pct = 40;
  int error_pct = 10;            // end in an error (pool_exhausted)
  int pending_pct = 0;           // never return (the team goes on, as another thread would)
  int unrecorded_pct = 0;        // successful deletes whose removed value was not recorded
  bool flip = false;             // one contains in the middle answers otherwise than the one before it
  bool violating_key = false;    // add key 2 with one impossible operation
  bool violating_first = false;  // its record first (else last)
  std::uint64_t max_duration = 16;  // an interval lasts 1..max_duration stamps
  std::uint64_t seed = 1;
};

struct hard_history {
  std::vector<model::op_record> records;
  std::vector<std::uint32_t> unrecorded_values;  // ascending indices: successful deletes without their value
};

hard_history hard_family_history(const hard_options& o);

}  // namespace gfsl::lin
