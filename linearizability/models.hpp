// The sequential specifications `gfsl check --model` names, for histories of
// structures other than GFSL's map (traces/FORMAT.md, "Models"):
//
//   set         GFSL's map under its historical name: insert-if-absent,
//               delete, contains (the default; what gfsl run records)
//   map         the same object with a hash map's names: insert (if absent),
//               erase, find with value
//   upsert-map  map, plus upsert (insert-or-assign)
//   multiset    keys counted: insert always adds one, erase removes one
//
// Every one is a product of independent one-key objects, so a history is
// split by key and each key checked alone (linearizability is local). set and
// map go through the segmented per-key checker of checker.hpp, and so do the
// upsert-map keys whose upserts all inserted (they are map keys); the other
// upsert-map keys and multiset keys through the generic search of
// model_search.hpp, with the one-key models below. All are scheduled by the
// set checker's decide_keys under the same bounds (--seconds, --key-seconds,
// --max-memory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "linearizability/checker.hpp"
#include "linearizability/model.hpp"
#include "linearizability/ops.hpp"
#include "model/history.hpp"
#include "traces/trace.hpp"

namespace gfsl::lin {

enum class model_kind : std::uint8_t { set, map, upsert_map, multiset };

const char* model_name(model_kind m);
// Takes "set", "map", "upsert-map" and "multiset".
bool parse_model(const std::string& name, model_kind& out);
// "set, map, upsert-map, multiset"
std::string model_names();
// The operations its JSON lines may name, and how each is stored.
traces::operation_table operation_table_of(model_kind m);
// Whether the segmented per-key checker decides it (the answers of its
// operations are those of GFSL's map).
inline bool fast_checker_decides(model_kind m) { return m == model_kind::set || m == model_kind::map; }

// The models' own operation codes (traces::operation_name::code).
namespace model_ops {
enum code : std::uint8_t { insert = 0, erase = 1, find = 2, upsert = 3, count = 4 };
}

// One operation of one key for the generic models: the key is implied.
struct key_input {
  std::uint8_t code = model_ops::find;
  value_type value = 0;  // insert, upsert: the argument
  bool operator==(const key_input&) const = default;
};
struct key_output {
  bool ok = false;
  bool ok_known = true;  // false: "ok" was not recorded (upsert's "ok":null)
  value_type value = 0;  // erase, find: the value answered; count: the count
  bool value_known = true;
  bool operator==(const key_output&) const = default;
};

// One key of a map with insert-or-assign: absent, or present with a value.
// upsert(v) sets v whatever was there and answers true when the key was
// absent (it inserted), false when it replaced a value.
struct upsert_key_model {
  struct state {
    bool present = false;
    value_type value = 0;
  };
  using input = key_input;
  using output = key_output;
  static state init() { return {}; }
  static std::optional<state> step(const state& s, const input& in, const output* out);
  static bool equal(const state& a, const state& b) { return a.present == b.present && a.value == b.value; }
  // find, and an insert or erase that answered false: wherever they hold,
  // the state stays as it was.
  static bool read_only(const input& in, const output& out);
  // The value a find or erase answered (it holds only where the key has
  // it), the value an insert or upsert may write, the value a state holds.
  static std::optional<value_type> value_needed(const input& in, const output& out);
  static std::optional<value_type> value_written(const input& in);
  static std::optional<value_type> value_of(const state& s) { return s.present ? std::optional<value_type>(s.value) : std::nullopt; }
  static std::string describe_operation(const input& in, const output* out);
  static std::string describe_state(const state& s);
};

// One key of a multiset: how many times it is in. insert always succeeds;
// erase removes one occurrence (false when none); find answers whether one is
// in; count answers how many (ok true). Values are not part of the object.
struct multiset_key_model {
  using state = std::uint64_t;
  using input = key_input;
  using output = key_output;
  static state init() { return 0; }
  static std::optional<state> step(const state& s, const input& in, const output* out);
  static bool equal(const state& a, const state& b) { return a == b; }
  // find, count, and an erase that answered false.
  static bool read_only(const input& in, const output& out);
  static std::string describe_operation(const input& in, const output* out);
  static std::string describe_state(const state& s) { return "count " + std::to_string(s); }
};

static_assert(sequential_model<upsert_key_model>);
static_assert(sequential_model<multiset_key_model>);

// A whole history through the generic search, key by key. The bounds are
// the set checker's (check_options): the check's, each key's own, memory.
struct model_check_options {
  unsigned threads = 0;        // 0: every core
  double timeout_seconds = 0;  // 0: none
  double key_seconds = 10;     // 0: none
  std::size_t max_memory_bytes = 0;  // 0: none
};

struct model_check_result {
  verdict v = verdict::linearizable;
  std::uint64_t operations = 0;
  std::uint64_t optional_operations = 0;
  std::uint64_t keys = 0;
  std::uint64_t violating_keys = 0;
  std::uint64_t undecided_keys = 0;
  std::uint64_t memory_bound_keys = 0;  // of the undecided: stopped by max_memory_bytes
  std::vector<key_summary> violating;  // the first 100, ascending
  std::vector<key_summary> undecided;  // the first 100, ascending, each with what stopped it
  // The smallest violating key and its operations (history indices, by call
  // stamp), or, when none violates, nothing.
  std::optional<key_type> failing_key;
  std::vector<std::uint32_t> failing_ops;
  unsigned threads = 1;
  double seconds = 0;
};

// Throws std::invalid_argument when the history cannot be checked
// (validate_history), or when op_codes is neither empty nor one per record;
// std::bad_alloc when memory ran out in any thread (after every thread
// has stopped).
model_check_result check_history_model(model_kind m, const std::vector<model::op_record>& history,
                                       const std::vector<std::uint8_t>& op_codes, const model_check_options& options = {},
                                       const std::vector<std::uint32_t>& unrecorded_values = {});

// "upsert(17, 5) -> inserted", "erase(17) -> true, 5", "find(17) -> pending".
std::string describe_model_record(model_kind m, const model::op_record& r, std::uint8_t code, bool value_known);

// The reports of gfsl check for the generic models: the verdict and the
// failing key's operations in call order, as text, and as one JSON object.
std::string model_text_report(model_kind m, const std::vector<model::op_record>& history, const std::vector<std::uint8_t>& op_codes,
                              const model_check_result& r, const std::string& file, const std::string& form,
                              const std::vector<std::uint32_t>& unrecorded_values = {});
std::string model_json_report(model_kind m, const std::vector<model::op_record>& history, const std::vector<std::uint8_t>& op_codes,
                              const model_check_result& r, const std::string& file,
                              const std::vector<std::uint32_t>& unrecorded_values = {});

}  // namespace gfsl::lin
