// gfsl check: is a recorded history linearizable? gfsl convert: a trace file
// from one form to the other.
#include <stdio_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include "cli/commands.hpp"
#include "core/registry.hpp"
#include "invariants/dot.hpp"
#include "core/gfsl/invariants.hpp"
#include "invariants/snapshot.hpp"
#include "invariants/temporal.hpp"
#include "linearizability/checker.hpp"
#include "linearizability/models.hpp"
#include "linearizability/range_model.hpp"
#include "linearizability/report.hpp"
#include "traces/trace.hpp"

namespace gfsl::cli {

// cli/range_check.cpp: the ordered models, with ranges and snapshot handles.
int run_range_check(const std::string& file, const std::string& model, double seconds, const std::string& json, const std::string& html);

namespace {

struct check_options {
  std::string file;
  double timeout = 0;
  std::size_t max_memory = lin::default_max_memory();
  unsigned threads = 0;
  std::string html;
  std::string json;  // "-": standard output, in the text report's place
  double key_seconds = 10;
  bool all_keys = false;
  double explain = 5;
  std::string progress = "auto";
  std::string model;  // "": the one the trace names, else set
  std::string subject;  // "": whichever the trace names
};

std::string form_name(const traces::trace& t) {
  return std::string(t.format == traces::trace_format::binary ? "binary v" : "JSON lines v") + std::to_string(t.version);
}

// Writes a report whole or not at all (a temporary file renamed over the
// path): empty, or the one line saying why not.
std::string write_output(const std::string& path, const std::string& text) {
  try {
    traces::write_file(path, text);
    return {};
  } catch (const traces::trace_error& e) {
    return lin::printable(e.what());
  }
}

// A progress line on stderr while a check runs: the bytes read, the records
// grouped by key, the keys decided, the invariants, each phase with its time
// so far and the finished ones with theirs (where a slow check spends its
// time shows while it runs). Only when stderr is a terminal (a log or a pipe
// gets nothing) unless --progress says otherwise; redrawn in place four times
// a second and erased before the report is printed.
class progress_line {
 public:
  enum stage_kind : int { reading, checking, invariants };

  progress_line(bool on, const std::string& file) : on_(on), file_(file) {
    if (!on_) return;
    struct stat st {};
    // A pipe or standard input has no size to show.
    if (file != "-" && ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) file_bytes_ = static_cast<std::uint64_t>(st.st_size);
    try {
      ticker_ = std::thread([this] {
        std::unique_lock<std::mutex> g(lock_);
        while (!stop_) {
          wake_.wait_for(g, std::chrono::milliseconds(250));
          if (!stop_) draw();
        }
      });
    } catch (const std::system_error&) {
      on_ = false;  // a thread limit: the check runs without its progress line
      return;
    }
    std::lock_guard<std::mutex> g(lock_);
    draw();  // at once: the reading starts now
  }
  ~progress_line() { finish(); }

  // The main thread moves on: the phase before ends now, and the line shows
  // the new one at once (each phase is seen, however short).
  void enter(stage_kind s) {
    const clock::time_point now = clock::now();
    std::lock_guard<std::mutex> g(lock_);
    if (stage.load() == reading && s != reading) read_seconds_ = seconds(started_, now);
    if (s == invariants) check_seconds_ = seconds(checking_from_, now);
    if (s == checking) checking_from_ = now;
    stage = s;
    if (on_ && !stop_) draw();
  }

  // Erases the line; nothing is drawn after.
  void finish() {
    if (!on_) return;
    {
      std::lock_guard<std::mutex> g(lock_);
      stop_ = true;
    }
    wake_.notify_all();
    if (ticker_.joinable()) ticker_.join();
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    on_ = false;
  }

  std::atomic<std::uint64_t> bytes_read{0};
  std::atomic<std::uint64_t> records{0};
  lin::check_progress check;

 private:
  using clock = std::chrono::steady_clock;
  static std::string megabytes(std::uint64_t b) { return std::to_string((b + 500000) / 1000000); }
  static double seconds(clock::time_point from, clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }
  static std::string shown(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f s", s);
    return b;
  }

  void draw() {
    const clock::time_point now = clock::now();
    std::string text = "gfsl check: ";
    const int s = stage.load();
    if (s == reading) {
      const std::uint64_t b = bytes_read.load();
      text += "reading " + lin::printable(file_) + ": " + megabytes(b) + (file_bytes_ ? " of " + megabytes(file_bytes_) : std::string()) +
              " MB (" + shown(seconds(started_, now)) + ")";
    } else {
      text += "read " + megabytes(bytes_read.load()) + " MB in " + shown(read_seconds_) + "; ";
      const double grouping = check.grouping_seconds.load();
      if (s == checking) {
        switch (check.phase.load()) {
          case lin::check_progress::grouping:
            text += "grouping " + std::to_string(records.load()) + " records by key (" + shown(seconds(checking_from_, now)) + ")";
            break;
          case lin::check_progress::deciding: {
            const std::uint64_t keys = check.keys.load(), decided = std::min(check.decided.load(), keys);
            text += "grouped in " + shown(grouping) + "; keys decided: " + std::to_string(decided) + " of " + std::to_string(keys) + " (" +
                    std::to_string(keys ? 100 * decided / keys : 100) + "%, " + shown(seconds(checking_from_, now) - grouping) + ")";
            break;
          }
          default: text += "explaining the violation (the failing key found first; --explain-seconds bounds it)";
        }
      } else {
        text += "grouped and decided in " + shown(check_seconds_) + "; checking the invariants of the final structure and the event log";
      }
    }
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    std::fflush(stderr);
  }

  std::atomic<int> stage{reading};
  bool on_;
  std::string file_;
  std::uint64_t file_bytes_ = 0;
  std::mutex lock_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
  const clock::time_point started_ = clock::now();
  clock::time_point checking_from_ = started_;
  double read_seconds_ = 0, check_seconds_ = 0;
};

// Everything else the trace holds, checked by name: the final structure's
// snapshot invariants, and the temporal invariants of its event log (which
// need the structure as it was when logging began). A group the trace cannot
// feed is reported as not run, with the reason.
std::vector<lin::invariant_group> invariant_checks(const traces::trace& t) {
  std::vector<lin::invariant_group> groups(2);
  lin::invariant_group& snapshot = groups[0];
  snapshot.name = "snapshot";
  snapshot.checks = invariants::snapshot_invariant_names();
  const bool slabs = t.final_snapshot.subject == subject_kind::slabhash;
  if (t.has_final_snapshot) {
    invariants::snapshot_report rep = invariants::check_snapshot(t.final_snapshot);
    invariants::name_operations_in_flight(rep.violations, t.history);
    snapshot.ran = true;
    // Another subject's own invariants (SlabHash's: core/slabhash/invariants.hpp).
    if (t.final_snapshot.subject != subject_kind::gfsl) snapshot.checks = rep.checked;
    for (const std::string& name : snapshot.checks) {
      if (std::find(rep.checked.begin(), rep.checked.end(), name) != rep.checked.end()) continue;
      snapshot.skipped.emplace_back(name, name == "model-state"
                                              ? "it needs the expected final contents, which a concurrent history does not fix "
                                                "(gfsl run checks it on sequential runs)"
                                              : "it walks the level lists, which level-list found broken");
    }
    snapshot.subject = slabs ? "the final table (" + std::to_string(rep.chunks) + " slabs allocated, " + std::to_string(rep.live_chunks) +
                                   " in chains, " + std::to_string(rep.keys) + " live keys)"
                             : "the final structure (" + std::to_string(rep.chunks) + " chunks, " + std::to_string(rep.live_chunks) + " live)";
    snapshot.violations = std::move(rep.violations);
  } else {
    snapshot.not_run = t.format == traces::trace_format::json
                           ? "the JSON-lines form holds no snapshot of the final structure (the binary trace of gfsl run --trace does)"
                           : "the trace holds no snapshot of the final structure";
  }
  lin::invariant_group& events = groups[1];
  events.name = "events";
  events.checks = invariants::temporal_invariant_names();
  if (t.has_events && t.has_initial_snapshot) {
    invariants::temporal_report rep = invariants::check_events(t.initial_snapshot, t.events);
    invariants::name_operations_in_flight(rep.violations, t.history);
    events.ran = true;
    events.checks = rep.checked;
    events.subject = "the structural event log (" + std::to_string(rep.events) + " events)";
    events.violations = std::move(rep.violations);
  } else if (t.has_events) {
    events.not_run = "the trace holds an event log but not the structure when it began";
  } else {
    events.not_run = t.format == traces::trace_format::json
                         ? "the JSON-lines form holds no structural event log (the binary trace of gfsl run --events on --trace does)"
                         : "the trace holds no structural event log (record one with gfsl run --events on --trace FILE)";
  }
  return groups;
}

// "ignored:  members thread, sm ...": what the reader passed over, so that a
// recorder's extra members are seen to have been read and left aside.
void print_ignored(const traces::trace& t) {
  if (t.ignored_members.empty()) return;
  std::string names;
  for (const std::string& n : t.ignored_members) names += (names.empty() ? "" : ", ") + n;
  std::printf("ignored:  record members %s%s (not part of the model)\n", lin::printable(names).c_str(),
              t.ignored_members.size() >= 8 ? ", ..." : "");
}

// The models the segmented checker does not decide: the generic search, key
// by key (linearizability/models.hpp). The invariants are GFSL's own and are
// not run on another structure's history.
int run_model_check(const check_options& o, lin::model_kind m, const traces::trace& t) {
  const std::vector<std::uint32_t> unchecked = traces::unchecked_delete_values(t);
  lin::model_check_options mo;
  mo.threads = o.threads;
  mo.timeout_seconds = o.timeout;
  mo.key_seconds = o.key_seconds;
  mo.max_memory_bytes = o.max_memory;
  const lin::model_check_result r = lin::check_history_model(m, t.history, t.op_codes, mo, unchecked);
  const bool json_out = is_stdout(o.json);
  const std::string text = lin::model_text_report(m, t.history, t.op_codes, r, o.file, form_name(t), unchecked);
  if (json_out) {
    std::printf("%s\n", lin::model_json_report(m, t.history, t.op_codes, r, o.file, unchecked).c_str());
  } else {
    std::fputs(text.c_str(), stdout);
    print_ignored(t);
  }
  if (!o.json.empty() && !json_out) {
    if (const std::string why = write_output(o.json, lin::model_json_report(m, t.history, t.op_codes, r, o.file, unchecked) + "\n");
        !why.empty()) {
      std::fflush(stdout);
      std::fprintf(stderr, "gfsl check: --json %s\n", why.c_str());
      return exit_usage;
    }
    std::printf("json:     %s\n", lin::printable(o.json).c_str());
  }
  if (!o.html.empty()) {
    const std::string page = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gfsl check</title></head><body><pre>" +
                             lin::html_escape(text) + "</pre></body></html>\n";
    if (const std::string why = write_output(o.html, page); !why.empty()) {
      std::fflush(stdout);
      std::fprintf(stderr, "gfsl check: --html %s\n", why.c_str());
      return exit_usage;
    }
    if (!json_out) std::printf("html:     %s\n", lin::printable(o.html).c_str());
  }
  if (!t.cut.empty()) {
    std::fflush(stdout);
    std::fprintf(json_out ? stderr : stdout, "cut:      %s: the verdict above is on these records only, not the whole run (exit 3)\n",
                 lin::printable(t.cut).c_str());
    return exit_undecided;
  }
  switch (r.v) {
    case lin::verdict::linearizable: return exit_ok;
    case lin::verdict::not_linearizable: return exit_violation;
    case lin::verdict::unknown: return exit_undecided;
  }
  return exit_undecided;
}

// set and map are one object (GFSL's map): a trace naming one is checked
// under the other without complaint.
bool same_object(lin::model_kind a, lin::model_kind b) {
  auto fast = [](lin::model_kind m) { return m == lin::model_kind::set || m == lin::model_kind::map; };
  return a == b || (fast(a) && fast(b));
}

// The model a trace is checked under: --model where given, else the one
// its header names (gfsl/record.cuh writes it), else set. A header that
// names a model --model contradicts, or one gfsl check does not know, is
// refused (one line, exit 2).
// Thrown by model_choice::pick for a trace whose header names an ordered
// model and no --model was given: the range checker reads it instead.
struct ordered_trace {
  std::string model;
};
struct model_choice {
  bool explicit_model = false;
  lin::model_kind model = lin::model_kind::set;
  std::string file;
  lin::model_kind pick(const traces::trace_header& h) const {
    const std::string named = traces::declared_model(h);
    if (named.empty()) return model;
    lin::model_kind declared;
    if (lin::ranges::range_model rm{}; lin::ranges::parse_range_model(named, rm)) {
      if (!explicit_model) throw ordered_trace{named};
      throw traces::trace_error(file + ": the trace names model " + named + ", not " + lin::model_name(model) +
                                " (--model); leave --model out to check it as the trace says (its ranges and handles are read by the range checker)");
    }
    if (!lin::parse_model(named, declared)) {
      throw traces::trace_error(file + ": the trace names model \"" + named + "\", which gfsl check does not know (one of " +
                                lin::model_names() + ")");
    }
    if (explicit_model && !same_object(declared, model)) {
      throw traces::trace_error(file + ": the trace names model " + named + ", not " + lin::model_name(model) +
                                " (--model); leave --model out to check it as the trace says");
    }
    return explicit_model ? model : declared;
  }
};

int run_check(const check_options& o) {
  // The ordered models have a reader and checker of their own (JSON lines).
  if (lin::ranges::range_model rm{}; lin::ranges::parse_range_model(o.model, rm)) return run_range_check(o.file, o.model, o.timeout, o.json, o.html);
  model_choice choice;
  choice.file = o.file;
  if (!o.model.empty()) {
    choice.explicit_model = true;
    if (!lin::parse_model(o.model, choice.model)) {
      std::fprintf(stderr, "gfsl check: --model %s: expected one of %s\n", lin::printable(o.model).c_str(), lin::model_names().c_str());
      return exit_usage;
    }
  }
  // A binary trace of an ordered model (its own record sections): the range
  // checker reads it, as it reads the JSON-lines form.
  if (const std::string named = lin::ranges::binary_range_model(o.file); !named.empty()) {
    if (!choice.explicit_model) return run_range_check(o.file, named, o.timeout, o.json, o.html);
    std::fprintf(stderr, "gfsl check: %s: the trace names model %s, not %s (--model); leave --model out to check it as the trace says\n",
                 lin::printable(o.file).c_str(), named.c_str(), lin::model_name(choice.model));
    return exit_usage;
  }
  // The default model reads as before: insert, delete and contains.
  const traces::operation_table tables[] = {lin::operation_table_of(lin::model_kind::set), lin::operation_table_of(lin::model_kind::map),
                                            lin::operation_table_of(lin::model_kind::upsert_map),
                                            lin::operation_table_of(lin::model_kind::multiset)};
  lin::model_kind model = choice.model;
  progress_line progress(progress_wanted(o.progress) && lin::fast_checker_decides(model), o.file);
  traces::trace t;
  try {
    const traces::model_chooser choose = [&](const traces::trace_header& h) -> const traces::operation_table* {
      model = choice.pick(h);
      return model == lin::model_kind::set ? nullptr : &tables[static_cast<int>(model)];
    };
    t = traces::read_trace(o.file, &progress.bytes_read, true, choose);
    model = choice.pick(t.header);  // a binary trace's header too
  } catch (const ordered_trace& ordered) {
    progress.finish();
    return run_range_check(o.file, ordered.model, o.timeout, o.json, o.html);
  } catch (const traces::trace_error& e) {
    progress.finish();
    std::fprintf(stderr, "gfsl check: %s\n", lin::printable(e.what()).c_str());
    return exit_usage;
  }
  // A trace names the structure it recorded (absent: gfsl); a check that
  // expects another one would judge its snapshot by the wrong invariants.
  if (!o.subject.empty() && o.subject != subject_name(t.header.workload.subject)) {
    progress.finish();
    std::fprintf(stderr, "gfsl check: %s: the trace records subject %s, not %s (--subject)\n", lin::printable(o.file).c_str(),
                 subject_name(t.header.workload.subject), o.subject.c_str());
    return exit_usage;
  }
  if (!lin::fast_checker_decides(model)) {
    progress.finish();
    return run_model_check(o, model, t);
  }
  progress.records = t.history.size();
  progress.enter(progress_line::checking);
  lin::check_options co;
  co.progress = &progress.check;
  co.threads = o.threads;
  co.timeout_seconds = o.timeout;
  co.max_memory_bytes = o.max_memory;
  co.explain_seconds = o.explain;
  co.key_seconds = o.key_seconds;
  co.all_keys = o.all_keys;
  // A successful delete's value is compared only where the trace declares
  // that its recorder wrote the removed value (traces/FORMAT.md, "Delete
  // values"); the reports say which convention applied.
  const std::vector<std::uint32_t> unchecked = traces::unchecked_delete_values(t);
  lin::report_context ctx;
  ctx.file = o.file;
  ctx.form = form_name(t);
  ctx.backend = t.header.backend;
  ctx.device = t.header.device;
  ctx.clock = traces::clock_name(t.header.clock);
  ctx.replay = t.header.replay;
  ctx.unrecorded_values = unchecked;
  ctx.delete_values = traces::delete_value_convention(t);
  ctx.delete_values_compared = traces::delete_values_compared(t);
  const bool json_out = is_stdout(o.json);
  // A violation is printed the moment it is decided; explaining it comes
  // after (and may take up to --explain-seconds).
  bool verdict_printed = false;
  if (!json_out) {
    co.on_verdict = [&](const lin::check_result& r) {
      if (r.v != lin::verdict::not_linearizable) return;
      progress.finish();
      std::fputs(lin::text_report_verdict(r, ctx).c_str(), stdout);
      std::fflush(stdout);
      verdict_printed = true;
    };
  }
  const lin::check_result r = lin::check_history(t.history, co, unchecked);

  progress.enter(progress_line::invariants);
  // GFSL's invariants are of GFSL's structure: a history another recorder
  // wrote (its header names it: gfsl/record.cuh) is judged by
  // linearizability alone, and its report lists nothing else.
  if (traces::declared_recorder(t.header).empty()) ctx.invariants = invariant_checks(t);
  progress.finish();
  if (json_out) {
    std::printf("%s\n", lin::json_report(t.history, r, ctx).c_str());
  } else {
    std::fputs((verdict_printed ? lin::text_report_rest(t.history, r, ctx) : lin::text_report(t.history, r, ctx)).c_str(), stdout);
    print_ignored(t);
  }
  if (!o.json.empty() && !json_out) {
    if (const std::string why = write_output(o.json, lin::json_report(t.history, r, ctx) + "\n"); !why.empty()) {
      std::fflush(stdout);
      std::fprintf(stderr, "gfsl check: --json %s\n", why.c_str());
      return exit_usage;
    }
    std::printf("json:     %s\n", lin::printable(o.json).c_str());
  }
  if (!o.html.empty()) {
    if (const std::string why = write_output(o.html, lin::html_report(t.history, r, ctx)); !why.empty()) {
      std::fflush(stdout);
      std::fprintf(stderr, "gfsl check: --html %s\n", why.c_str());
      return exit_usage;
    }
    if (!json_out) std::printf("html:     %s\n", lin::printable(o.html).c_str());
  }
  if (!t.cut.empty()) {
    // A cut trace lacks the operations after its last complete section, and
    // one of them may explain an answer or break one: whatever was found in
    // what was read, the run as a whole is not decided.
    std::fflush(stdout);
    std::fprintf(json_out ? stderr : stdout, "cut:      %s: the verdict above is on these records only, not the whole run (exit 3)\n",
                 lin::printable(t.cut).c_str());
    return exit_undecided;
  }
  const bool invariants_hold = lin::invariants_hold(ctx.invariants);
  switch (r.v) {
    case lin::verdict::linearizable: return invariants_hold ? exit_ok : exit_violation;
    case lin::verdict::not_linearizable: return exit_violation;
    case lin::verdict::unknown: return invariants_hold ? exit_undecided : exit_violation;
  }
  return exit_undecided;
}

int run_dot(const std::string& file, const std::string& out) {
  traces::trace t;
  try {
    t = traces::read_trace(file);
  } catch (const traces::trace_error& e) {
    std::fprintf(stderr, "gfsl dot: %s\n", lin::printable(e.what()).c_str());
    return exit_usage;
  }
  if (!t.has_final_snapshot) {
    std::fprintf(stderr, "gfsl dot: %s: the trace holds no snapshot (binary traces of gfsl run --trace do)\n",
                 lin::printable(file).c_str());
    return exit_usage;
  }
  if (t.final_snapshot.subject != subject_kind::gfsl) {
    // The drawing is of GFSL's levels and chunks; a slab table has neither.
    std::fprintf(stderr, "gfsl dot: %s: the trace records subject %s; gfsl dot draws gfsl's levels only\n", lin::printable(file).c_str(),
                 subject_name(t.final_snapshot.subject));
    return exit_usage;
  }
  const std::string dot = invariants::to_dot(t.final_snapshot);
  if (out.empty() || out == "-") {
    std::fputs(dot.c_str(), stdout);
  } else if (const std::string why = write_output(out, dot); !why.empty()) {
    std::fprintf(stderr, "gfsl dot: %s\n", lin::printable(why).c_str());
    return exit_usage;
  }
  return exit_ok;
}

struct convert_options {
  std::string in, out, to;
};

// An ordered model's trace (ranges, snapshot handles), in either form.
int run_range_convert(const std::string& in, const std::string& out, const std::string& to, const std::string& model) {
  lin::ranges::range_model m{};
  lin::ranges::parse_range_model(model, m);
  try {
    const lin::ranges::range_history h = lin::ranges::read_range_trace(in, m);
    const bool binary = to == "binary" || (to != "json" && !h.binary);
    std::string text;
    std::vector<unsigned char> bytes;
    if (binary) bytes = lin::ranges::range_trace_bytes(h);
    else text = lin::ranges::range_trace_text(h);
    const unsigned char* data = binary ? bytes.data() : reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t size = binary ? bytes.size() : text.size();
    std::FILE* said = is_stdout(out) ? stderr : stdout;
    if (is_stdout(out)) {
      if (std::fwrite(data, 1, size, stdout) != size || std::fflush(stdout) != 0) {
        __fpurge(stdout);
        std::clearerr(stdout);
        throw traces::trace_error(std::string("-: cannot write to standard output: ") + std::strerror(errno));
      }
    } else {
      traces::output_file f(out);
      f.write(data, size);
      f.commit();
    }
    std::fprintf(said, "gfsl convert: %s (%s, %zu records) -> %s (%s)\n", lin::printable(in).c_str(), h.binary ? "binary v3" : "JSON lines v1",
                 h.ops.size(), is_stdout(out) ? "standard output" : lin::printable(out).c_str(), binary ? "binary" : "JSON lines");
    return exit_ok;
  } catch (const traces::trace_error& e) {
    std::fprintf(stderr, "gfsl convert: %s\n", lin::printable(e.what()).c_str());
    return exit_usage;
  }
}

int run_convert(const convert_options& o) {
  if (const std::string named = lin::ranges::range_model_named(o.in); !named.empty()) return run_range_convert(o.in, o.out, o.to, named);
  try {
    const traces::trace t = traces::read_trace(o.in);
    traces::trace_format as = t.format == traces::trace_format::binary ? traces::trace_format::json : traces::trace_format::binary;
    if (o.to == "binary") as = traces::trace_format::binary;
    if (o.to == "json") as = traces::trace_format::json;
    // "-": the trace on standard output (written whole to a temporary file
    // first, as every output is), and the summary on standard error.
    std::FILE* said = is_stdout(o.out) ? stderr : stdout;
    if (is_stdout(o.out)) {
      char temp[] = "/tmp/gfsl-convert-XXXXXX";
      const int fd = ::mkstemp(temp);
      if (fd < 0) throw traces::trace_error(std::string(temp) + ": cannot create a temporary file: " + std::strerror(errno));
      ::close(fd);
      std::string error;
      try {
        traces::write_trace(temp, t, as);
        std::FILE* in = std::fopen(temp, "rb");
        char block[65536];
        for (std::size_t n; in && (n = std::fread(block, 1, sizeof block, in)) > 0;) {
          if (std::fwrite(block, 1, n, stdout) != n) break;
        }
        if (!in) error = std::string(temp) + ": cannot read it back: " + std::strerror(errno);
        else if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
          error = std::string("-: cannot write to standard output: ") + std::strerror(errno);
          // This line says it: what is left in the buffer goes, so that the
          // exit's check of standard output adds no second line.
          __fpurge(stdout);
          std::clearerr(stdout);
        }
        if (in) std::fclose(in);
      } catch (...) {
        ::unlink(temp);
        throw;
      }
      ::unlink(temp);
      if (!error.empty()) throw traces::trace_error(error);
    } else {
      traces::write_trace(o.out, t, as);
    }
    if (as == traces::trace_format::json && (t.has_final_snapshot || t.has_events)) {
      std::fprintf(said, "gfsl convert: the JSON-lines form holds the history only: the snapshots and events of %s are left out\n",
                   lin::printable(o.in).c_str());
    }
    std::fprintf(said, "gfsl convert: %s (%s, %zu records) -> %s (%s)\n", lin::printable(o.in).c_str(), form_name(t).c_str(),
                 t.history.size(), is_stdout(o.out) ? "standard output" : lin::printable(o.out).c_str(),
                 as == traces::trace_format::binary ? "binary" : "JSON lines");
    return exit_ok;
  } catch (const traces::trace_error& e) {
    std::fprintf(stderr, "gfsl convert: %s\n", lin::printable(e.what()).c_str());
    return exit_usage;
  }
}

}  // namespace

command add_check_command(CLI::App& root) {
  auto o = std::make_shared<check_options>();
  CLI::App* c = root.add_subcommand("check", "is a recorded history linearizable? (exit 0 yes, 1 no, 2 bad input, 3 undecided)");
  c->add_option("file", o->file, "trace file, binary or JSON lines (told apart by content); - or a pipe: standard input")->required();
  c->add_option("--seconds", o->timeout, "seconds to decide every key; keys left are undecided (exit 3). 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--max-memory", o->max_memory,
                "bytes the checker may use beyond the history (suffixes k, m, g: powers of 1024); a key that would need more is "
                "undecided (exit 3). 0: no bound")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("half of physical memory");
  c->add_option("--threads", o->threads, "threads checking keys (0: every core)")->check(CLI::Range(0u, 4096u))->capture_default_str();
  c->add_option("--html", o->html, "write a self-contained HTML page of the failing key to FILE")->type_name("FILE");
  c->add_option("--json", o->json, "write the report as one JSON object to FILE (-: standard output, instead of the text report)")->type_name("FILE");
  c->add_option("--model", o->model,
                "the sequential specification: set (insert-if-absent, delete, contains: GFSL's map), map (insert, erase, find), "
                "upsert-map (map and upsert), multiset; ordered-map, ordered-upsert-map (with range queries and snapshot handles) "
                "(traces/FORMAT.md, \"Models\", \"Ordered maps\"); refused if the trace names another")
      ->check(CLI::IsMember({"set", "map", "upsert-map", "multiset", "ordered-map", "ordered-upsert-map"}))
      ->default_str("the trace's, else set");
  std::vector<std::string> subjects;
  for (const subject_descriptor* s : subject_registry)
    if (subject_listed(s)) subjects.emplace_back(s->name);
  c->add_option("--subject", o->subject, "the structure the trace must record: " + subject_names_text() + " (refused if it records another; "
                                        "default: whichever it names)")
      ->check(CLI::IsMember(subjects));
  add_progress_option(c, o->progress);
  c->add_option("--explain-seconds", o->explain,
                "after the verdict, at most this long to shrink a violation and find the longest linearizable prefix (the smallest "
                "failing window found by then is shown). 0: no explanation")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--key-seconds", o->key_seconds,
                "seconds to decide each key, from when a thread takes it up; a key not decided by then is undecided (exit 3) and the "
                "others go on. 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_flag("--all-keys", o->all_keys,
              "decide every key and count every violating one (default: stop at the first violation found, exit 1)");
  return {c, [o] {
            try {
              return run_check(*o);
            } catch (const std::bad_alloc&) {
              std::fprintf(stderr, "gfsl check: %s: out of memory\n", lin::printable(o->file).c_str());
              return exit_usage;
            } catch (const std::exception& e) {
              std::fprintf(stderr, "gfsl check: %s\n", lin::printable(e.what()).c_str());
              return exit_usage;
            }
          }};
}

command add_dot_command(CLI::App& root) {
  auto file = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  CLI::App* c = root.add_subcommand("dot", "Graphviz DOT of a trace's final structure (levels as ranks, zombies and locks marked)");
  c->add_option("file", *file, "binary trace file with a snapshot")->required();
  c->add_option("-o,--output", *out, "file to write (default: standard output)");
  return {c, [file, out] { return run_dot(*file, *out); }};
}

command add_convert_command(CLI::App& root) {
  auto o = std::make_shared<convert_options>();
  CLI::App* c = root.add_subcommand("convert", "turn a trace file into the other form (binary <-> JSON lines)");
  c->add_option("in", o->in, "trace file, binary or JSON lines; - or a pipe: standard input")->required();
  c->add_option("out", o->out, "file to write; -: standard output")->required();
  c->add_option("--to", o->to, "the form to write (default: the other one)")->check(CLI::IsMember({"binary", "json"}));
  return {c, [o] {
            try {
              return run_convert(*o);
            } catch (const std::bad_alloc&) {
              std::fprintf(stderr, "gfsl convert: %s: out of memory\n", lin::printable(o->in).c_str());
              return exit_usage;
            } catch (const std::exception& e) {
              std::fprintf(stderr, "gfsl convert: %s\n", lin::printable(e.what()).c_str());
              return exit_usage;
            }
          }};
}

}  // namespace gfsl::cli
