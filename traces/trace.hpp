// Trace files: the header of a run (backend, device, chunk size, workload and
// seed, teams, clock) and its history, in one of two forms.
//
// - Binary, versioned, sectioned: the form runs write (traces/FORMAT.md).
// - JSON lines: one object per line, an optional metadata line first; for
//   people and other tools.
//
// Readers tell the forms apart by content. Every error is one line naming the
// file, the byte offset and what was expected there; a reader never trusts a
// length or a count before checking it against the file's size.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/history.hpp"
#include "core/events.hpp"
#include "invariants/snapshot.hpp"
#include "model/workload.hpp"

namespace gfsl::traces {

// One line: "FILE: byte N: expected ..., found ...".
struct trace_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class trace_format : std::uint8_t { binary, json };

// A header field this reader does not know: kept, so that a conversion does
// not lose what a newer writer put there.
struct extra_field {
  enum class type : std::uint8_t { unsigned_integer = 1, real = 2, string = 3, boolean = 4 };
  std::string name;
  type kind = type::string;
  std::uint64_t u = 0;
  double r = 0;
  std::string s;
  bool b = false;
  friend bool operator==(const extra_field&, const extra_field&) = default;
};

struct trace_header {
  std::string backend;      // host, threads, cuda, synthetic, ...
  std::string device;       // the GPU's name; empty on the CPU
  model::workload workload; // chunk size, teams, operations, mix, key range, prefill, p_chunk, seed
  model::clock_kind clock = model::clock_kind::none;
  std::string replay;       // the line that repeats the run
  // What the recorder declares about a successful delete's "value": true, it
  // is the value the delete removed (checkers compare it with the model's);
  // false or absent, it may be anything (many recorders write 0), and it is
  // not compared. traces/FORMAT.md, "Delete values". Binary version 1 files
  // read as true.
  std::optional<bool> delete_value;
  std::vector<extra_field> extra;
};

// The operations a JSON-lines file may name when it is read for a sequential
// model other than the default one (gfsl check --model; traces/FORMAT.md,
// "Models"). Each name says how its record is stored: `base` insert, the
// record's "value" is the operation's argument; remove or contains, it is
// the answer. `code` is the model's own number for it, kept per record in
// trace::op_codes.
struct operation_name {
  std::string name;
  op_kind base = op_kind::contains;
  std::uint8_t code = 0;
  // insert: the argument must be given; contains: a value must be given when
  // ok is true. False: "value" may be left out.
  bool value_required = true;
  // "ok":null is taken: the answer was not recorded (op_codes has
  // ok_not_recorded set), and the model does not compare it.
  bool ok_may_be_null = false;
};
struct operation_table {
  std::string model;  // named in messages: "upsert-map"
  std::vector<operation_name> names;
};
inline constexpr std::uint8_t ok_not_recorded = 0x80;

struct trace {
  trace_header header;
  // Read with an operation_table (JSON lines only): the code of each
  // record's operation, | ok_not_recorded when its "ok" was null. Empty
  // otherwise: every record is one of insert, delete, contains.
  std::vector<std::uint8_t> op_codes;
  // Record members the reader does not know and passed over (a recorder's
  // "thread", "sm", ...): the first few names, for the reports.
  std::vector<std::string> ignored_members;
  std::vector<model::op_record> history;
  // Indices (ascending) of successful deletes whose removed value was not
  // recorded: a JSON line may leave it out. Their values are not checked.
  std::vector<std::uint32_t> unrecorded_values;
  trace_format format = trace_format::binary;
  std::uint32_t version = 1;
  // Binary form only (sections 3-5, traces/FORMAT.md): the structure at the
  // end and at the start of the logged phase, and the structural event log.
  bool has_final_snapshot = false, has_initial_snapshot = false, has_events = false;
  invariants::snapshot final_snapshot, initial_snapshot;
  std::vector<invariants::structural_event> events;
  // Empty for a whole trace. A binary trace that ends early (its writer was
  // killed, the copy is short), read with keep_cut: one line saying where it
  // ends and what was kept, the complete sections before the cut.
  std::string cut;
};

// What a run may add to its history in the binary form (null: absent).
struct trace_extras {
  const invariants::snapshot* final_snapshot = nullptr;
  const invariants::snapshot* initial_snapshot = nullptr;
  const std::vector<invariants::structural_event>* events = nullptr;
};

// Version 2 added the header's delete_value declaration; version 1 files
// still read, as declaring it (traces/FORMAT.md, "Delete values"). Version 3
// checksums each section's head with its payload, refuses unknown section
// types that are not optional, and ends with the count and chained checksums
// of the sections before the end; versions 1 and 2 read by their own rules.
inline constexpr std::uint32_t binary_version = 3;
inline constexpr std::uint32_t oldest_binary_version = 1;
inline constexpr unsigned max_status = static_cast<unsigned>(status::corrupt);
inline constexpr std::uint32_t json_version = 1;

// The header of a run, from what `gfsl run` knows. It declares
// delete_value = true: the testbed's runners record what each delete removed.
trace_header make_header(const model::workload& w, const std::string& backend, const std::string& device,
                         model::clock_kind clock, const std::string& replay);

// Writes the binary form; throws trace_error (one line) when the file cannot
// be written. Histories hold fewer than 2^32 records.
void write_trace(const std::string& path, const trace_header& header, const std::vector<model::op_record>& history,
                 const std::vector<std::uint32_t>& unrecorded_values = {}, const trace_extras& extras = {});
// Writes the JSON-lines form, metadata line first.
void write_trace_json(const std::string& path, const trace_header& header, const std::vector<model::op_record>& history,
                      const std::vector<std::uint32_t>& unrecorded_values = {});
void write_trace(const std::string& path, const trace& t, trace_format as);

// The file a whole-file write to `path` replaces: `path` itself, or, when it
// is a symbolic link (a chain of them), the file it finally names, so that
// the link stays a link and its target gets the new bytes.
std::string replaced_file(const std::string& path);

// A file written whole or not at all: the bytes go to a temporary file
// beside `path` (PATH.tmp-PID), which commit() flushes, syncs and renames over
// `path`; without commit() (an error, an exception) the temporary is removed
// and whatever `path` held before is left as it was. A symbolic link is
// followed (replaced_file). A path that names no regular file or directory
// entry that can be replaced (a device such as /dev/stdout or /dev/full, a
// FIFO) is written directly. Errors throw trace_error: "PATH: cannot write:
// REASON".
class output_file {
 public:
  explicit output_file(const std::string& path);
  ~output_file();
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  void write(const void* data, std::size_t n);
  void commit();

 private:
  std::string path_, target_, temp_;  // target_: the file replaced (replaced_file(path_))
  FILE* f_ = nullptr;
};

// Writes `text` to `path` through output_file.
void write_file(const std::string& path, const std::string& text);

// Reads either form; throws trace_error. `bytes_read`, when given, counts
// the bytes read so far (for a progress line; other threads may read it).
// `keep_cut`: a binary trace that ends early, after its header section, is
// read up to its last complete section and returned with `cut` saying so,
// instead of refused (traces/FORMAT.md, "Cut traces"). Damage (a checksum,
// a field out of range) is refused either way.
// `ops`: the operations JSON lines may name (null: insert, delete and
// contains); binary traces hold those three only.
trace read_trace(const std::string& path, std::atomic<std::uint64_t>* bytes_read = nullptr, bool keep_cut = false,
                 const operation_table* ops = nullptr);
// The same, the operations chosen from the trace's own header: `choose` is
// called once, with the metadata line's fields (an empty header when the
// first line is a record), before any record of JSON lines is read, and
// returns their operation table (null: insert, delete and contains); it may
// throw trace_error to refuse the trace. Binary traces: not called.
using model_chooser = std::function<const operation_table*(const trace_header&)>;
trace read_trace(const std::string& path, std::atomic<std::uint64_t>* bytes_read, bool keep_cut, const model_chooser& choose);

// The sequential model a trace's header names (its metadata's "model", as
// gfsl/record.cuh writes it; traces/FORMAT.md, "Models"), or "" when it
// names none. Throws trace_error when the field is not a string.
std::string declared_model(const trace_header& h);
// The recorder a trace's header names ("recorder"; gfsl's own writers name
// none), or "".
std::string declared_recorder(const trace_header& h);

// Writes a binary trace as a run goes: the header at once, then the history
// in blocks (section type 6), each followed by its checksum and flushed to
// the file, then the snapshots and events and the end section. A writer
// killed at any moment leaves a file that read_trace(..., keep_cut) reads up
// to its last complete block. Writes go to `path` itself: a cut file is told
// from a whole one by its missing end section.
class trace_recorder {
 public:
  trace_recorder(const std::string& path, const trace_header& header);
  ~trace_recorder();
  trace_recorder(const trace_recorder&) = delete;
  trace_recorder& operator=(const trace_recorder&) = delete;
  // One history block of these records, written and flushed (fflush, not
  // fsync: what the process wrote survives its death, not the machine's).
  void append(const model::op_record* records, std::size_t n);
  void append(const std::vector<model::op_record>& records) { append(records.data(), records.size()); }
  // Snapshots and events, then the end section; fsyncs the file.
  void finish(const trace_extras& extras = {});
  std::uint64_t records() const { return records_; }

 private:
  std::string path_;
  FILE* f_ = nullptr;
  std::uint64_t records_ = 0;
  std::uint64_t sections_ = 0;
  std::string chain_;  // the checksums written so far, for the end section
  void write_section(std::uint32_t type, const std::vector<unsigned char>& payload);
};

// Which form a file is in, from its first bytes; throws trace_error.
trace_format detect_format(const std::string& path);

// The successful deletes whose value a checker must not compare, ascending:
// every one of them when the header does not declare delete_value = true,
// else those the file marks as not recorded.
std::vector<std::uint32_t> unchecked_delete_values(const trace& t);
// Whether unchecked_delete_values compares the recorded values at all.
bool delete_values_compared(const trace& t);
// One line saying which convention unchecked_delete_values applied, for
// gfsl check's reports: "compared (...)" or "not compared (...)".
std::string delete_value_convention(const trace& t);

// Names used in both forms.
const char* clock_name(model::clock_kind c);
// Also takes the hyphenated spellings ("global-counter") that gfsl fuzz
// wrote in its history.jsonl before the names were made one.
bool parse_clock(const std::string& name, model::clock_kind& out);
const char* status_key(status s);  // "pool_exhausted", ...
bool parse_status(const std::string& name, status& out);

// The checksum that follows each section of the binary form (traces/FORMAT.md):
// versions 1 and 2, over its payload; version 3, over its type, reserved
// word, length and payload.
std::uint64_t section_checksum(const unsigned char* payload, std::size_t size);
std::uint64_t section_checksum(std::uint32_t type, const unsigned char* payload, std::size_t size);

// One history record as a JSON line (no newline).
std::string record_json(const model::op_record& r, bool value_recorded = true);

// Problems a history must not have (the readers refuse them; the checker
// refuses them in memory too): empty when fine, else one line naming the
// record.
std::string validate_record(const model::op_record& r);

}  // namespace gfsl::traces
