// Ordered maps with range queries and snapshot handles: the histories of
// `gfsl check --model ordered-map` and `--model ordered-upsert-map`, and
// their JSON-lines form (traces/FORMAT.md, "Ordered maps").
//
//   ordered-map          insert (if absent), erase, find, range(lo, hi),
//                        snapshot, and find / range at a snapshot's handle
//   ordered-upsert-map   the same, plus upsert (insert-or-assign)
//
// A range answers the (key, value) pairs present in [lo, hi), in key order.
// A snapshot answers a handle h; find(k, h) and range(lo, hi, h) answer as of
// the snapshot's linearization point, however much later they run (many
// operations may read at one handle). A history of these is not a product of
// one-key objects (a range reads many keys at once), so it is not split by
// key: linearizability/range_checker.hpp decides it whole.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/types.hpp"
#include "model/history.hpp"

namespace gfsl::lin::ranges {

enum class range_model : std::uint8_t { ordered_map, ordered_upsert_map };

const char* range_model_name(range_model m);
// Takes "ordered-map" and "ordered-upsert-map".
bool parse_range_model(const std::string& name, range_model& out);
inline const char* range_model_names() { return "ordered-map, ordered-upsert-map"; }

inline constexpr std::uint64_t no_handle = ~0ull;

enum class range_op : std::uint8_t { insert, upsert, erase, find, range, snapshot };
const char* range_op_name(range_op o);

struct range_record {
  std::uint64_t call = 0;
  std::uint64_t ret = model::no_stamp;  // no_stamp: never returned
  team_id team = 0;
  range_op op = range_op::find;
  key_type key = 0;       // insert, upsert, erase, find: the key; range: lo
  std::uint64_t hi = 0;   // range: the end of [lo, hi), at most 2^32
  value_type value = 0;   // insert, upsert: the argument; erase, find: the value answered
  bool ok = false;        // inserted (upsert: the key was absent) / erased / found
  bool ok_known = true;   // false: upsert's "ok":null, not recorded
  bool value_known = true;  // false: an erase whose removed value was not recorded
  status st = status::ok;   // not ok: ended in an error, counts as pending
  std::uint64_t handle = no_handle;  // snapshot: the handle returned; find, range: the handle read at
  std::uint32_t pairs_from = 0, pairs_count = 0;  // range: its answer, in range_history::pairs

  bool pending() const { return ret == model::no_stamp || st != status::ok; }
  key_type lo() const { return key; }
};

struct range_history {
  range_model model = range_model::ordered_map;
  // The metadata line as read (written back as it was); empty: none.
  std::string metadata;
  std::vector<range_record> ops;
  std::vector<std::pair<key_type, value_type>> pairs;
  // Record members the reader did not know and passed over (a few names).
  std::vector<std::string> ignored_members;
  // Read from the binary form (traces/FORMAT.md, "Ordered maps in the binary form").
  bool binary = false;

  // Appends a range's answer; returns the record to fill further.
  range_record& add_range(team_id team, key_type lo, std::uint64_t hi, const std::vector<std::pair<key_type, value_type>>& answer,
                          std::uint64_t call, std::uint64_t ret, std::uint64_t handle = no_handle);
};

// "range[10, 20) -> {11:4, 12:7}", "find(5 @h3) -> true, 9", "snapshot -> h3".
std::string describe_range_record(const range_history& h, std::uint32_t i, std::size_t max_pairs = 8);

// Whether the JSON-lines text `first_line` (a metadata line) names one of the
// ordered models ("model":"ordered-map"): such a file holds ranges, which the
// binary form cannot.
bool names_range_model(const std::string& first_line);
// The first line of a file ("" when it cannot be read or is binary).
std::string first_line_of(const std::string& path);

// The ordered model a trace names, in either form (a JSON-lines metadata
// line's "model", a binary header's), or "" when it names none or another.
std::string range_model_named(const std::string& path);
// The same for a binary trace only ("" for JSON lines, standard input, a
// pipe or FIFO (which it leaves unread), or a file that cannot be read).
std::string binary_range_model(const std::string& path);

// Reads either form for model m (traces/FORMAT.md, "Ordered maps"); throws
// traces::trace_error, one line: "FILE: byte N (line L): expected ..." (the
// binary form: "FILE: byte N: expected ..."). "-": standard input.
range_history read_range_trace(const std::string& path, range_model m);
// The binary form from bytes in memory; `name` names the input in errors.
range_history read_range_binary(const std::string& name, const unsigned char* bytes, std::size_t size, range_model m);
// The binary form's bytes; throws traces::trace_error when the metadata line
// holds what a binary header cannot (a null, a name outside a-z, 0-9, _).
std::vector<unsigned char> range_trace_bytes(const range_history& h);
void write_range_trace_binary(const std::string& path, const range_history& h);
// Writes it, metadata line first (a "model" member naming h.model when the
// line read had none); replaced whole or not at all.
void write_range_trace(const std::string& path, const range_history& h);
std::string range_trace_text(const range_history& h);

}  // namespace gfsl::lin::ranges
