#include "linearizability/report.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "linearizability/ops.hpp"
#include "traces/json.hpp"
#include "traces/trace.hpp"

namespace gfsl::lin {

std::string printable(std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      // U+0080..U+009F: C1 controls (0x9B is a CSI on some terminals).
      const auto d = static_cast<unsigned char>(s[++i]);
      out += "\\u00";
      out += hex[d >> 4];
      out += hex[d & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}


// Text for an element or an attribute value (either quote): markup
// characters as entities, control characters shown as printable() shows them.
std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : printable(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

bool value_known(const std::vector<std::uint32_t>& unrecorded, std::uint32_t i) {
  return !std::binary_search(unrecorded.begin(), unrecorded.end(), i);
}

std::string stamps(const model::op_record& r) {
  std::string s = "call " + std::to_string(r.call);
  if (r.ret == model::no_stamp) return s + ", never returned";
  if (r.st != status::ok) return s + ", " + status_name(r.st) + " at " + std::to_string(r.ret);
  return s + ", return " + std::to_string(r.ret);
}

std::vector<std::uint32_t> sorted_by_call(const std::vector<model::op_record>& h, std::vector<std::uint32_t> ops) {
  std::sort(ops.begin(), ops.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(h[a].call, h[a].ret, a) < std::tie(h[b].call, h[b].ret, b);
  });
  return ops;
}

// Stamps -> positions 0..1 by rank, so that what overlaps shows, whatever
// the distances between stamps.
struct axis {
  std::vector<std::uint64_t> ticks;
  explicit axis(const std::vector<model::op_record>& h, const std::vector<std::uint32_t>& ops, std::uint64_t extra = model::no_stamp) {
    for (std::uint32_t i : ops) {
      ticks.push_back(h[i].call);
      if (h[i].ret != model::no_stamp) ticks.push_back(h[i].ret);
    }
    if (extra != model::no_stamp) ticks.push_back(extra);
    std::sort(ticks.begin(), ticks.end());
    ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
  }
  double at(std::uint64_t s) const {
    if (s == model::no_stamp) return 1.0;
    const auto it = std::lower_bound(ticks.begin(), ticks.end(), s);
    const double rank = static_cast<double>(it - ticks.begin());
    return ticks.size() <= 1 ? 0.0 : rank / static_cast<double>(ticks.size() - 1);
  }
};

std::string describe_record(const std::vector<model::op_record>& h, std::uint32_t i, const std::vector<std::uint32_t>& unrecorded) {
  return describe(h[i].op.key, to_key_op(h[i], i, value_known(unrecorded, i)));
}

}  // namespace

std::string timeline(const std::vector<model::op_record>& h, const std::vector<std::uint32_t>& all_ops,
                     const std::vector<std::uint32_t>& unrecorded, const std::vector<std::uint32_t>& set_aside, std::size_t width,
                     std::size_t max_ops) {
  auto aside = [&](std::uint32_t i) { return std::find(set_aside.begin(), set_aside.end(), i) != set_aside.end(); };
  std::vector<std::uint32_t> ops = sorted_by_call(h, all_ops);
  const bool cut = ops.size() > max_ops;
  if (cut) ops.resize(max_ops);
  const axis ax(h, ops);
  width = std::max<std::size_t>(width, 16);
  auto col = [&](std::uint64_t s) { return static_cast<std::size_t>(ax.at(s) * static_cast<double>(width - 1) + 0.5); };

  struct bar {
    std::size_t from, to;
    std::string text;
  };
  std::map<team_id, std::vector<std::vector<bar>>> rows;  // team -> rows -> bars
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const model::op_record& r = h[ops[k]];
    const std::string label = std::to_string(k + 1);
    const bool open = r.ret == model::no_stamp;
    std::size_t from = col(r.call), to = open ? width + 1 : col(r.ret);
    to = std::max(to, from + label.size() + 1);
    std::string text = "[" + label + std::string(to - from - label.size() - 1, aside(ops[k]) ? ':' : '=') + (open ? ">" : "]");
    if (open) text.replace(text.size() - 3, 2, "..");
    auto& team_rows = rows[r.team];
    bool placed = false;
    for (auto& row : team_rows) {
      if (row.back().to + 1 < from) {
        row.push_back({from, to, text});
        placed = true;
        break;
      }
    }
    if (!placed) team_rows.push_back({bar{from, to, text}});
  }
  std::string out;
  out += "             " + std::string("stamp order ->") + "\n";
  for (const auto& [team, team_rows] : rows) {
    bool first = true;
    for (const auto& row : team_rows) {
      std::string line(width + 4, ' ');
      for (const bar& b : row) {
        if (line.size() < b.from + b.text.size()) line.resize(b.from + b.text.size(), ' ');
        line.replace(b.from, b.text.size(), b.text);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      char head[32];
      std::snprintf(head, sizeof head, first ? "  team %-5u " : "             ", team);
      out += head + line + "\n";
      first = false;
    }
  }
  out += "\n";
  auto desc = [&](std::uint32_t i) {
    if (!aside(i)) return describe_record(h, i, unrecorded);
    const model::op_record& r = h[i];
    std::string s = std::string(model::op_name(r.op.kind)) + "(" + std::to_string(r.op.key);
    if (r.op.kind == op_kind::insert) s += ", " + std::to_string(r.op.value);
    return s + ") -> ? (may or may not have taken effect)";
  };
  std::size_t desc_width = 0;
  for (std::uint32_t i : ops) desc_width = std::max(desc_width, desc(i).size());
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const std::uint32_t i = ops[k];
    std::string d = desc(i);
    d.resize(desc_width, ' ');
    char head[48];
    std::snprintf(head, sizeof head, "  %3zu  team %-5u ", k + 1, h[i].team);
    out += head + d + "  " + stamps(h[i]) + "  (record " + std::to_string(i) + ")\n";
  }
  if (cut) out += "  ... and " + std::to_string(all_ops.size() - max_ops) + " more operations\n";
  return out;
}

std::string prefix_sentence(const std::vector<model::op_record>& h, const counterexample& ex) {
  const std::size_t n = ex.key_history.size();
  if (ex.prefix_empty) return "no prefix of the key's history was found that can be ordered";
  if (ex.prefix_until == never_returned) {
    return "all " + std::to_string(n) + " operations can be ordered when those that never returned are free to take effect or not";
  }
  // Running at the cut: not returned by then. Ended in an error by then: no
  // answer to order, so it may or may not have taken effect, like a pending
  // one, but it is not running.
  std::size_t running = 0, errored = 0;
  for (std::uint32_t i : ex.prefix) {
    if (h[i].ret == model::no_stamp || h[i].ret > ex.prefix_until) {
      ++running;
    } else if (h[i].st != status::ok) {
      ++errored;
    }
  }
  // The next cut after the prefix: the next call on the key, or the end.
  std::uint64_t next_call = never_returned;
  for (std::uint32_t i : ex.key_history) {
    if (h[i].call > ex.prefix_until) next_call = std::min<std::uint64_t>(next_call, h[i].call);
  }
  std::string out = "the " + std::to_string(ex.prefix.size()) + " of " + std::to_string(n) + " operations called up to stamp " +
                    std::to_string(ex.prefix_until) + " can be ordered";
  if (running) {
    out += running == 1 ? " as long as the one of them still running at that stamp counts as pending (its answer not yet given)"
                        : " as long as the " + std::to_string(running) +
                              " of them still running at that stamp count as pending (their answers not yet given)";
  }
  if (errored) {
    out += running ? ", and " : " as long as ";
    out += errored == 1 ? "the one that ended in an error before it may or may not have taken effect"
                        : "the " + std::to_string(errored) + " that ended in an error before it may or may not have taken effect";
  }
  if (next_call == never_returned) {
    if (running) {
      out += running == 1 ? "; with the answer it returns after that stamp, no order exists"
                          : "; with the answers they return after that stamp, no order exists";
    }
  } else {
    out += "; with the operation called at stamp " + std::to_string(next_call) + " added, no order was found";
  }
  return out;
}

std::string undecided_key_lines(const std::vector<key_summary>& undecided, std::uint64_t total) {
  std::string u;
  for (std::size_t i = 0; i < undecided.size() && i < 10; ++i) {
    u += "undecided: key " + std::to_string(undecided[i].key) + " (" + std::to_string(undecided[i].operations) +
         " operations): stopped by " + undecided_why_name(undecided[i].why) + "\n";
  }
  if (total > 10) u += "undecided: ... and " + std::to_string(total - 10) + " more keys (--json lists 100)\n";
  return u;
}

const char* undecided_why_option(undecided_why w) {
  switch (w) {
    case undecided_why::key_time: return "key-seconds";
    case undecided_why::total_time: return "seconds";
    case undecided_why::memory: return "max-memory";
  }
  return "?";
}

namespace {

std::string verdict_text(const check_result& r, const report_context& ctx) {
  std::string out = "gfsl check: " + printable(ctx.file) + " (" + printable(ctx.form);
  if (!ctx.backend.empty()) out += ", backend " + printable(ctx.backend);
  if (!ctx.device.empty()) out += " on " + printable(ctx.device);
  if (!ctx.clock.empty()) out += ", clock " + printable(ctx.clock);
  out += ")\n";
  out += "history:  " + std::to_string(r.operations) + " operations on " + std::to_string(r.keys) + " keys";
  if (r.optional_operations) out += " (" + std::to_string(r.optional_operations) + " pending or ended in an error: they may or may not have taken effect)";
  out += "\n";
  if (!ctx.delete_values.empty()) out += "deletes:  values " + printable(ctx.delete_values) + "\n";
  auto keys_list = [](const std::vector<key_summary>& ks, std::uint64_t total) {
    std::string s;
    for (std::size_t i = 0; i < ks.size() && i < 5; ++i) {
      s += (i ? ", " : "") + std::to_string(ks[i].key) + " (" + std::to_string(ks[i].operations) + " operations)";
    }
    if (total > 5) s += ", ...";
    return s;
  };
  const std::string when = fmt("%.3f", r.seconds) + " s on " + std::to_string(r.threads) + (r.threads == 1 ? " thread" : " threads");
  if (r.v == verdict::linearizable) {
    out += "verdict:  linearizable (every key, checked in " + when + ")\n";
    return out;
  }
  const std::string limits = r.memory_bound_keys == 0                    ? "time limit"
                             : r.memory_bound_keys == r.undecided_keys ? "memory limit (--max-memory)"
                                                                       : "time and memory limits (--seconds, --max-memory)";
  auto undecided_lines = [&] { return undecided_key_lines(r.undecided, r.undecided_keys); };
  if (r.v == verdict::unknown) {
    out += "verdict:  undecided: " + std::to_string(r.undecided_keys) + " of " + std::to_string(r.keys) +
           " keys not decided within the " + limits + ": " + keys_list(r.undecided, r.undecided_keys) +
           (r.undecided_keys < r.keys ? "; no violation in the other keys (" : " (") + when + ")\n";
    return out + undecided_lines();
  }
  if (r.stopped_at_first && r.first_violation) {
    // What else was decided by then depends on the threads' timing: only
    // the first violation is named, so that a report is the same run to run.
    out += "verdict:  NOT LINEARIZABLE: key " + std::to_string(r.first_violation->key) + " (" + std::to_string(r.first_violation->operations) +
           " operations), the first violation found (" + when + "); the check stopped there (gfsl check --all-keys decides every key)\n";
    return out;
  } else {
    out += "verdict:  NOT LINEARIZABLE: " + std::to_string(r.violating_keys) + " of " + std::to_string(r.keys) +
           " keys: " + keys_list(r.violating, r.violating_keys) + " (" + when + ")\n";
  }
  if (r.undecided_keys) out += "          and " + std::to_string(r.undecided_keys) + " keys undecided within the " + limits + "\n" + undecided_lines();
  return out;
}

std::string explanation_text(const std::vector<model::op_record>& h, const check_result& r, const report_context& ctx) {
  std::string out;
  if (r.explain_skipped && r.first_violation) {
    return "\nkey " + std::to_string(r.first_violation->key) + " (" + std::to_string(r.first_violation->operations) +
           " operations): not explained (--explain-seconds 0: no counterexample is shrunk)\n";
  }
  if (!r.example) return out;
  const counterexample& ex = *r.example;
  std::vector<std::uint32_t> shown = ex.minimal;
  shown.insert(shown.end(), ex.set_aside.begin(), ex.set_aside.end());
  out += "\nkey " + std::to_string(ex.key) + " (" + std::to_string(ex.key_history.size()) + " operations): ";
  out += std::to_string(ex.minimal.size()) + (ex.minimal.size() == 1 ? " answer that cannot hold" : " answers that cannot all hold");
  if (ex.from_start) {
    out += ex.window_to == never_returned ? ", from the empty map" : ", from the empty map up to stamp " + std::to_string(ex.window_to);
  } else {
    out += " between stamps " + std::to_string(ex.window_from) + " and " +
           (ex.window_to == never_returned ? std::string("the end") : std::to_string(ex.window_to)) +
           ", whatever the key held at the start";
  }
  out += ":\nno order of these operations, each taking effect between its call and its return, gives these answers.\n";
  out += ex.set_aside.empty() ? "Every other operation on the key in this window is a read, which changes nothing.\n"
                              : "Every other operation on the key in this window is a read, which changes nothing, or a write marked ?,\n"
                                "which may or may not have taken effect (its answer set aside).\n";
  out += ex.one_minimal ? "With any one more answer set aside, some order works.\n\n" : "(The search for a smaller explanation stopped at its time limit.)\n\n";
  out += timeline(h, shown, ctx.unrecorded_values, ex.set_aside);
  out += "\nlongest linearizable prefix of key " + std::to_string(ex.key) + ": " + prefix_sentence(h, ex) + (ex.prefix_empty ? "\n" : "; gfsl check --html FILE draws it\n");
  return out;
}

// Why `check` of a group that ran did not run itself; null when it ran.
const std::string* skipped_why(const invariant_group& g, const std::string& check) {
  for (const auto& [name, why] : g.skipped) {
    if (name == check) return &why;
  }
  return nullptr;
}

// "chunk 5, key 17, event 1234 by team 3, stamp 880": the fields of a
// violation that it has.
std::string violation_where(const invariants::violation& v) {
  std::string s;
  if (!v.chunks.empty()) {
    s += v.chunks.size() == 1 ? "chunk " : "chunks ";
    for (std::size_t i = 0; i < v.chunks.size(); ++i) s += (i ? ", " : "") + std::to_string(v.chunks[i]);
  }
  if (v.key) s += (s.empty() ? "" : ", ") + std::string("key ") + std::to_string(*v.key);
  if (v.event) {
    s += (s.empty() ? "" : ", ") + std::string("event ") + std::to_string(*v.event);
    if (v.team) s += " by team " + std::to_string(*v.team);
  }
  s += (s.empty() ? "" : ", ") + std::string("stamp ") + std::to_string(v.when);
  return s;
}

std::string invariants_text(const std::vector<invariant_group>& groups) {
  std::string out;
  constexpr std::size_t shown_per_check = 5;
  for (const invariant_group& g : groups) {
    const std::string label = g.name + ":" + std::string(g.name.size() < 9 ? 9 - g.name.size() : 1, ' ');
    if (!g.ran) {
      out += label + "not run: " + printable(g.not_run) + "\n";
      out += "  not run   ";
      for (std::size_t i = 0; i < g.checks.size(); ++i) out += (i ? ", " : "") + g.checks[i];
      out += "\n";
      continue;
    }
    std::size_t violated = 0;
    for (const std::string& c : g.checks) violated += std::string(invariant_verdict(g, c)) == "violated" ? 1 : 0;
    out += label + std::to_string(g.checks.size() - g.skipped.size()) + " invariants checked on " + printable(g.subject) + ": " +
           (violated ? std::to_string(violated) + " VIOLATED" : std::string("all hold")) + "\n";
    for (const std::string& c : g.checks) {
      const std::string verdict = invariant_verdict(g, c);
      if (verdict == "not run") {
        out += "  not run   " + c + ": " + printable(*skipped_why(g, c)) + "\n";
        continue;
      }
      if (verdict != "violated") {
        out += "  holds     " + c + "\n";
        continue;
      }
      std::size_t n = 0;
      for (const invariants::violation& v : g.violations) n += v.invariant == c ? 1 : 0;
      out += "  VIOLATED  " + c + " (" + std::to_string(n) + (n == 1 ? " violation" : " violations") + ")\n";
      std::size_t k = 0;
      for (const invariants::violation& v : g.violations) {
        if (v.invariant != c) continue;
        if (k++ == shown_per_check) {
          out += "              ... and " + std::to_string(n - shown_per_check) + " more (gfsl check --json lists them)\n";
          break;
        }
        out += "              " + violation_where(v) + ": " + printable(v.detail);
        if (!v.in_flight.empty()) {
          out += "; in flight:";
          for (const std::string& op : v.in_flight) out += " " + printable(op) + ";";
          out.pop_back();
        }
        out += "\n";
      }
    }
  }
  return out;
}

}  // namespace

const char* invariant_verdict(const invariant_group& g, const std::string& check) {
  if (!g.ran || skipped_why(g, check)) return "not run";
  for (const invariants::violation& v : g.violations) {
    if (v.invariant == check) return "violated";
  }
  return "holds";
}

bool invariants_hold(const std::vector<invariant_group>& groups) {
  for (const invariant_group& g : groups) {
    if (g.ran && !g.violations.empty()) return false;
  }
  return true;
}

std::string text_report_verdict(const check_result& r, const report_context& ctx) { return verdict_text(r, ctx); }

std::string text_report_rest(const std::vector<model::op_record>& h, const check_result& r, const report_context& ctx) {
  return explanation_text(h, r, ctx) + invariants_text(ctx.invariants);
}

std::string text_report(const std::vector<model::op_record>& h, const check_result& r, const report_context& ctx) {
  return verdict_text(r, ctx) + text_report_rest(h, r, ctx);
}

namespace {

// One SVG timeline: a row per team, `ops` as intervals; `mark` outlined;
// `order` (a linearization of some of them) drawn as numbered points
// joined in order; operations not in `in_prefix` greyed when given.
struct svg_options {
  const std::set<std::uint32_t>* mark = nullptr;
  const std::vector<std::uint32_t>* order = nullptr;
  const std::set<std::uint32_t>* in_prefix = nullptr;
  const std::vector<std::uint32_t>* aside = nullptr;
  std::uint64_t cut = model::no_stamp;
  std::uint64_t opens = model::no_stamp;  // the window's start, when the key's state there is unknown
  std::string id;
};

std::string svg_timeline(const std::vector<model::op_record>& h, const std::vector<std::uint32_t>& unsorted,
                         const std::vector<std::uint32_t>& unrecorded, const svg_options& o) {
  const std::vector<std::uint32_t> ops = sorted_by_call(h, unsorted);
  axis ax(h, ops, o.cut);
  if (o.opens != model::no_stamp) {
    ax.ticks.insert(std::lower_bound(ax.ticks.begin(), ax.ticks.end(), o.opens), o.opens);
    ax.ticks.erase(std::unique(ax.ticks.begin(), ax.ticks.end()), ax.ticks.end());
  }
  const double left = 90, row_h = 30, bar_h = 20;
  const double per_tick = std::max(24.0, 1000.0 / static_cast<double>(std::max<std::size_t>(ax.ticks.size(), 1)));
  const double span = std::clamp(static_cast<double>(ax.ticks.size()) * per_tick, 600.0, 8000.0);
  auto x = [&](std::uint64_t s) { return left + ax.at(s) * span; };

  // Rows: a team's operations share a row unless they overlap on screen.
  std::map<team_id, std::vector<double>> row_ends;
  std::map<std::uint32_t, std::pair<team_id, std::size_t>> where;
  for (std::uint32_t i : ops) {
    const double a = x(h[i].call), b = h[i].ret == model::no_stamp ? left + span + 30 : std::max(x(h[i].ret), a + 6);
    auto& ends = row_ends[h[i].team];
    std::size_t row = 0;
    while (row < ends.size() && ends[row] + 2 > a) ++row;
    if (row == ends.size()) ends.push_back(b);
    else ends[row] = b;
    where[i] = {h[i].team, row};
  }
  std::map<team_id, double> team_y;
  double y = 30;
  for (const auto& [team, ends] : row_ends) {
    team_y[team] = y;
    y += row_h * static_cast<double>(ends.size()) + 6;
  }
  const double height = y + 10, width = left + span + 50;

  // States along the linearization, and where each point goes.
  std::map<std::uint32_t, std::pair<std::size_t, std::string>> lin;  // index -> (position, state after)
  std::map<std::uint32_t, double> point_x;
  if (o.order) {
    bool present = false;
    value_type value = 0;
    std::uint64_t t = 0;
    std::map<std::uint64_t, int> same;
    for (std::size_t k = 0; k < o.order->size(); ++k) {
      const std::uint32_t i = (*o.order)[k];
      const model::op_record& r = h[i];
      switch (r.op.kind) {
        case op_kind::insert:
          if (!present) present = true, value = r.op.value;
          break;
        case op_kind::remove: present = false; break;
        case op_kind::contains: break;
      }
      t = std::max(t, r.call);
      // The order covers the whole prefix (10^5 operations and more); only
      // the drawn ones get a point.
      if (!where.count(i)) continue;
      lin[i] = {k + 1, present ? "present, " + std::to_string(value) : "absent"};
      const double base = x(t) + 4.0 * same[t]++;
      const double hi = r.ret == model::no_stamp ? left + span + 20 : x(r.ret);
      point_x[i] = std::min(base, std::max(hi - 2, x(r.call)));
    }
  }

  std::string s = "<svg id=\"" + o.id + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", width) + "\" height=\"" +
                  fmt("%.0f", height) + "\">\n";
  for (const auto& [team, ty] : team_y) {
    s += "<text class=\"team\" x=\"4\" y=\"" + fmt("%.1f", ty + 15) + "\">team " + std::to_string(team) + "</text>\n";
  }
  if (o.cut != model::no_stamp) {
    s += "<line class=\"cut\" x1=\"" + fmt("%.1f", x(o.cut)) + "\" y1=\"8\" x2=\"" + fmt("%.1f", x(o.cut)) + "\" y2=\"" +
         fmt("%.0f", height) + "\"/><text class=\"cutlabel\" x=\"" + fmt("%.1f", x(o.cut) + 4) +
         "\" y=\"16\">prefix ends: later calls not in it</text>\n";
  }
  if (o.opens != model::no_stamp) {
    s += "<line class=\"opens\" x1=\"" + fmt("%.1f", x(o.opens)) + "\" y1=\"8\" x2=\"" + fmt("%.1f", x(o.opens)) + "\" y2=\"" +
         fmt("%.0f", height) + "\"/><text class=\"openslabel\" x=\"" + fmt("%.1f", x(o.opens) + 4) +
         "\" y=\"16\">window opens: the key may hold anything</text>\n";
  }
  for (std::uint32_t i : ops) {
    const model::op_record& r = h[i];
    const auto [team, row] = where[i];
    const double top = team_y[team] + static_cast<double>(row) * row_h;
    const double a = x(r.call);
    const double b = r.ret == model::no_stamp ? left + span + 30 : std::max(x(r.ret), a + 6);
    std::string cls = r.op.kind == op_kind::insert ? "ins" : r.op.kind == op_kind::remove ? "del" : "con";
    const bool set_aside = o.aside && std::find(o.aside->begin(), o.aside->end(), i) != o.aside->end();
    if (r.pending() || set_aside) cls += " pending";
    if (o.mark && o.mark->count(i)) cls += " mark";
    if (o.in_prefix && !o.in_prefix->count(i)) cls += " after";
    std::string desc = describe_record(h, i, unrecorded);
    if (set_aside) desc = desc.substr(0, desc.find(" -> ")) + " -> ?";
    std::string info = "team " + std::to_string(r.team) + ": " + desc + "; " + stamps(r) + "; record " + std::to_string(i);
    if (set_aside) info += "; answer set aside: may or may not have taken effect";
    if (const auto it = lin.find(i); it != lin.end()) info += "; linearized #" + std::to_string(it->second.first) + ", state after: " + it->second.second;
    else if (o.order && (!o.in_prefix || o.in_prefix->count(i))) info += "; did not take effect in this linearization";
    s += "<g class=\"op " + cls + "\" data-info=\"" + html_escape(info) + "\"><rect x=\"" + fmt("%.1f", a) + "\" y=\"" +
         fmt("%.1f", top) + "\" width=\"" + fmt("%.1f", b - a) + "\" height=\"" + fmt("%.0f", bar_h) + "\" rx=\"3\"/>";
    const std::size_t fit = static_cast<std::size_t>(std::max(0.0, (b - a - 6) / 6.6));
    std::string label = desc;
    if (label.size() > fit) label = fit >= 3 ? label.substr(0, fit - 1) + "~" : "";
    if (!label.empty()) s += "<text x=\"" + fmt("%.1f", a + 3) + "\" y=\"" + fmt("%.1f", top + 14) + "\">" + html_escape(label) + "</text>";
    s += "<title>" + html_escape(info) + "</title></g>\n";
  }
  if (o.order && !point_x.empty()) {
    std::string pts;
    for (std::uint32_t i : *o.order) {
      if (!where.count(i)) continue;
      const auto [team, row] = where[i];
      pts += fmt("%.1f", point_x[i]) + "," + fmt("%.1f", team_y[team] + static_cast<double>(row) * row_h + bar_h / 2) + " ";
    }
    s += "<polyline class=\"linpath\" points=\"" + pts + "\"/>\n";
    for (std::uint32_t i : *o.order) {
      if (!where.count(i)) continue;
      const auto [team, row] = where[i];
      const double cy = team_y[team] + static_cast<double>(row) * row_h + bar_h / 2;
      s += "<circle class=\"linpt\" cx=\"" + fmt("%.1f", point_x[i]) + "\" cy=\"" + fmt("%.1f", cy) + "\" r=\"4\"><title>#" +
           std::to_string(lin[i].first) + ": " + html_escape(describe_record(h, i, unrecorded)) + "; state after: " +
           html_escape(lin[i].second) + "</title></circle>";
      s += "<text class=\"linno\" x=\"" + fmt("%.1f", point_x[i] + 3) + "\" y=\"" + fmt("%.1f", cy - 6) + "\">" +
           std::to_string(lin[i].first) + "</text>\n";
    }
  }
  s += "</svg>\n";
  return s;
}

std::string ops_table(const std::vector<model::op_record>& h, const std::vector<std::uint32_t>& unsorted,
                      const std::vector<std::uint32_t>& unrecorded, const std::vector<std::uint32_t>& aside) {
  std::string s = "<table><tr><th>#</th><th>team</th><th>operation</th><th>call</th><th>return</th><th>record</th><th>its answer</th></tr>\n";
  const std::vector<std::uint32_t> ops = sorted_by_call(h, unsorted);
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const model::op_record& r = h[ops[k]];
    s += "<tr><td>" + std::to_string(k + 1) + "</td><td>" + std::to_string(r.team) + "</td><td>" +
         html_escape(describe_record(h, ops[k], unrecorded)) + "</td><td>" + std::to_string(r.call) + "</td><td>" +
         (r.ret == model::no_stamp ? std::string("never") : std::to_string(r.ret)) + "</td><td>" + std::to_string(ops[k]) + "</td><td>" +
         (std::find(aside.begin(), aside.end(), ops[k]) != aside.end() ? "set aside" : "must hold") + "</td></tr>\n";
  }
  return s + "</table>\n";
}

const char* page_style = R"(body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}code{background:#f3f3f3;padding:1px 4px}
.verdict{font-size:16px;font-weight:600;padding:8px 12px;border-radius:4px;display:inline-block}
.good{background:#e3f6e3}.bad{background:#fde2e2}.unknown{background:#fff3cd}
.scroll{overflow-x:auto;border:1px solid #ddd;padding:4px;margin:8px 0}
svg text{font:11px monospace;fill:#111;pointer-events:none}
svg text.team{font:12px system-ui,sans-serif;fill:#444}
.op rect{stroke:#555;stroke-width:1;cursor:pointer}
.ins rect{fill:#cfe3ff}.del rect{fill:#ffd9c7}.con rect{fill:#e6e6e6}
.pending rect{stroke-dasharray:4 3}
.mark rect{stroke:#c00;stroke-width:2.5}
.after rect{fill:#f7f7f7;stroke:#bbb}.after text{fill:#999}
.op.hover rect{stroke:#06c;stroke-width:3}
.cut{stroke:#c00;stroke-dasharray:6 4}.cutlabel{fill:#c00!important}
.opens{stroke:#888;stroke-dasharray:3 3}.openslabel{fill:#666!important}
.linpath{fill:none;stroke:#0a6;stroke-width:1.5;opacity:.7}
.linpt{fill:#0a6;stroke:#fff}.linno{fill:#064!important;font-size:9px!important}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;font-family:monospace}
td{overflow-wrap:anywhere}pre{white-space:pre-wrap;overflow-wrap:anywhere}
#info{position:sticky;bottom:0;background:#fffbe6;border:1px solid #e5d58a;padding:6px 10px;font-family:monospace;min-height:1.4em}
)";

const char* page_script = R"(document.querySelectorAll('.op').forEach(function(g){
g.addEventListener('mouseenter',function(){g.classList.add('hover');document.getElementById('info').textContent=g.getAttribute('data-info');});
g.addEventListener('mouseleave',function(){g.classList.remove('hover');});});
)";

}  // namespace

// The most operations one drawing of the page holds (see html_report).
constexpr std::size_t html_window = 2000;

std::string html_report(const std::vector<model::op_record>& h, const check_result& r, const report_context& ctx) {
  const std::string title = ctx.html_title.empty() ? "gfsl check: " + ctx.file : ctx.html_title;
  std::string s = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                  "</title>\n<style>" + page_style + "</style></head><body>\n";
  s += ctx.html_title.empty() ? "<h1>gfsl check: <code>" + html_escape(ctx.file) + "</code></h1>\n<p>"
                              : "<h1>" + html_escape(title) + "</h1>\n<p>" + html_escape(ctx.file) + ": ";
  s += html_escape(ctx.form);
  if (!ctx.backend.empty()) s += ", backend " + html_escape(ctx.backend);
  if (!ctx.device.empty()) s += " on " + html_escape(ctx.device);
  if (!ctx.clock.empty()) s += ", clock " + html_escape(ctx.clock);
  s += "; " + std::to_string(r.operations) + " operations on " + std::to_string(r.keys) + " keys";
  if (r.optional_operations) s += " (" + std::to_string(r.optional_operations) + " pending or ended in an error)";
  s += "</p>\n";
  if (!ctx.replay.empty()) s += "<p>replay: <code>" + html_escape(ctx.replay) + "</code></p>\n";
  if (!ctx.delete_values.empty()) s += "<p>Successful deletes' values: " + html_escape(ctx.delete_values) + ".</p>\n";
  s += ctx.html_before;
  if (r.v == verdict::linearizable) {
    s += "<p class=\"verdict good\">Linearizable: every key.</p>\n";
  } else if (r.v == verdict::unknown) {
    s += "<p class=\"verdict unknown\">Undecided: " + std::to_string(r.undecided_keys) +
         " keys were not decided within the " + std::string(r.memory_bound_keys ? "time or memory limit" : "time limit") +
         "; no violation in the others.</p>\n";
  } else {
    if (r.stopped_at_first && r.first_violation) {
      s += "<p class=\"verdict bad\">Not linearizable: key " + std::to_string(r.first_violation->key) +
           ", the first violation found; the check stopped there (gfsl check --all-keys decides every key)";
    } else {
      s += "<p class=\"verdict bad\">Not linearizable: " + std::to_string(r.violating_keys) + " of " + std::to_string(r.keys) + " keys";
    }
    if (!r.violating.empty() && !r.stopped_at_first) {
      s += " (";
      for (std::size_t i = 0; i < r.violating.size() && i < 10; ++i) s += (i ? ", " : "") + std::to_string(r.violating[i].key);
      if (r.violating_keys > 10) s += ", ...";
      s += ")";
    }
    s += ".</p>\n";
  }
  if (r.example) {
    const counterexample& ex = *r.example;
    // Where linearizability got stuck: the first operation of the key (by
    // call) outside the longest linearizable prefix.
    const std::vector<std::uint32_t> all = sorted_by_call(h, ex.key_history);
    const std::set<std::uint32_t> in_prefix(ex.prefix.begin(), ex.prefix.end());
    std::size_t first_after = 0;
    while (first_after < all.size() && in_prefix.count(all[first_after])) ++first_after;
    // A key of 10^5 operations whose explanation search stopped early gives
    // a "minimal" sub-history of the whole key: drawn whole it made a page
    // of 99 MB (10^6: not done in 120 s, the drawing is quadratic in it).
    // Only the html_window operations nearest the stuck point are drawn;
    // the page says how many were left out on each side.
    std::vector<std::uint32_t> shown = ex.minimal;
    shown.insert(shown.end(), ex.set_aside.begin(), ex.set_aside.end());
    shown = sorted_by_call(h, shown);
    std::size_t left_before = 0, left_after = 0;
    if (shown.size() > html_window) {
      const std::uint64_t stuck_call = first_after < all.size() ? h[all[first_after]].call : h[shown.back()].call;
      const std::size_t at = static_cast<std::size_t>(
          std::lower_bound(shown.begin(), shown.end(), stuck_call, [&](std::uint32_t i, std::uint64_t c) { return h[i].call < c; }) -
          shown.begin());
      const std::size_t from = std::min(at > html_window / 2 ? at - html_window / 2 : 0, shown.size() - html_window);
      left_before = from;
      left_after = shown.size() - from - html_window;
      shown = std::vector<std::uint32_t>(shown.begin() + static_cast<std::ptrdiff_t>(from),
                                         shown.begin() + static_cast<std::ptrdiff_t>(from + html_window));
    }
    const std::set<std::uint32_t> shown_set(shown.begin(), shown.end());
    std::set<std::uint32_t> mark;
    for (std::uint32_t i : ex.minimal) {
      if (shown_set.count(i)) mark.insert(i);
    }
    std::vector<std::uint32_t> aside_shown;
    for (std::uint32_t i : ex.set_aside) {
      if (shown_set.count(i)) aside_shown.push_back(i);
    }
    s += "<h2>Key " + std::to_string(ex.key) + ": " + std::to_string(ex.minimal.size()) + " answers that cannot all hold</h2>\n<p>";
    if (first_after < all.size()) {
      s += "Linearizability got stuck at record " + std::to_string(all[first_after]) + " (team " +
           std::to_string(h[all[first_after]].team) + ": " + html_escape(describe_record(h, all[first_after], ctx.unrecorded_values)) +
           "), the first operation after the longest linearizable prefix. ";
    }
    if (left_before || left_after) {
      s += "Shown: the " + std::to_string(shown.size()) + " operations nearest that point; left out: " + std::to_string(left_before) +
           " operations before them and " + std::to_string(left_after) + " after them (the text report and the trace hold them all). ";
    }
    if (ex.from_start) {
      s += "From the empty map";
      if (ex.window_to != never_returned) s += " up to stamp " + std::to_string(ex.window_to);
    } else {
      s += "Between stamps " + std::to_string(ex.window_from) + " and " +
           (ex.window_to == never_returned ? std::string("the end") : std::to_string(ex.window_to)) + ", whatever the key held at the start";
    }
    s += ", no order of these operations, each taking effect between its call and its return, gives the answers outlined in red.";
    s += ex.set_aside.empty() ? " Every other operation on the key in this window is a read, which changes nothing."
                              : " Every other operation on the key in this window is a read, which changes nothing, or one of the dashed writes, "
                                "which may or may not have taken effect (their answers are set aside).";
    s += ex.one_minimal ? " With any one more answer set aside, some order works." : " (The search for a smaller explanation stopped at its time limit.)";
    s += " Intervals are drawn by the order of their stamps; dashed ones never returned, ended in an error, or have their answers set aside.</p>\n";
    svg_options mo;
    mo.mark = &mark;
    mo.aside = &aside_shown;
    if (!ex.from_start) mo.opens = ex.window_from;
    mo.id = "minimal";
    s += "<div class=\"scroll\">" + svg_timeline(h, shown, ctx.unrecorded_values, mo) + "</div>\n";
    s += ops_table(h, shown, ctx.unrecorded_values, aside_shown);

    s += "<h2>Key " + std::to_string(ex.key) + ": the longest linearizable prefix</h2>\n";
    std::vector<std::uint32_t> window;
    {
      std::string sentence = prefix_sentence(h, ex);
      sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
      s += "<p>" + html_escape(sentence) + ".";
      if (!ex.prefix_empty) {
        s += " Green points show one order of the prefix. Greyed operations come after it; red outlines mark the minimal "
             "sub-history above.";
      }
    }
    // Around the failure: the end of the prefix and what follows it.
    const std::size_t from = first_after > 40 ? first_after - 40 : 0;
    const std::size_t to = std::min(all.size(), first_after + 20);
    window.assign(all.begin() + static_cast<std::ptrdiff_t>(from), all.begin() + static_cast<std::ptrdiff_t>(to));
    {
      const std::set<std::uint32_t> in_window(window.begin(), window.end());
      for (std::uint32_t i : mark) {
        if (!in_window.count(i)) window.push_back(i);
      }
    }
    if (window.size() < all.size()) {
      s += " Shown: " + std::to_string(window.size()) + " operations around the end of the prefix.";
    }
    s += "</p>\n";
    svg_options po;
    po.mark = &mark;
    po.order = ex.prefix_empty ? nullptr : &ex.prefix_order;
    po.in_prefix = &in_prefix;
    po.cut = ex.prefix_empty || ex.prefix_until == never_returned ? model::no_stamp : ex.prefix_until;
    po.id = "prefix";
    s += "<div class=\"scroll\">" + svg_timeline(h, window, ctx.unrecorded_values, po) + "</div>\n";
  }
  if (r.undecided_keys) {
    s += "<h2>Undecided keys</h2><p>";
    for (std::size_t i = 0; i < r.undecided.size(); ++i) {
      s += (i ? ", " : "") + std::to_string(r.undecided[i].key) + " (" + std::to_string(r.undecided[i].operations) + " operations; stopped by " +
           html_escape(undecided_why_name(r.undecided[i].why)) + ")";
    }
    s += "</p>\n";
  }
  if (!ctx.invariants.empty()) {
    s += "<h2>Invariant checks</h2>\n<table><tr><th>check</th><th>of</th><th>verdict</th><th>violations: where, why</th></tr>\n";
    for (const invariant_group& g : ctx.invariants) {
      for (const std::string& c : g.checks) {
        const std::string verdict = invariant_verdict(g, c);
        s += "<tr><td>" + html_escape(c) + "</td><td>" + html_escape(g.name) + "</td><td class=\"" +
             (verdict == "holds" ? "good" : verdict == "violated" ? "bad" : "unknown") + "\">" + verdict + "</td><td>";
        if (!g.ran) s += html_escape(g.not_run);
        if (g.ran && verdict == "not run") s += html_escape(*skipped_why(g, c));
        for (const invariants::violation& v : g.violations) {
          if (v.invariant == c) s += html_escape(violation_where(v) + ": " + v.detail) + "<br>";
        }
        s += "</td></tr>\n";
      }
    }
    s += "</table>\n";
    for (const invariant_group& g : ctx.invariants) {
      s += "<p>" + html_escape(g.name) + ": " + html_escape(g.ran ? "checked on " + g.subject : "not run: " + g.not_run) + ".</p>\n";
    }
  }
  // The hover box, where there is something to hover: on a page with no
  // drawn operation it only covered the row under it.
  const bool hoverable = s.find("<g class=\"op ") != std::string::npos;
  if (hoverable) s += "<div id=\"info\">Hover an operation for its answer, stamps and the state after it.</div>\n";
  s += ctx.html_after;
  if (hoverable) s += "<script>" + std::string(page_script) + "</script>\n";
  s += "</body></html>\n";
  return s;
}

std::string json_report(const std::vector<model::op_record>& h, const check_result& r, const report_context& ctx) {
  using traces::json::append_string;
  std::string s = "{\"file\":";
  append_string(s, ctx.file);
  s += ",\"form\":";
  append_string(s, ctx.form);
  s += ",\"verdict\":";
  append_string(s, verdict_name(r.v));
  s += ",\"operations\":" + std::to_string(r.operations) + ",\"optional_operations\":" + std::to_string(r.optional_operations) +
       ",\"keys\":" + std::to_string(r.keys) + ",\"violating_keys\":" + std::to_string(r.violating_keys) +
       ",\"undecided_keys\":" + std::to_string(r.undecided_keys) + ",\"memory_bound_keys\":" + std::to_string(r.memory_bound_keys) +
       ",\"seconds\":" + fmt("%.6f", r.seconds) +
       ",\"threads\":" + std::to_string(r.threads);
  if (!ctx.delete_values.empty()) {
    s += ",\"delete_values_compared\":";
    s += ctx.delete_values_compared ? "true" : "false";
    s += ",\"delete_values\":";
    append_string(s, ctx.delete_values);
  }
  auto keys = [&](const char* name, const std::vector<key_summary>& ks) {
    s += ",\"";
    s += name;
    s += "\":[";
    for (std::size_t i = 0; i < ks.size(); ++i) {
      s += (i ? "," : "") + std::string("{\"key\":") + std::to_string(ks[i].key) + ",\"operations\":" + std::to_string(ks[i].operations);
      if (std::string(name) == "undecided") {
        s += ",\"why\":";
        append_string(s, undecided_why_option(ks[i].why));
      }
      s += "}";
    }
    s += "]";
  };
  keys("violating", r.violating);
  keys("undecided", r.undecided);
  s += ",\"unchecked_keys\":" + std::to_string(r.unchecked_keys) + ",\"stopped_at_first\":" + (r.stopped_at_first ? "true" : "false");
  if (r.first_violation) s += ",\"first_violation\":" + std::to_string(r.first_violation->key);
  s += ",\"explained\":";
  s += r.example ? "true" : "false";
  // Every check by name: linearizability, then each invariant with its
  // verdict, its violations (chunks, key, event, team, stamp, reason) or why
  // it did not run.
  s += ",\"invariants_hold\":";
  s += invariants_hold(ctx.invariants) ? "true" : "false";
  s += ",\"checks\":[{\"name\":\"linearizability\",\"of\":\"history\",\"verdict\":";
  append_string(s, verdict_name(r.v));
  s += "}";
  auto optional_number = [](const auto& o) { return o ? std::to_string(*o) : std::string("null"); };
  for (const invariant_group& g : ctx.invariants) {
    for (const std::string& c : g.checks) {
      s += ",{\"name\":";
      append_string(s, c);
      s += ",\"of\":";
      append_string(s, g.name);
      s += ",\"verdict\":";
      append_string(s, invariant_verdict(g, c));
      if (!g.ran || skipped_why(g, c)) {
        s += ",\"why\":";
        append_string(s, g.ran ? *skipped_why(g, c) : g.not_run);
      } else {
        s += ",\"violations\":[";
        bool first = true;
        for (const invariants::violation& v : g.violations) {
          if (v.invariant != c) continue;
          s += first ? "{\"chunks\":[" : ",{\"chunks\":[";
          first = false;
          for (std::size_t i = 0; i < v.chunks.size(); ++i) s += (i ? "," : "") + std::to_string(v.chunks[i]);
          s += "],\"key\":" + optional_number(v.key) + ",\"event\":" + optional_number(v.event) +
               ",\"team\":" + optional_number(v.team) + ",\"stamp\":" + std::to_string(v.when) + ",\"reason\":";
          append_string(s, v.detail);
          s += ",\"in_flight\":[";
          for (std::size_t i = 0; i < v.in_flight.size(); ++i) {
            if (i) s += ",";
            append_string(s, v.in_flight[i]);
          }
          s += "]}";
        }
        s += "]";
      }
      s += "}";
    }
  }
  s += "]";
  if (r.example) {
    const counterexample& ex = *r.example;
    s += ",\"counterexample\":{\"key\":" + std::to_string(ex.key) + ",\"key_operations\":" + std::to_string(ex.key_history.size()) +
         ",\"one_minimal\":" + (ex.one_minimal ? "true" : "false") + ",\"from_start\":" + (ex.from_start ? "true" : "false") +
         ",\"window_from\":" + std::to_string(ex.window_from) + ",\"window_to\":" +
         (ex.window_to == never_returned ? std::string("null") : std::to_string(ex.window_to));
    auto list = [&](const char* name, const std::vector<std::uint32_t>& which) {
      s += ",\"";
      s += name;
      s += "\":[";
      const std::vector<std::uint32_t> ops = sorted_by_call(h, which);
      for (std::size_t k = 0; k < ops.size(); ++k) {
        std::string rec = traces::record_json(h[ops[k]], value_known(ctx.unrecorded_values, ops[k]));
        rec.insert(rec.size() - 1, ",\"record\":" + std::to_string(ops[k]));
        s += (k ? "," : "") + rec;
      }
      s += "]";
    };
    list("operations", ex.minimal);
    list("set_aside", ex.set_aside);
    s += ",\"prefix_operations\":" + std::to_string(ex.prefix.size()) + ",\"prefix_until\":" +
         (ex.prefix_empty ? std::string("null") : ex.prefix_until == never_returned ? std::string("\"end\"") : std::to_string(ex.prefix_until)) +
         ",\"explain_seconds\":" + fmt("%.6f", r.explain_seconds) + "}";
  }
  s += "}";
  return s;
}

}  // namespace gfsl::lin
