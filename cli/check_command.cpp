// gfsl check: is a recorded history linearizable? gfsl convert: a trace file
// from one form to the other.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "linearizability/checker.hpp"
#include "linearizability/report.hpp"
#include "traces/trace.hpp"

namespace gfsl::cli {

namespace {

struct check_options {
  std::string file;
  double timeout = 0;
  unsigned threads = 0;
  std::string html;
  bool json = false;
  double explain = 20;
};

std::string form_name(const traces::trace& t) {
  return std::string(t.format == traces::trace_format::binary ? "binary v" : "JSON lines v") + std::to_string(t.version);
}

bool write_file(const std::string& path, const std::string& text) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return false;
  if (std::fwrite(text.data(), 1, text.size(), f.get()) != text.size()) return false;
  return std::fclose(f.release()) == 0;
}

int run_check(const check_options& o) {
  traces::trace t;
  try {
    t = traces::read_trace(o.file);
  } catch (const traces::trace_error& e) {
    std::fprintf(stderr, "gfsl check: %s\n", e.what());
    return exit_usage;
  }
  lin::check_options co;
  co.threads = o.threads;
  co.timeout_seconds = o.timeout;
  co.explain_seconds = o.explain;
  const lin::check_result r = lin::check_history(t.history, co, t.unrecorded_values);

  lin::report_context ctx;
  ctx.file = o.file;
  ctx.form = form_name(t);
  ctx.backend = t.header.backend;
  ctx.device = t.header.device;
  ctx.clock = traces::clock_name(t.header.clock);
  ctx.replay = t.header.replay;
  ctx.unrecorded_values = t.unrecorded_values;
  if (o.json) {
    std::printf("%s\n", lin::json_report(t.history, r, ctx).c_str());
  } else {
    std::fputs(lin::text_report(t.history, r, ctx).c_str(), stdout);
  }
  if (!o.html.empty()) {
    if (!write_file(o.html, lin::html_report(t.history, r, ctx))) {
      std::fprintf(stderr, "gfsl check: %s: cannot write the HTML report\n", o.html.c_str());
      return exit_usage;
    }
    if (!o.json) std::printf("html:     %s\n", o.html.c_str());
  }
  switch (r.v) {
    case lin::verdict::linearizable: return exit_ok;
    case lin::verdict::not_linearizable: return exit_violation;
    case lin::verdict::unknown: return exit_undecided;
  }
  return exit_undecided;
}

struct convert_options {
  std::string in, out, to;
};

int run_convert(const convert_options& o) {
  try {
    const traces::trace t = traces::read_trace(o.in);
    traces::trace_format as = t.format == traces::trace_format::binary ? traces::trace_format::json : traces::trace_format::binary;
    if (o.to == "binary") as = traces::trace_format::binary;
    if (o.to == "json") as = traces::trace_format::json;
    traces::write_trace(o.out, t, as);
    std::printf("gfsl convert: %s (%s, %zu records) -> %s (%s)\n", o.in.c_str(), form_name(t).c_str(), t.history.size(), o.out.c_str(),
                as == traces::trace_format::binary ? "binary" : "JSON lines");
    return exit_ok;
  } catch (const traces::trace_error& e) {
    std::fprintf(stderr, "gfsl convert: %s\n", e.what());
    return exit_usage;
  }
}

}  // namespace

command add_check_command(CLI::App& root) {
  auto o = std::make_shared<check_options>();
  CLI::App* c = root.add_subcommand("check", "is a recorded history linearizable? (exit 0 yes, 1 no, 2 bad input, 3 undecided)");
  c->add_option("file", o->file, "trace file, binary or JSON lines (told apart by content)")->required();
  c->add_option("--timeout", o->timeout, "seconds to decide every key; keys left are undecided (exit 3). 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--threads", o->threads, "threads checking keys (0: every core)")->check(CLI::Range(0u, 4096u))->capture_default_str();
  c->add_option("--html", o->html, "also write a self-contained HTML page drawing the failing key");
  c->add_flag("--json", o->json, "print one JSON object instead of the text report");
  c->add_option("--explain-seconds", o->explain, "at most this long to shrink a violation and find the longest linearizable prefix")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  return {c, [o] {
            try {
              return run_check(*o);
            } catch (const std::exception& e) {
              std::fprintf(stderr, "gfsl check: %s\n", e.what());
              return exit_usage;
            }
          }};
}

command add_convert_command(CLI::App& root) {
  auto o = std::make_shared<convert_options>();
  CLI::App* c = root.add_subcommand("convert", "turn a trace file into the other form (binary <-> JSON lines)");
  c->add_option("in", o->in, "trace file, binary or JSON lines")->required();
  c->add_option("out", o->out, "file to write")->required();
  c->add_option("--to", o->to, "the form to write (default: the other one)")->check(CLI::IsMember({"binary", "json"}));
  return {c, [o] {
            try {
              return run_convert(*o);
            } catch (const std::exception& e) {
              std::fprintf(stderr, "gfsl convert: %s\n", e.what());
              return exit_usage;
            }
          }};
}

}  // namespace gfsl::cli
