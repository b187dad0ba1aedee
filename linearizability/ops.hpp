// What the linearizability checkers read: one operation on one key, with its
// interval and its answer, and the verdicts they give.
//
// A history of the map is checked key by key (P-compositionality: a map is the
// product of independent one-key objects, and linearizability is local, Herlihy
// and Wing 1990; Horn and Kroening, FORTE 2015). Each key is a one-bit object
// carrying a value: absent, or present with a value.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "core/types.hpp"
#include "model/history.hpp"

namespace gfsl::lin {

// The return stamp of an operation that never returned: its interval has no end.
inline constexpr std::uint64_t never_returned = model::no_stamp;

// One operation as a per-key checker sees it. Operations of one key are kept
// sorted by call stamp.
struct key_op {
  std::uint64_t call = 0;
  // Completed: the return stamp. Optional: the last stamp at which it may have
  // taken effect (never_returned: no bound).
  std::uint64_t ret = never_returned;
  std::uint32_t index = 0;   // position in the checked history, for reports
  value_type value = 0;      // insert: its argument; contains and delete: the value returned
  op_kind kind = op_kind::contains;
  bool ok = false;           // inserted / deleted / found
  // Pending, or ended in an error (model/history.hpp): it may or may not have
  // taken effect, and its answer says nothing.
  bool optional = false;
  // False for a delete whose removed value was not recorded: any value passes.
  bool value_known = true;
};

inline key_op to_key_op(const model::op_record& r, std::uint32_t index, bool value_known = true) {
  key_op o;
  o.call = r.call;
  o.ret = r.ret;
  o.index = index;
  o.kind = r.op.kind;
  o.ok = r.ok;
  o.value = r.op.kind == op_kind::insert ? r.op.value : r.value;
  o.optional = r.pending();
  o.value_known = value_known;
  return o;
}

// What an operation does to its key's state, as the per-key checkers see it.
namespace op_classes {
enum op_class : std::uint8_t {
  read_absent,       // contains -> false, delete -> false
  read_present,      // insert -> false: present with any value
  read_value,        // contains -> true, v
  write_insert,      // insert(v) -> true
  write_delete,      // delete -> true, v
  write_delete_any,  // delete -> true, value not recorded
  opt_insert,        // pending insert(v): inserts v if absent, or does nothing
  opt_delete,        // pending delete: removes whatever is there, or does nothing
};
}  // namespace op_classes
using op_classes::op_class;

// The class of `o`; false for an optional contains, which changes nothing and
// whose answer says nothing: the checkers leave it out.
inline bool classify(const key_op& o, op_class& c) {
  using namespace op_classes;
  if (o.optional) {
    if (o.kind == op_kind::contains) return false;
    c = o.kind == op_kind::insert ? opt_insert : opt_delete;
    return true;
  }
  switch (o.kind) {
    case op_kind::insert: c = o.ok ? write_insert : read_present; break;
    case op_kind::remove: c = o.ok ? (o.value_known ? write_delete : write_delete_any) : read_absent; break;
    default: c = o.ok ? read_value : read_absent; break;
  }
  return true;
}

enum class verdict : std::uint8_t { linearizable, not_linearizable, unknown };

inline const char* verdict_name(verdict v) {
  switch (v) {
    case verdict::linearizable: return "linearizable";
    case verdict::not_linearizable: return "not linearizable";
    case verdict::unknown: return "unknown";
  }
  return "?";
}

// When a search must give up: a point in time, and a flag another thread may
// raise. Searches look at it every few thousand steps and answer `unknown`.
struct deadline {
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* cancel = nullptr;

  // 0 (or anything beyond a century, which the clock cannot add): no limit.
  static deadline after_seconds(double s) {
    deadline d;
    if (s > 0 && s < 3.0e9) {
      d.at = std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
    }
    return d;
  }
  bool unlimited() const { return at == std::chrono::steady_clock::time_point::max() && cancel == nullptr; }
  bool passed() const {
    if (cancel && cancel->load(std::memory_order_relaxed)) return true;
    return at != std::chrono::steady_clock::time_point::max() && std::chrono::steady_clock::now() >= at;
  }
};

// "insert(17, 5) -> true", "contains(17) -> true, 5", "delete(17) -> pending".
inline std::string describe(key_type key, const key_op& o) {
  std::string s = std::string(model::op_name(o.kind)) + "(" + std::to_string(key);
  if (o.kind == op_kind::insert) s += ", " + std::to_string(o.value);
  s += ") -> ";
  if (o.optional) return s + (o.ret == never_returned ? "pending" : "error (may have taken effect)");
  s += o.ok ? "true" : "false";
  if (o.ok && o.kind != op_kind::insert) s += o.value_known ? ", " + std::to_string(o.value) : ", value not recorded";
  return s;
}

}  // namespace gfsl::lin
