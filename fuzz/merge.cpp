#include "fuzz/merge.hpp"

#include "core/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "fuzz/coverage.hpp"
#include "traces/json.hpp"

namespace gfsl::fuzz {

namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string& s) {
  std::string out;
  traces::json::append_string(out, s);
  return out;
}

std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 && c != '\t' ? '?' : c;
    }
  }
  return out;
}

// Text for a terminal: no control byte from a journal reaches it.
std::string printable(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  return s;
}

std::string fixed(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string device_of(const journal_summary& j) { return j.header.device.empty() ? "cpu" : j.header.device; }

struct device_figures {
  run_totals totals;
  double seconds = 0;
  unsigned shards = 0;
};

std::map<std::string, device_figures> per_device(const merged_campaigns& m) {
  std::map<std::string, device_figures> d;
  for (const shard_entry& s : m.shards) {
    device_figures& f = d[device_of(s.journal)];
    f.totals += s.journal.all;
    f.seconds = std::max(f.seconds, s.journal.seconds);
    ++f.shards;
  }
  return d;
}

std::string paths_json(const path_stats& p) {
  std::ostringstream j;
  j << "{\"splits\":" << p.splits << ",\"merges\":" << p.merges << ",\"zombies_skipped\":" << p.zombies_skipped
    << ",\"zombie_unlinks\":" << p.zombie_unlinks << ",\"head_unlinks\":" << p.head_unlinks << ",\"backtracks\":" << p.backtracks
    << ",\"restarts\":" << p.restarts << ",\"down_ptr_updates\":" << p.down_ptr_updates << ",\"lock_waits\":" << p.lock_waits
    << ",\"raised_keys\":" << p.raised_keys << "}";
  return j.str();
}

// The first `most` bytes of a file ("" when it cannot be read).
std::string head_of(const fs::path& p, std::size_t most) {
  std::string text;
  if (std::FILE* f = std::fopen(p.c_str(), "rb")) {
    text.resize(most);
    text.resize(std::fread(text.data(), 1, most, f));
    std::fclose(f);
  }
  return text;
}

// The failure folders in campaign folder `d` that its journal does not list:
// the campaign stopped (a full disk, a kill) between putting the folder in
// place and journalling it. They are failures all the same, read from the
// folder's own report.txt and replay.txt, in name order.
std::vector<failure_entry> unjournalled_failures(const std::string& d, const journal_summary& j) {
  std::set<std::string> listed;
  for (const failure_entry& f : j.failures) listed.insert(fs::path(f.dir).filename().string());
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(d, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("failure-", 0) == 0 && e.is_directory(ec) && !listed.count(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::vector<failure_entry> out;
  for (const std::string& name : names) {
    const fs::path folder = fs::path(d) / name;
    failure_entry f;
    f.dir = folder.string();
    f.signature = name;  // the folder is named after the signature
    std::istringstream report(head_of(folder / "report.txt", 1 << 16));
    for (std::string line; std::getline(report, line);) {
      if (line.rfind("signature: ", 0) == 0 && line.size() > 11) f.signature = line.substr(11);
    }
    f.detector = "unjournalled";
    f.detail = "a failure's folder the journal does not list (the campaign stopped before journalling it): see its report.txt";
    std::string replay = head_of(folder / "replay.txt", 1 << 16);
    if (replay.rfind("gfsl replay ", 0) == 0) replay.erase(0, 12);
    if (const std::size_t nl = replay.find('\n'); nl != std::string::npos) replay.resize(nl);
    f.replay = replay;
    f.seconds = j.seconds;  // found before the campaign stopped
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::uint64_t merged_campaigns::failure_count() const {
  std::uint64_t n = 0;
  for (const failure_group& g : failures) n += g.failures.size();
  return n;
}

std::vector<std::string> worker_dirs(const std::string& dir) {
  std::vector<std::pair<unsigned long, std::string>> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind("worker-", 0) != 0) continue;
    const std::string n = name.substr(7);
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
    found.emplace_back(std::stoul(n), e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [n, p] : found) out.push_back(p);
  return out;
}

std::string merge_campaigns(const std::vector<std::string>& dirs, merged_campaigns& out) {
  out = merged_campaigns{};
  std::vector<std::string> leaves;
  for (const std::string& d : dirs) {
    const fs::path journal = fs::path(d) / journal_file;
    if (!fs::exists(journal)) return d + ": no " + std::string(journal_file) + " (not a gfsl fuzz campaign folder)";
    journal_summary top;
    if (std::string e = read_journal(journal.string(), top); !e.empty()) return e;
    if (top.header.workers > 0) {
      // Its workers are worker-0 .. worker-<N-1>: one whose folder or journal
      // is not there never ran (it could not be started), and its shard was
      // never searched (merge passed 10 of 30 shards without a word).
      std::vector<std::string> never;
      for (unsigned j = 0; j < top.header.workers; ++j) {
        const std::string w = (fs::path(d) / ("worker-" + std::to_string(j))).string();
        if (fs::exists(fs::path(w) / journal_file)) leaves.push_back(w);
        else never.push_back(w);
      }
      if (!never.empty()) {
        const std::string first = fs::path(never.front()).filename().string(), last = fs::path(never.back()).filename().string();
        out.notes.push_back(d + ": " + std::to_string(never.size()) + " of " + std::to_string(top.header.workers) +
                            " workers never ran (" + (never.size() == 1 ? first : first + " ... " + last) +
                            " have no journal): their shards were not searched (gfsl fuzz --resume " + d + " starts them)");
        out.missing.insert(out.missing.end(), never.begin(), never.end());
      }
    } else {
      leaves.push_back(d);
    }
  }
  // A folder given twice (or as itself and through its parent's workers) is
  // one campaign: counted once.
  {
    std::set<std::string> seen;
    std::vector<std::string> once;
    for (const std::string& d : leaves) {
      std::error_code ec;
      const fs::path real = fs::weakly_canonical(fs::path(d), ec);
      if (seen.insert(ec ? d : real.string()).second) once.push_back(d);
      else out.notes.push_back(d + ": given more than once, counted once");
    }
    leaves = std::move(once);
  }
  std::map<std::string, failure_group> groups;
  for (const std::string& d : leaves) {
    shard_entry s;
    s.dir = d;
    if (std::string e = read_journal((fs::path(d) / journal_file).string(), s.journal); !e.empty()) return e;
    const journal_summary& j = s.journal;
    out.totals += j.all;
    out.seconds = std::max(out.seconds, j.seconds);
    out.shard_seconds += j.seconds;
    if (!j.torn_tail.empty()) out.notes.push_back(d + ": " + j.torn_tail);
    if (j.end_reason.empty() || j.end_reason == "interrupted") {
      out.notes.push_back(d + ": did not finish (" + (j.end_reason.empty() ? std::string("killed") : j.end_reason) +
                          "; gfsl fuzz --resume " + d + " continues it)");
    }
    for (failure_entry& f : unjournalled_failures(d, j)) {
      out.notes.push_back(f.dir + ": a failure's folder that " + d + "/" + journal_file +
                          " does not list (the campaign stopped before journalling it); counted as a failure");
      s.journal.failures.push_back(std::move(f));
    }
    for (failure_entry f : j.failures) {
      f.campaign = d;
      failure_group& g = groups[f.signature];
      g.signature = f.signature;
      g.failures.push_back(f);
    }
    out.shards.push_back(std::move(s));
  }
  for (auto& [sig, g] : groups) {
    std::stable_sort(g.failures.begin(), g.failures.end(),
                     [](const failure_entry& a, const failure_entry& b) { return a.seconds < b.seconds; });
    out.failures.push_back(std::move(g));
  }
  return {};
}

namespace {
// The coverage pairs the merged shards reached and missed, by name: scheduled
// host campaigns only (the others make no pairs), of the shards' subject.
bool pairs_counted(const merged_campaigns& m, subject_kind& subject) {
  if (m.shards.empty() || m.shards.front().journal.header.backend != "host") return false;
  const auto parsed = parse_subject(m.shards.front().journal.header.subject);
  subject = parsed ? *parsed : subject_kind::gfsl;
  return true;
}
}  // namespace

std::string merged_json(const merged_campaigns& m) {
  std::ostringstream j;
  j << "{\"campaigns\":" << m.shards.size() << ",\"runs\":" << m.totals.runs << ",\"ops\":" << m.totals.ops
    << ",\"undecided\":" << m.totals.undecided << ",\"seconds\":" << fixed(m.seconds) << ",\"shard_seconds\":" << fixed(m.shard_seconds)
    << ",\"paths\":" << paths_json(m.totals.paths);
  if (subject_kind subject; pairs_counted(m, subject)) {
    std::string reached, never;
    for (int bit : pair_bits(subject)) {
      std::string& into = (m.totals.pairs >> bit & 1u) ? reached : never;
      into += (into.empty() ? "" : ",") + quoted(pair_name(subject, bit));
    }
    j << ",\"pairs_reached\":[" << reached << "],\"pairs_never_reached\":[" << never << "]";
  }
  j << ",\"failures\":" << m.failure_count() << ",\"signatures\":[";
  for (std::size_t i = 0; i < m.failures.size(); ++i) {
    const failure_group& g = m.failures[i];
    const failure_entry& a = g.failures.front();
    j << (i ? "," : "") << "{\"signature\":" << quoted(g.signature) << ",\"count\":" << g.failures.size()
      << ",\"detector\":" << quoted(a.detector) << ",\"detail\":" << quoted(a.detail) << ",\"artifact\":" << quoted(a.dir)
      << ",\"campaign\":" << quoted(a.campaign) << ",\"replay\":" << quoted(a.replay) << ",\"ops\":" << a.ops << "}";
  }
  j << "],\"devices\":[";
  bool first = true;
  for (const auto& [device, f] : per_device(m)) {
    j << (first ? "" : ",") << "{\"device\":" << quoted(device) << ",\"shards\":" << f.shards << ",\"runs\":" << f.totals.runs
      << ",\"ops\":" << f.totals.ops << ",\"seconds\":" << fixed(f.seconds)
      << ",\"ops_per_second\":" << fixed(f.seconds > 0 ? f.totals.ops / f.seconds : 0, 1) << "}";
    first = false;
  }
  j << "],\"shards\":[";
  for (std::size_t i = 0; i < m.shards.size(); ++i) {
    const shard_entry& s = m.shards[i];
    const campaign_header& h = s.journal.header;
    j << (i ? "," : "") << "{\"dir\":" << quoted(s.dir) << ",\"shard\":" << h.shard << ",\"shards\":" << h.shards
      << ",\"seed\":" << h.seed << ",\"source\":" << quoted(h.shard_source) << ",\"device\":" << quoted(device_of(s.journal))
      << ",\"backend\":" << quoted(h.backend) << ",\"variant\":" << quoted(h.variant) << ",\"mutant\":" << quoted(h.mutant)
      << ",\"runs\":" << s.journal.all.runs << ",\"ops\":" << s.journal.all.ops << ",\"seconds\":" << fixed(s.journal.seconds)
      << ",\"batches\":" << s.journal.batches_done << ",\"end\":" << quoted(s.journal.end_reason.empty() ? "killed" : s.journal.end_reason)
      << ",\"failures\":" << s.journal.failures.size() << "}";
  }
  j << "],\"missing_shards\":[";
  for (std::size_t i = 0; i < m.missing.size(); ++i) j << (i ? "," : "") << quoted(m.missing[i]);
  j << "],\"notes\":[";
  for (std::size_t i = 0; i < m.notes.size(); ++i) j << (i ? "," : "") << quoted(m.notes[i]);
  j << "]}";
  return j.str();
}

std::string merged_junit(const merged_campaigns& m) {
  std::ostringstream x;
  std::size_t failing_shards = 0;
  for (const shard_entry& s : m.shards) failing_shards += !s.journal.failures.empty();
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gfsl-fuzz\" tests=\""
    << m.shards.size() + m.missing.size() + m.failures.size() << "\" failures=\"" << failing_shards + m.failures.size() << "\" errors=\""
    << m.missing.size() << "\" time=\"" << fixed(m.seconds) << "\">\n";
  x << "  <testsuite name=\"shards\" tests=\"" << m.shards.size() + m.missing.size() << "\" failures=\"" << failing_shards
    << "\" errors=\"" << m.missing.size() << "\">\n";
  for (const std::string& d : m.missing) {
    x << "    <testcase classname=\"gfsl-fuzz.shards\" name=\"" << xml(d) << " (never ran)\"><error message=\""
      << xml(d + ": no journal: the worker was never started, its shard never searched") << "\"/></testcase>\n";
  }
  for (const shard_entry& s : m.shards) {
    const campaign_header& h = s.journal.header;
    x << "    <testcase classname=\"gfsl-fuzz.shards\" name=\"" << xml(s.dir) << " (shard " << h.shard << "/" << h.shards << ", seed "
      << h.seed << ", " << s.journal.all.runs << " runs)\" time=\"" << fixed(s.journal.seconds) << "\">";
    if (!s.journal.failures.empty()) {
      const failure_entry& f = s.journal.failures.front();
      x << "<failure message=\"" << xml(f.signature + ": " + f.detail) << "\">" << xml("artifact: " + f.dir + "\nreplay: gfsl replay " + f.replay)
        << "</failure>";
    }
    x << "</testcase>\n";
  }
  x << "  </testsuite>\n  <testsuite name=\"signatures\" tests=\"" << m.failures.size() << "\" failures=\"" << m.failures.size() << "\">\n";
  for (const failure_group& g : m.failures) {
    const failure_entry& a = g.failures.front();
    x << "    <testcase classname=\"gfsl-fuzz.signatures\" name=\"" << xml(g.signature) << "\"><failure message=\""
      << xml(std::to_string(g.failures.size()) + " failure(s): " + a.detail) << "\">"
      << xml("artifact: " + a.dir + "\nreplay: gfsl replay " + a.replay) << "</failure></testcase>\n";
  }
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

std::string merged_text(const merged_campaigns& m) {
  std::ostringstream t;
  const path_stats& p = m.totals.paths;
  t << "campaigns: " << m.shards.size() << ", " << m.totals.runs << " runs, " << m.totals.ops << " operations, " << m.totals.undecided
    << " undecided; " << fixed(m.seconds, 1) << " s (longest shard), " << fixed(m.shard_seconds, 1) << " s in all\n";
  t << "rare paths: splits " << p.splits << ", merges " << p.merges << ", zombie unlinks " << p.zombie_unlinks + p.head_unlinks
    << ", backtracks " << p.backtracks << ", restarts " << p.restarts << ", down-pointer updates " << p.down_ptr_updates
    << ", lock waits " << p.lock_waits << "\n";
  if (subject_kind subject; pairs_counted(m, subject)) {
    std::string never;
    std::size_t reached = 0;
    const std::vector<int> bits = pair_bits(subject);
    for (int bit : bits) {
      if (m.totals.pairs >> bit & 1u) ++reached;
      else never += (never.empty() ? "" : ", ") + pair_name(subject, bit);
    }
    t << "coverage pairs: " << reached << " of " << bits.size() << " reached; never reached: " << (never.empty() ? "none" : never) << "\n";
  }
  for (const auto& [device, f] : per_device(m)) {
    t << "device " << printable(device) << ": " << f.shards << " shard(s), " << f.totals.runs << " runs, " << f.totals.ops
      << " operations, " << fixed(f.seconds > 0 ? f.totals.ops / f.seconds : 0, 0) << " ops/s\n";
  }
  t << "failures: " << m.failure_count() << " in " << m.failures.size() << " signature(s)\n";
  for (const failure_group& g : m.failures) {
    const failure_entry& a = g.failures.front();
    t << "  " << printable(g.signature) << " x" << g.failures.size() << ": " << printable(a.detail) << "\n    artifact: "
      << (a.dir.empty() ? std::string("none (its folder could not be written)") : printable(a.dir)) << "\n    replay: gfsl replay "
      << printable(a.replay) << "\n";
  }
  for (const std::string& n : m.notes) t << "note: " << printable(n) << "\n";
  return t.str();
}

}  // namespace gfsl::fuzz
