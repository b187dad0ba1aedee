#include "fuzz/campaign.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <unistd.h>

#include "model/workload.hpp"
#include "traces/trace.hpp"

namespace gfsl::fuzz {

namespace {

using steady = std::chrono::steady_clock;

struct shared_state {
  std::mutex lock;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> next_batch{0};
  campaign_result result;
  steady::time_point start = steady::now();
  const std::atomic<bool>* cancel = nullptr;
  bool cancelled() const { return cancel && cancel->load(); }
  double elapsed() const { return std::chrono::duration<double>(steady::now() - start).count(); }
};

// Campaigns report failures themselves (with their own replay line), so
// RapidCheck's listener, which prints its own reproduction hints, is left out.
struct quiet_listener final : rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// What the property saw last in this thread: RapidCheck's final
// counterexample is the last case that failed while it shrank.
struct thread_log {
  std::optional<run_config> first_failure, last_failure;
  std::vector<detection> first_found;
  double first_at = 0;
};

void print_progress(const campaign_options& o, shared_state& s, bool tty) {
  const campaign_result& r = s.result;
  const double t = std::max(s.elapsed(), 1e-9);
  std::fprintf(stderr,
               "%s[fuzz %s%s] %6.1f s  %llu runs (%.1f/s)  %llu ops (%.0f/s)  splits %llu merges %llu zombie-unlinks %llu "
               "backtracks %llu restarts %llu down-ptr %llu   %s",
               tty ? "\r" : "", o.backend.c_str(), o.mut == mutant::none ? "" : (" " + std::string(mutant_name(o.mut))).c_str(), t,
               (unsigned long long)r.runs, r.runs / t, (unsigned long long)r.ops, r.ops / t,
               (unsigned long long)r.paths.splits, (unsigned long long)r.paths.merges,
               (unsigned long long)(r.paths.zombie_unlinks + r.paths.head_unlinks), (unsigned long long)r.paths.backtracks,
               (unsigned long long)r.paths.restarts, (unsigned long long)r.paths.down_ptr_updates, tty ? "" : "\n");
  std::fflush(stderr);
}

void worker(const campaign_options& o, shared_state& s) {
  thread_log log;
  const auto gen = gen_run(o.limits, o.backend, o.mut, o.var);
  while (!s.stop.load()) {
    const std::uint64_t b = s.next_batch.fetch_add(1);
    rc::detail::TestParams params;
    params.seed = model::mix64(o.seed * 0x9E3779B97F4A7C15ull + b * o.shards + o.shard);
    params.maxSuccess = o.runs_per_batch;
    params.maxSize = 100;
    bool in_shrink = false, cut_short = false;
    std::uint64_t case_index = 0;
    const auto property = [&]() {
      const run_config c = *gen;
      // Once a failure is found, the other cases of the batch are RapidCheck
      // shrinking it: let them run even past the time bound.
      if (!in_shrink && (s.stop.load() || s.cancelled() || s.elapsed() > o.seconds)) {
        cut_short = true;
        return;
      }
      // Past the shrinking budget (or once cancelled) every further candidate
      // passes, so RapidCheck settles on the smallest failure found so far.
      if (in_shrink && (s.elapsed() > log.first_at + o.shrink_seconds || s.cancelled())) return;
      judgement j = execute_and_judge(c, o.judge);
      if (!in_shrink && o.on_run) o.on_run(b, case_index++, c, j);
      {
        std::lock_guard<std::mutex> g(s.lock);
        if (!in_shrink) {
          ++s.result.runs;
          s.result.ops += c.w.ops + j.run.prefill.size();
          s.result.paths += j.run.report.paths;
          s.result.undecided += j.undecided;
        }
      }
      if (j.failed()) {
        if (!in_shrink) {
          log.first_failure = c;
          log.first_found = j.found;
          log.first_at = s.elapsed();
        }
        in_shrink = true;
        log.last_failure = c;
        RC_FAIL(j.found.front().detector + ": " + j.found.front().detail);
      }
    };
    rc::detail::TestMetadata meta;
    meta.id = "gfsl-fuzz";
    quiet_listener listener;
    const rc::detail::TestResult result = rc::detail::checkTestable(property, meta, params, listener);
    const bool failed = result.template is<rc::detail::FailureResult>() && log.last_failure;
    // A batch that failed is not complete until its failure is written
    // (the caller records that): interrupted before, it is run again.
    if (o.on_batch && !failed && !cut_short) o.on_batch(b, case_index);
    if (s.cancelled()) s.result.interrupted = true;
    if (failed) {
      std::lock_guard<std::mutex> g(s.lock);
      if (!s.result.found) {
        failure f;
        f.first = *log.first_failure;
        f.shrunk = *log.last_failure;
        f.first_found = log.first_found;
        f.seconds_to_first = log.first_at;
        f.verdict = execute_and_judge(f.shrunk, o.judge);
        s.result.found = std::move(f);
      }
      s.stop = true;
      return;
    }
    if (s.elapsed() > o.seconds || s.cancelled()) return;
    {
      std::lock_guard<std::mutex> g(s.lock);
      if (o.max_runs && s.result.runs + o.runs_before >= o.max_runs) return;
    }
  }
}

std::string json_escape(const std::string& in) {
  std::string out;
  for (char ch : in) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string stamp(std::uint64_t s) { return s == model::no_stamp ? "null" : std::to_string(s); }

}  // namespace

campaign_result run_campaign(const campaign_options& o) {
  shared_state s;
  s.start -= std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(o.seconds_before));
  s.next_batch = o.first_batch;
  s.cancel = o.cancel;
  std::thread progress;
  std::atomic<bool> done{false};
  // On a terminal the line is redrawn every second; in a log, one line every
  // ten seconds.
  const bool tty = isatty(2) != 0;
  if (o.progress) {
    progress = std::thread([&] {
      while (!done.load()) {
        {
          std::lock_guard<std::mutex> g(s.lock);
          print_progress(o, s, tty);
        }
        for (int i = 0; i < (tty ? 10 : 100) && !done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  worker(o, s);
  done = true;
  if (progress.joinable()) progress.join();
  s.result.seconds = s.elapsed();
  if (o.progress) {
    print_progress(o, s, tty);
    if (tty) std::fprintf(stderr, "\n");
  }
  if (s.result.found && !o.out_dir.empty()) {
    // Written aside and renamed into place: an interrupted campaign leaves
    // a failure's folder whole or not at all.
    namespace fs = std::filesystem;
    const fs::path staging = fs::path(o.out_dir) / (".staging-" + std::to_string(getpid()));
    try {
      fs::remove_all(staging);
      const fs::path written = write_failure(staging.string(), *s.result.found, o);
      const fs::path final_dir = fs::path(o.out_dir) / written.filename();
      fs::remove_all(final_dir);
      fs::rename(written, final_dir);
      fs::remove_all(staging);
      s.result.found->dir = final_dir.string();
    } catch (const fs::filesystem_error& e) {
      // A full disk or a removed folder: the failure is still reported
      // (replay line, detectors), without its folder.
      std::fprintf(stderr, "gfsl fuzz: %s: cannot write the failure's folder: %s\n", o.out_dir.c_str(), e.code().message().c_str());
      s.result.found->dir.clear();
    }
  }
  return s.result;
}

std::string write_failure(const std::string& dir, const failure& f, const campaign_options& o) {
  namespace fs = std::filesystem;
  const judgement& j = f.verdict;
  std::string id = "failure-" + (j.found.empty() ? std::string("flaky") : j.found.front().detector);
  std::replace(id.begin(), id.end(), ':', '-');
  const fs::path folder = fs::path(dir) / id;
  fs::create_directories(folder);
  const std::vector<model::op_record> history = model::full_history(j.run.prefill, j.run.records);
  std::optional<key_type> focus;
  for (const detection& d : j.found) {
    if (d.has_key && !focus) focus = d.key;
  }
  std::vector<model::op_record> shown;
  for (const model::op_record& r : history) {
    if (!focus || r.op.key == *focus) shown.push_back(r);
  }

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
  variant_field.s = variant_name(f.shrunk.var);
  header.extra.push_back(variant_field);
  traces::write_trace_json((folder / "history.jsonl").string(), header, history);
  std::ofstream(folder / "replay.txt") << "gfsl replay " << replay << "\n";
  // What the detectors said, and the timeline of the operations involved.
  {
    std::ofstream rep(folder / "report.txt");
    rep << "run (shrunk): " << f.shrunk.describe() << "\n";
    rep << "run (as first found, after " << f.seconds_to_first << " s): " << f.first.describe() << "\n";
    rep << "operations: " << f.shrunk.w.ops << " concurrent + " << j.run.prefill.size() << " prefill, " << f.shrunk.w.teams
        << " teams\n";
    for (const detection& d : j.found) rep << d.detector << ": " << d.detail << "\n";
    if (j.found.empty()) rep << "the shrunk run passed when judged again (a failure that depends on timing)\n";
  }
  {
    // Timeline: one row per team, operations in call order with their
    // intervals; only the key found not linearizable, when there is one
    // (history.jsonl has everything).
    std::ofstream t(folder / "timeline.txt");
    if (focus) t << "key " << *focus << " (not linearizable):\n";
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
  }
  {
    // A self-contained page: intervals as bars, one lane per team.
    std::ofstream html(folder / "counterexample.html");
    std::uint64_t lo = model::no_stamp, hi = 0;
    for (const model::op_record& r : shown) {
      lo = std::min(lo, r.call);
      hi = std::max(hi, r.pending() ? r.call + 1 : r.ret);
    }
    if (lo == model::no_stamp) lo = 0;
    const double width = 1200, scale = hi > lo ? width / static_cast<double>(hi - lo) : 1;
    std::map<team_id, int> lane;
    for (const model::op_record& r : shown) lane.emplace(r.team, static_cast<int>(lane.size()));
    html << "<!doctype html><html><head><meta charset=\"utf-8\"><title>gfsl counterexample</title>"
         << "<style>body{font:13px sans-serif}rect.ok{fill:#9cf}rect.no{fill:#fc9}rect.pending{fill:#ddd}"
         << "text{font:10px monospace}</style></head><body><h3>" << json_escape(f.shrunk.describe()) << "</h3><p>";
    for (const detection& d : j.found) html << "<b>" << d.detector << "</b>: " << json_escape(d.detail) << "<br>";
    html << "</p><svg width=\"" << width + 200 << "\" height=\"" << 40 * lane.size() + 40 << "\">";
    for (const model::op_record& r : shown) {
      const double x = 100 + (r.call - lo) * scale;
      const double w = std::max(2.0, ((r.pending() ? hi : r.ret) - r.call) * scale);
      const int y = 20 + 40 * lane[r.team];
      html << "<rect class=\"" << (r.pending() ? "pending" : r.ok ? "ok" : "no") << "\" x=\"" << x << "\" y=\"" << y
           << "\" width=\"" << w << "\" height=\"16\"><title>team " << r.team << ": " << model::describe(r.op) << " -> "
           << (r.pending() ? "pending" : r.ok ? "true" : "false") << " [" << r.call << ", " << stamp(r.ret) << "]</title></rect>"
           << "<text x=\"" << x << "\" y=\"" << y + 28 << "\">" << model::describe(r.op) << "</text>";
    }
    for (const auto& [team, l] : lane) html << "<text x=\"4\" y=\"" << 32 + 40 * l << "\">team " << team << "</text>";
    html << "</svg></body></html>\n";
  }
  return folder.string();
}

std::string campaign_json(const campaign_options& o, const campaign_result& r) {
  std::ostringstream j;
  j << "{\"backend\":\"" << o.backend << "\",\"variant\":\"" << variant_name(o.var) << "\",\"mutant\":\"" << mutant_name(o.mut) << "\",\"shard\":" << o.shard
    << ",\"shards\":" << o.shards << ",\"seed\":" << o.seed << ",\"seconds\":" << r.seconds << ",\"runs\":" << r.runs
    << ",\"ops\":" << r.ops << ",\"undecided\":" << r.undecided << ",\"splits\":" << r.paths.splits
    << ",\"merges\":" << r.paths.merges << ",\"zombie_unlinks\":" << r.paths.zombie_unlinks + r.paths.head_unlinks
    << ",\"backtracks\":" << r.paths.backtracks << ",\"restarts\":" << r.paths.restarts
    << ",\"down_ptr_updates\":" << r.paths.down_ptr_updates << ",\"failures\":[";
  if (r.found) {
    const failure& f = *r.found;
    j << "{\"detector\":\"" << (f.verdict.found.empty() ? "flaky" : json_escape(f.verdict.found.front().detector))
      << "\",\"detail\":\"" << (f.verdict.found.empty() ? "" : json_escape(f.verdict.found.front().detail))
      << "\",\"seconds\":" << f.seconds_to_first << ",\"ops\":" << f.shrunk.w.ops << ",\"teams\":" << f.shrunk.w.teams
      << ",\"dir\":\"" << json_escape(f.dir) << "\",\"replay\":\""
      << json_escape(o.replay_line ? o.replay_line(f.shrunk) : f.shrunk.describe()) << "\"}";
  }
  j << "]}";
  return j.str();
}

}  // namespace gfsl::fuzz
