#include "fuzz/failure_folder.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <unistd.h>

#include "fuzz/interleaving.hpp"
#include "linearizability/report.hpp"
#include "traces/trace.hpp"

namespace gfsl::fuzz {

namespace {

std::string stamp(std::uint64_t s) { return s == model::no_stamp ? "null" : std::to_string(s); }

}  // namespace

std::string write_failure_whole(const campaign_options& o, const failure& f, shared_state& s) {
  namespace fs = std::filesystem;
  const fs::path staging = fs::path(o.out_dir) / (".staging-" + std::to_string(getpid()));
  std::string error;
  try {
    fs::remove_all(staging);
    const fs::path written = write_failure(staging.string(), f, o);
    const fs::path final_dir = fs::path(o.out_dir) / written.filename();
    fs::remove_all(final_dir);
    fs::rename(written, final_dir);
    fs::remove_all(staging);
    return final_dir.string();
  } catch (const fs::filesystem_error& e) {
    error = o.out_dir + ": cannot write the failure's folder: " + e.code().message();
  } catch (const std::exception& e) {  // a trace_error from its history file, a bad_alloc
    error = o.out_dir + ": cannot write the failure's folder: " + e.what();
  }
  std::error_code ec;
  fs::remove_all(staging, ec);
  std::lock_guard<std::mutex> g(s.lock);
  if (s.result.write_error.empty()) s.result.write_error = error;
  s.stop = true;
  return {};
}

std::pair<std::size_t, std::size_t> window_around(const std::vector<model::op_record>& ops, std::uint64_t centre_call, std::size_t most) {
  if (ops.size() <= most) return {0, ops.size()};
  if (centre_call == model::no_stamp) return {ops.size() - most, most};
  // The first operation called at or after the centre: half the window
  // before it, the rest after, shifted inward at either end of the key.
  const std::size_t at = static_cast<std::size_t>(
      std::lower_bound(ops.begin(), ops.end(), centre_call, [](const model::op_record& r, std::uint64_t c) { return r.call < c; }) -
      ops.begin());
  const std::size_t from = std::min(at > most / 2 ? at - most / 2 : 0, ops.size() - most);
  return {from, most};
}

std::string write_failure(const std::string& dir, const failure& f, const campaign_options& o) {
  namespace fs = std::filesystem;
  const judgement& j = f.verdict;
  // One folder per signature: its words, lower case, joined by '-'.
  std::string id = "failure-";
  for (char ch : f.signature.empty() ? signature(j.found) : f.signature) {
    const bool word = std::isalnum(static_cast<unsigned char>(ch)) != 0;
    if (word) id += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    else if (id.back() != '-') id += '-';
  }
  while (id.back() == '-') id.pop_back();
  const fs::path folder = fs::path(dir) / id;
  fs::create_directories(folder);
  const std::vector<model::op_record> history = model::full_history(j.run.prefill, j.run.records);
  std::optional<key_type> focus;
  std::string focus_reason;
  for (const detection& d : j.found) {
    if (d.has_key && !focus) {
      focus = d.key;
      focus_reason = d.detector == "linearizability" ? "not linearizable" : "named by " + d.detector;
    }
  }
  std::vector<model::op_record> shown;
  for (const model::op_record& r : history) {
    if (!focus || r.op.key == *focus) shown.push_back(r);
  }
  std::stable_sort(shown.begin(), shown.end(), [](const model::op_record& a, const model::op_record& b) { return a.call < b.call; });

  // The history in the JSON-lines trace form, through the trace library's
  // writer, so that `gfsl check` reads it back (tests/test_writers.cpp). The
  // host and threads backends stamp on one global counter; the device runner
  // of a campaign on its device-wide counter (device_options' default).
  const std::string replay = o.replay_line ? o.replay_line(f.shrunk) : f.shrunk.describe();
  const model::clock_kind clock = f.shrunk.backend == "cuda" ? model::clock_kind::device_counter : model::clock_kind::global_counter;
  traces::trace_header header = traces::make_header(f.shrunk.w, f.shrunk.backend, "", clock, replay);
  // Which algorithm ran, as gfsl run --trace records it.
  traces::extra_field variant_field;
  variant_field.name = "variant";
  variant_field.s = variant_label(f.shrunk.w.subject, f.shrunk.choice);
  header.extra.push_back(variant_field);
  traces::write_trace_json((folder / "history.jsonl").string(), header, history);
  // Every file of the folder is checked: a full disk must not leave a
  // folder that looks whole (write_failure_whole catches and reports it).
  auto written = [](std::ofstream& out, const std::filesystem::path& p) {
    out.flush();
    if (!out) throw std::runtime_error(p.string() + ": cannot write: " + std::strerror(errno));
  };
  {
    std::ofstream out(folder / "replay.txt");
    out << "gfsl replay " << replay << "\n";
    written(out, folder / "replay.txt");
  }
  // What the detectors said, and the timeline of the operations involved.
  {
    std::ofstream rep(folder / "report.txt");
    rep << "run (shrunk): " << f.shrunk.describe() << "\n";
    rep << "run (as first found, after " << f.seconds_to_first << " s): " << f.first.describe() << "\n";
    rep << "operations: " << f.shrunk.w.ops << " concurrent + " << j.run.prefill.size() << " prefill, " << f.shrunk.w.teams
        << " teams\n";
    rep << "signature: " << f.signature << "\n";
    if (const std::string now = signature(j.found); !now.empty() && now != f.signature) {
      rep << "signature of the shrunk run: " << now << " (cut in time, the same execution up to the cut: the checker stops at "
          << "an earlier operation of the violation)\n";
    }
    rep << "shrinking: " << f.shrink_runs << " candidate runs\n";
    if (f.shrunk.so.mem != sched::memory::sc) {
      rep << "memory: " << sched::name(f.shrunk.so.mem) << ", " << j.outcome.stale_reads
          << " loads returned a store older than the latest (interleaving.txt marks them STALE)\n";
    }
    for (const detection& d : j.found) rep << d.detector << ": " << d.detail << "\n";
    if (!f.reproduced) {
      rep << "the shrunk run did not fail again when repeated (" << f.shrunk.backend
          << " runs interleave freely): the detectors and history above are those of its failing execution\n";
    }
    written(rep, folder / "report.txt");
  }
  {
    // Timeline: one row per team, operations in call order with their
    // intervals; only the key the failure is about, when there is one
    // (history.jsonl has everything).
    std::ofstream t(folder / "timeline.txt");
    if (focus) t << "key " << *focus << " (" << focus_reason << "):\n";
    std::map<team_id, std::vector<const model::op_record*>> rows;
    for (const model::op_record& r : shown) rows[r.team].push_back(&r);
    for (auto& [team, ops] : rows) {
      t << "team " << team << ":";
      for (const model::op_record* r : ops) {
        t << "  [" << r->call << "," << (r->pending() ? std::string("...") : std::to_string(r->ret)) << "] "
          << model::describe(r->op) << "->" << (r->pending() ? "?" : r->ok ? "true" : "false");
        if (!r->pending() && r->ok && r->op.kind != op_kind::insert) t << "/" << r->value;
      }
      t << "\n";
    }
    written(t, folder / "timeline.txt");
  }
  std::string interleaving;
  if (focus && f.shrunk.backend == "host") {
    interleaving = interleaving_of(f, *focus, o);
    std::ofstream out(folder / "interleaving.txt");
    out << interleaving;
    written(out, folder / "interleaving.txt");
  }
  {
    // One page for the failure: the detectors, the checker's answers (the
    // answers that cannot all hold, the longest prefix that can be ordered),
    // every team's operations on the key as bars, and the interleaving of
    // chunk accesses with its torn reads. The history is small once shrunk.
    lin::check_options co;
    co.threads = 1;
    // Short bounds: the detector has decided already; a key left undecided
    // here only leaves the page without the checker's explanation.
    co.timeout_seconds = 2;
    co.explain_seconds = 2;
    co.all_keys = true;  // the shrunk history is small: the page names every violating key
    const lin::check_result checked = lin::check_history(history, co);
    lin::report_context ctx;
    ctx.file = "history.jsonl";
    ctx.form = "JSON lines";
    ctx.backend = f.shrunk.backend;
    ctx.replay = "gfsl replay " + replay;
    ctx.html_title = "gfsl fuzz: " + (f.signature.empty() ? signature(j.found) : f.signature);
    std::string& before = ctx.html_before;
    before += "<h2>Detectors</h2>\n<p>";
    for (const detection& d : j.found) before += "<b>" + lin::html_escape(d.detector) + "</b>: " + lin::html_escape(d.detail) + "<br>";
    before += "</p>\n";
    if (!f.reproduced) {
      before += "<p>The shrunk run did not fail again when repeated (" + lin::html_escape(f.shrunk.backend) +
                " runs interleave freely): what follows is its failing execution.</p>\n";
    }
    std::string& after = ctx.html_after;
    // A shrunk history is small, but one that could not be shrunk may hold
    // 10^5 operations on the key: the bars draw the failure_window
    // operations nearest the one the detector points at (linearizability's
    // stuck operation), or the last ones when it points at none (a failure
    // is found where its run ended), and say how many they leave out.
    std::uint64_t centre = model::no_stamp;
    for (const detection& d : j.found) {
      if (d.has_key && focus && d.key == *focus && d.at_call != model::no_stamp) {
        centre = d.at_call;
        break;
      }
    }
    const auto [from, count] = window_around(shown, centre, failure_window);
    const std::size_t left_before = from, left_after = shown.size() - from - count;
    const std::vector<model::op_record> drawn(shown.begin() + static_cast<std::ptrdiff_t>(from),
                                              shown.begin() + static_cast<std::ptrdiff_t>(from + count));
    std::uint64_t lo = model::no_stamp, hi = 0;
    for (const model::op_record& r : drawn) {
      lo = std::min(lo, r.call);
      hi = std::max(hi, r.pending() ? r.call + 1 : r.ret);
    }
    if (lo == model::no_stamp) lo = 0;
    const double width = 1200, scale = hi > lo ? width / static_cast<double>(hi - lo) : 1;
    std::map<team_id, int> lane;
    for (const model::op_record& r : drawn) lane.emplace(r.team, static_cast<int>(lane.size()));
    after += "<h2>Operations by team" + (focus ? " on key " + std::to_string(*focus) + " (" + lin::html_escape(focus_reason) + ")" : std::string()) +
             "</h2>\n<style>rect.ok{fill:#9cf}rect.no{fill:#fc9}rect.pending{fill:#ddd}text.bar{font:10px monospace}"
             "pre .torn{background:#fdd}pre .write{color:#a40}</style>\n";
    if (left_before || left_after) {
      after += "<p>The " + std::to_string(count) + " operations nearest " +
               (centre == model::no_stamp ? std::string("the end of the run") : "the one called at stamp " + std::to_string(centre)) +
               "; left out: " + std::to_string(left_before) + " before them and " + std::to_string(left_after) +
               " after them (history.jsonl holds them all).</p>\n";
    }
    after += "<div class=\"scroll\"><svg width=\"" + std::to_string(static_cast<int>(width) + 200) + "\" height=\"" +
             std::to_string(40 * lane.size() + 40) + "\">";
    std::ostringstream bars;
    for (const model::op_record& r : drawn) {
      const double x = 100 + (r.call - lo) * scale;
      const double w = std::max(2.0, ((r.pending() ? hi : r.ret) - r.call) * scale);
      const int y = 20 + 40 * lane[r.team];
      bars << "<rect class=\"" << (r.pending() ? "pending" : r.ok ? "ok" : "no") << "\" x=\"" << x << "\" y=\"" << y
           << "\" width=\"" << w << "\" height=\"16\"><title>team " << r.team << ": " << model::describe(r.op) << " -> "
           << (r.pending() ? "pending" : r.ok ? "true" : "false") << " [" << r.call << ", " << stamp(r.ret) << "]</title></rect>"
           << "<text class=\"bar\" x=\"" << x << "\" y=\"" << y + 28 << "\">" << model::describe(r.op) << "</text>";
    }
    for (const auto& [team, l] : lane) bars << "<text class=\"bar\" x=\"4\" y=\"" << 32 + 40 * l << "\">team " << team << "</text>";
    after += bars.str() + "</svg></div>\n";
    if (!interleaving.empty()) {
      // interleaving.txt: torn reads shaded, writes coloured.
      after += "<h2>Chunk accesses around key " + std::to_string(*focus) +
               ", in the order they happened</h2>\n<p>Shaded: a read of a chunk that writes landed in while it was under way "
               "(a torn read).</p><pre>";
      // At most the last 4,000 lines (interleaving.txt holds them all).
      std::size_t line_count = 0;
      for (char ch : interleaving) line_count += ch == '\n';
      constexpr std::size_t most_lines = 4000;
      std::size_t skip = line_count > most_lines ? line_count - most_lines : 0;
      if (skip) after += "(left out: the first " + std::to_string(skip) + " lines; interleaving.txt holds them all)\n";
      std::istringstream lines(interleaving);
      for (std::string line; std::getline(lines, line);) {
        if (skip) {
          --skip;
          continue;
        }
        const char* cls = line.find("TORN") != std::string::npos ? "torn" : line.rfind("  team ", 0) == 0 ? "write" : nullptr;
        if (cls) after += std::string("<span class=\"") + cls + "\">" + lin::html_escape(line) + "</span>\n";
        else after += lin::html_escape(line) + "\n";
      }
      after += "</pre>\n";
    }
    std::ofstream out(folder / "counterexample.html");
    out << lin::html_report(history, checked, ctx);
    written(out, folder / "counterexample.html");
  }
  return folder.string();
}

}  // namespace gfsl::fuzz
