// How a verdict is shown: a text timeline for people at a terminal, one
// self-contained HTML page (no network assets) for a browser, and one JSON
// object for programs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "linearizability/checker.hpp"
#include "model/history.hpp"

namespace gfsl::lin {

// Where the history came from, for the reports' headings.
struct report_context {
  std::string file;
  std::string form;     // "binary v1", "JSON lines v1", "memory"
  std::string backend;  // may be empty
  std::string device;
  std::string clock;
  std::string replay;
  std::vector<std::uint32_t> unrecorded_values;  // ascending: the successful deletes whose values were not compared
  // Which convention applied to successful deletes' values, said once:
  // "compared (...)" or "not compared (...)" (traces::delete_value_convention);
  // empty: not said (a history from memory).
  std::string delete_values;
  bool delete_values_compared = true;
};

// A row per team, each operation an interval numbered 1.. in call order,
// then one line per operation with its answer and stamps. `ops`: indices into
// `history`, all on one key; those also in `set_aside` are shown with their
// answers set aside (drawn with ':' instead of '='). At most `max_ops` are drawn.
std::string timeline(const std::vector<model::op_record>& history, const std::vector<std::uint32_t>& ops,
                     const std::vector<std::uint32_t>& unrecorded_values = {}, const std::vector<std::uint32_t>& set_aside = {},
                     std::size_t width = 72, std::size_t max_ops = 40);

// The verdict and, on a violation, its explanation, as printed by gfsl check.
std::string text_report(const std::vector<model::op_record>& history, const check_result& r, const report_context& ctx);

// The page: the failing key's minimal sub-history, and its history around the
// failure with the longest linearizable prefix drawn as a linearization.
std::string html_report(const std::vector<model::op_record>& history, const check_result& r, const report_context& ctx);

// One JSON object (no newline at the end).
std::string json_report(const std::vector<model::op_record>& history, const check_result& r, const report_context& ctx);

}  // namespace gfsl::lin
