// gfsl check --model ordered-map / ordered-upsert-map: a history with range
// queries and snapshot handles, read from either form and decided
// whole by the range checker (linearizability/range_checker.hpp).
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "linearizability/range_checker.hpp"
#include "linearizability/report.hpp"
#include "traces/trace.hpp"

namespace gfsl::cli {

int run_range_check(const std::string& file, const std::string& model, double seconds, const std::string& json, const std::string& html) {
  lin::ranges::range_model m{};
  if (!lin::ranges::parse_range_model(model, m)) {
    std::fprintf(stderr, "gfsl check: --model %s: expected one of %s\n", lin::printable(model).c_str(), lin::ranges::range_model_names());
    return exit_usage;
  }
  lin::ranges::range_history h;
  try {
    h = lin::ranges::read_range_trace(file, m);
  } catch (const traces::trace_error& e) {
    std::fprintf(stderr, "gfsl check: %s\n", lin::printable(e.what()).c_str());
    return exit_usage;
  }
  lin::ranges::range_check_options o;
  o.seconds = seconds;
  const lin::ranges::range_check_result r = lin::ranges::check_range_history(h, o);
  const std::string text = lin::ranges::range_text_report(h, r, file, h.binary ? "binary v3" : "JSON lines v1");
  const bool json_out = is_stdout(json);
  if (json_out) std::printf("%s\n", lin::ranges::range_json_report(h, r, file).c_str());
  else std::fputs(text.c_str(), stdout);
  if (!json.empty() && !json_out) {
    try {
      traces::write_file(json, lin::ranges::range_json_report(h, r, file) + "\n");
    } catch (const traces::trace_error& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "gfsl check: --json %s\n", lin::printable(e.what()).c_str());
      return exit_usage;
    }
    std::printf("json:     %s\n", lin::printable(json).c_str());
  }
  if (!html.empty()) {
    try {
      traces::write_file(html, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gfsl check</title></head><body><pre>" +
                                   lin::html_escape(text) + "</pre></body></html>\n");
    } catch (const traces::trace_error& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "gfsl check: --html %s\n", lin::printable(e.what()).c_str());
      return exit_usage;
    }
    if (!json_out) std::printf("html:     %s\n", lin::printable(html).c_str());
  }
  if (!r.refusal.empty()) {
    std::fflush(stdout);
    if (json_out) std::fprintf(stderr, "gfsl check: %s: %s\n", lin::printable(file).c_str(), lin::printable(r.refusal).c_str());
    return exit_usage;
  }
  switch (r.v) {
    case lin::verdict::linearizable: return exit_ok;
    case lin::verdict::not_linearizable: return exit_violation;
    case lin::verdict::unknown: return exit_undecided;
  }
  return exit_undecided;
}

}  // namespace gfsl::cli
