// How a verdict is shown: a text timeline for people at a terminal, one
// self-contained HTML page (no network assets) for a browser, and one JSON
// object for programs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "invariants/snapshot.hpp"
#include "linearizability/checker.hpp"
#include "model/history.hpp"

namespace gfsl::lin {

// The checks beside linearizability, one group per record a trace may hold
// (invariants/, thesis 4.3): "snapshot", the invariants of the final
// structure; "events", the temporal invariants of the structural event log.
// Each check is named; a group that could not run says why.
struct invariant_group {
  std::string name;                 // "snapshot" or "events"
  std::vector<std::string> checks;  // every invariant of the group, in the order checked
  bool ran = false;
  std::string subject;  // ran: what was checked ("the final structure: 40 chunks, 12 live")
  std::string not_run;  // did not run: why ("the trace holds no snapshot of the final structure ...")
  std::vector<invariants::violation> violations;  // ran: those found (each checker stops at 50)
  // Checks of a group that ran which could not run themselves: (check, why).
  std::vector<std::pair<std::string, std::string>> skipped;
};

// "holds", "violated" or "not run".
const char* invariant_verdict(const invariant_group& g, const std::string& check);
// Whether every check of every group that ran holds.
bool invariants_hold(const std::vector<invariant_group>& groups);

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
  // The invariant checks, in the order reported (empty: none to report).
  std::vector<invariant_group> invariants;
  // The HTML page's heading (empty: "gfsl check: FILE"), and sections of
  // its own that a caller adds after the heading and at the end: a fuzzing
  // campaign's detectors, and its interleaving of chunk accesses.
  std::string html_title;
  std::string html_before;
  std::string html_after;
};

// What the longest linearizable prefix of the counterexample's key is (the
// key not named), in words that hold beside a NOT LINEARIZABLE verdict: the operations called
// up to a stamp can be ordered with those still running then taken as
// pending, and what is left (answers returned later, or the next call)
// could not be ordered with them.
std::string prefix_sentence(const std::vector<model::op_record>& history, const counterexample& ex);

// `s` as text that a terminal shows and does not obey: every control
// character (C0, DEL, and C1 as UTF-8) written as \xNN or \uNNNN, a line
// break as \n. Everything a report prints that came from its input (file
// names, header strings, error excerpts) goes through it, so that a trace
// cannot move the cursor, recolour the screen or start a line of its own.
std::string printable(std::string_view s);
// Text for an HTML element or attribute value (either quote): markup
// characters as entities, control characters as printable() shows them.
std::string html_escape(const std::string& s);

// A row per team, each operation an interval numbered 1.. in call order,
// then one line per operation with its answer and stamps. `ops`: indices into
// `history`, all on one key; those also in `set_aside` are shown with their
// answers set aside (drawn with ':' instead of '='). At most `max_ops` are drawn.
std::string timeline(const std::vector<model::op_record>& history, const std::vector<std::uint32_t>& ops,
                     const std::vector<std::uint32_t>& unrecorded_values = {}, const std::vector<std::uint32_t>& set_aside = {},
                     std::size_t width = 72, std::size_t max_ops = 40);

// "undecided: key K (N operations): stopped by ..." for the first 10 of
// `undecided` (`total` of them in all), as every model's report says it.
std::string undecided_key_lines(const std::vector<key_summary>& undecided, std::uint64_t total);
// What the JSON reports' "why" says: the option that set the bound
// ("key-seconds", "seconds", "max-memory").
const char* undecided_why_option(undecided_why w);

// The verdict and, on a violation, its explanation, then every invariant
// check by name with its verdict, as printed by gfsl check.
std::string text_report(const std::vector<model::op_record>& history, const check_result& r, const report_context& ctx);
// The same in two parts: the header and the verdict (printed as soon as the
// verdict is known), then the explanation and the invariants.
std::string text_report_verdict(const check_result& r, const report_context& ctx);
std::string text_report_rest(const std::vector<model::op_record>& history, const check_result& r, const report_context& ctx);

// The page: the failing key's minimal sub-history, and its history around the
// failure with the longest linearizable prefix drawn as a linearization.
std::string html_report(const std::vector<model::op_record>& history, const check_result& r, const report_context& ctx);

// One JSON object (no newline at the end).
std::string json_report(const std::vector<model::op_record>& history, const check_result& r, const report_context& ctx);

}  // namespace gfsl::lin
