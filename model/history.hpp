// A history: what each operation of a run was asked, what it answered, and
// when it was called and returned on the run's clock. The unit every checker
// reads and every trace file stores.
//
// Stamps are sound: if operation A returned before operation B was called, then
// A.ret < B.call. A precedes B exactly when A.ret < B.call; otherwise the two
// are concurrent. A record without a return stamp is pending: it was invoked
// and never returned, and may or may not have taken effect.
#pragma once

#include <cstdint>
#include <vector>

#include "../core/types.hpp"
#include "sequential_map.hpp"

namespace gfsl::model {

inline constexpr std::uint64_t no_stamp = ~0ull;

// Where a run's stamps come from.
enum class clock_kind : std::uint8_t {
  none = 0,            // no stamps: records only (order unknown)
  global_counter = 1,  // one counter read before the first and after the last shared access
  device_counter = 2,  // a device-wide counter with fences (GPU)
  globaltimer = 3,     // the GPU's %globaltimer
};

struct op_record {
  team_id team = 0;
  operation op;              // kind, key, and insert's argument
  status st = status::ok;    // not ok: the operation ended in an error and counts as pending
  bool ok = false;           // inserted / deleted / found
  value_type value = 0;      // contains: the value found; delete: the value removed
  std::uint64_t call = 0;
  std::uint64_t ret = no_stamp;

  GFSL_FN bool pending() const { return ret == no_stamp || st != status::ok; }
};

// Stamps of prefill operation i: the prefill runs alone, before every other
// operation, so its operations take the first stamps, in order.
GFSL_FN constexpr std::uint64_t prefill_call_stamp(std::uint64_t i) { return 2 * i; }
GFSL_FN constexpr std::uint64_t first_free_stamp(std::uint64_t prefill_count) { return 2 * prefill_count; }

// The whole history of a run: the prefill as completed inserts (by team 0),
// then the concurrent phase's records.
inline std::vector<op_record> full_history(const std::vector<operation>& prefill, const std::vector<op_record>& records) {
  std::vector<op_record> out;
  out.reserve(prefill.size() + records.size());
  for (std::size_t i = 0; i < prefill.size(); ++i) {
    op_record r;
    r.op = prefill[i];
    r.ok = true;
    r.call = prefill_call_stamp(i);
    r.ret = r.call + 1;
    out.push_back(r);
  }
  out.insert(out.end(), records.begin(), records.end());
  return out;
}

}  // namespace gfsl::model
