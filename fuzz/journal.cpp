#include "fuzz/journal.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "traces/json.hpp"
#include "traces/trace.hpp"

namespace gfsl::fuzz {

namespace {

namespace json = traces::json;

std::string real(double d) {
  std::string out;
  json::append_real(out, d);
  return out;
}

// The path statistics as JSON members, one name per counter (the names
// report.json and gfsl fuzz merge use).
std::string path_members(const path_stats& p) {
  std::ostringstream j;
  j << "\"splits\":" << p.splits << ",\"merges\":" << p.merges << ",\"zombies_skipped\":" << p.zombies_skipped
    << ",\"zombie_unlinks\":" << p.zombie_unlinks << ",\"head_unlinks\":" << p.head_unlinks << ",\"backtracks\":" << p.backtracks
    << ",\"restarts\":" << p.restarts << ",\"down_ptr_updates\":" << p.down_ptr_updates << ",\"lock_waits\":" << p.lock_waits
    << ",\"raised_keys\":" << p.raised_keys;
  return j.str();
}

// A value as a message shows it, strings quoted (the callers print every
// message escaped).
std::string shown(const json::value& v) {
  switch (v.k) {
    case json::value::kind::null: return "null";
    case json::value::kind::boolean: return v.b ? "true" : "false";
    case json::value::kind::unsigned_integer: return std::to_string(v.u);
    case json::value::kind::real: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", v.r);
      return buf;
    }
    case json::value::kind::string: return "\"" + v.s + "\"";
  }
  return "?";
}

bool path_field(path_stats& p, const std::string& name, std::uint64_t v) {
  std::uint64_t* slot = name == "splits"             ? &p.splits
                        : name == "merges"           ? &p.merges
                        : name == "zombies_skipped"  ? &p.zombies_skipped
                        : name == "zombie_unlinks"   ? &p.zombie_unlinks
                        : name == "head_unlinks"     ? &p.head_unlinks
                        : name == "backtracks"       ? &p.backtracks
                        : name == "restarts"         ? &p.restarts
                        : name == "down_ptr_updates" ? &p.down_ptr_updates
                        : name == "lock_waits"       ? &p.lock_waits
                        : name == "raised_keys"      ? &p.raised_keys
                                                     : nullptr;
  if (!slot) return false;
  *slot = v;
  return true;
}


}  // namespace

std::string header_line(const campaign_header& h) {
  std::ostringstream j;
  j << "{\"type\":\"campaign\",\"version\":1,\"backend\":" << json::quote(h.backend) << ",\"variant\":" << json::quote(h.variant)
    << ",\"mutant\":" << json::quote(h.mutant) << ",\"granularity\":" << json::quote(h.granularity) << ",\"upper\":" << json::quote(h.upper)
    << ",\"subject\":" << json::quote(h.subject)
    << (h.memory != "sc" ? ",\"memory\":" + json::quote(h.memory) : std::string())
    << ",\"seconds\":" << real(h.seconds)
    << ",\"shrink_seconds\":" << real(h.shrink_seconds) << ",\"keep_going\":" << (h.keep_going ? "true" : "false")
    << ",\"max_runs\":" << h.max_runs << ",\"seed\":" << h.seed << ",\"max_ops\":" << h.max_ops << ",\"max_teams\":" << h.max_teams
    << ",\"max_range\":" << h.max_range << ",\"shard\":" << h.shard << ",\"shards\":" << h.shards << ",\"workers\":" << h.workers
    << ",\"devices\":" << json::quote(h.devices) << ",\"device\":" << json::quote(h.device) << ",\"shard_source\":" << json::quote(h.shard_source)
    << "}";
  return j.str();
}

std::string run_line(std::uint64_t batch, std::uint64_t index, std::uint64_t ops, bool undecided, bool failed,
                     const path_stats& paths, std::uint64_t pairs) {
  std::ostringstream j;
  j << "{\"type\":\"run\",\"batch\":" << batch << ",\"case\":" << index << ",\"ops\":" << ops
    << ",\"undecided\":" << (undecided ? "true" : "false") << ",\"failed\":" << (failed ? "true" : "false") << ","
    << path_members(paths);
  // Written only when the run reached a coverage pair: older journals have none.
  if (pairs) j << ",\"pairs\":" << pairs;
  j << "}";
  return j.str();
}

std::string batch_line(std::uint64_t batch, std::uint64_t runs, double seconds) {
  return "{\"type\":\"batch\",\"batch\":" + std::to_string(batch) + ",\"runs\":" + std::to_string(runs) +
         ",\"seconds\":" + real(seconds) + "}";
}

std::string failure_line(const failure_entry& f) {
  return "{\"type\":\"failure\",\"signature\":" + json::quote(f.signature) + ",\"detector\":" + json::quote(f.detector) +
         ",\"detail\":" + json::quote(f.detail) + ",\"dir\":" + json::quote(f.dir) + ",\"replay\":" + json::quote(f.replay) +
         ",\"seconds\":" + real(f.seconds) + ",\"ops\":" + std::to_string(f.ops) + "}";
}

std::string resume_line(std::uint64_t batch, std::uint64_t kept) {
  return "{\"type\":\"resume\",\"batch\":" + std::to_string(batch) + ",\"kept\":" + std::to_string(kept) + "}";
}

std::string end_line(const std::string& reason, double seconds) {
  return "{\"type\":\"end\",\"reason\":" + json::quote(reason) + ",\"seconds\":" + real(seconds) + "}";
}

journal_writer::~journal_writer() {
  if (fd_ >= 0) ::close(fd_);
}

std::string journal_writer::open(const std::string& path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return path + ": cannot open the journal: " + std::strerror(errno);
  return {};
}

std::string journal_writer::create(const std::string& path, const std::string& first_line) {
  if (std::string e = write_file_atomically(path, first_line + "\n"); !e.empty()) return e;
  return open(path);
}

std::string journal_writer::append(const std::string& json_object, bool durable) {
  if (fd_ < 0) return path_ + ": the journal is not open";
  const std::string line = json_object + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return path_ + ": cannot append to the journal: " + std::strerror(errno);
    done += static_cast<std::size_t>(n);
  }
  if (durable && ::fdatasync(fd_) != 0 && errno != EINVAL) return path_ + ": cannot sync the journal: " + std::strerror(errno);
  return {};
}

std::string read_journal(const std::string& path, journal_summary& out) {
  out = journal_summary{};
  // Read in blocks, a line at a time: a journal of millions of runs is not
  // held whole, and a file that is no journal (/dev/zero, a device, a
  // binary) is refused at its first line, however long the file.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!in) return path + ": cannot read the journal: " + std::strerror(errno);
  std::string text;          // the unread part: whole lines, then the start of the next
  std::size_t pos = 0;       // where the next line starts in `text`
  std::uint64_t consumed = 0;  // bytes of the file before text[0]
  bool at_end = false;
  run_totals& open_batch = out.open;  // the runs of the batch in progress
  std::size_t line_no = 0;
  bool have_header = false;
  while (true) {
    std::size_t nl = text.find('\n', pos);
    while (nl == std::string::npos && !at_end) {
      const std::size_t partial = text.size() - pos;
      if (partial > 0 && text[pos] != '{') {
        return path + ": line " + std::to_string(line_no + 1) + ", byte 1: expected '{' (a journal line is a JSON object)";
      }
      if (partial > max_journal_line) {
        return path + ": line " + std::to_string(line_no + 1) + " is longer than " + std::to_string(max_journal_line) +
               " bytes (not a journal line)";
      }
      consumed += pos;
      text.erase(0, pos);
      pos = 0;
      char block[65536];
      const std::size_t n = std::fread(block, 1, sizeof block, in.get());
      if (n == 0) {
        if (std::ferror(in.get())) return path + ": cannot read the journal: " + std::strerror(errno);
        at_end = true;
      }
      text.append(block, n);
      nl = text.find('\n', partial);
    }
    if (pos >= text.size()) break;
    ++line_no;
    if (nl == std::string::npos) {
      // A process killed in the middle of a write leaves its last line torn.
      out.torn_tail = "line " + std::to_string(line_no) + " is incomplete (" + std::to_string(text.size() - pos) +
                      " bytes without a newline, an interrupted write) and was ignored";
      break;
    }
    if (nl - pos > max_journal_line) {
      return path + ": line " + std::to_string(line_no) + " is longer than " + std::to_string(max_journal_line) +
             " bytes (not a journal line)";
    }
    const std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    out.whole_bytes = consumed + pos;
    std::map<std::string, json::value> f;
    json::parse_failure pf;
    if (!json::parse_object(line, pf, [&](const std::string& name, const json::value& v) {
          f[name] = v;
          return std::string();
        })) {
      return path + ": line " + std::to_string(line_no) + ", byte " + std::to_string(pf.offset + 1) + ": " + pf.expected;
    }
    // Each member is read as the kind its writer gives it; the first one of
    // another kind ("seed":-1, "seed":1.5, "keep_going":"yes") refuses the
    // line, once the record has been read (it was taken as 0 or false).
    std::string wrong_kind;
    const auto expect = [&](const char* name, json::value::kind k, const char* what) -> const json::value* {
      const auto it = f.find(name);
      if (it == f.end()) return nullptr;
      const json::value& v = it->second;
      const bool number_for_real = k == json::value::kind::real && v.k == json::value::kind::unsigned_integer;
      if (v.k == k || number_for_real) return &v;
      if (wrong_kind.empty()) wrong_kind = std::string("field \"") + name + "\" is " + shown(v) + " (expected " + what + ")";
      return nullptr;
    };
    auto str = [&](const char* name) {
      const json::value* v = expect(name, json::value::kind::string, "a string");
      return v ? v->s : std::string();
    };
    auto num = [&](const char* name) -> std::uint64_t {
      const json::value* v = expect(name, json::value::kind::unsigned_integer, "a whole number from 0 to 2^64-1");
      return v ? v->u : 0;
    };
    auto dbl = [&](const char* name) -> double {
      const json::value* v = expect(name, json::value::kind::real, "a number");
      return v ? v->r : 0.0;
    };
    auto flag = [&](const char* name) -> bool {
      const json::value* v = expect(name, json::value::kind::boolean, "true or false");
      return v && v->b;
    };
    for (const char* name : {"type", "backend", "variant", "mutant", "granularity", "upper", "subject", "memory", "devices", "device",
                             "shard_source", "signature", "detector", "detail", "dir", "replay", "reason", "status"}) {
      str(name);
    }
    for (const char* name : {"keep_going", "undecided", "failed"}) flag(name);
    for (const char* name : {"seconds", "shrink_seconds"}) dbl(name);
    for (const char* name : {"version", "max_runs", "seed", "max_ops", "max_teams", "max_range", "shard", "shards", "workers", "batch",
                             "case", "ops", "runs", "kept", "worker", "pairs", "splits", "merges", "zombies_skipped", "zombie_unlinks",
                             "head_unlinks", "backtracks", "restarts", "down_ptr_updates", "lock_waits", "raised_keys"}) {
      num(name);
    }
    const std::string type = str("type");
    auto bad = [&](const std::string& why) { return path + ": line " + std::to_string(line_no) + ": " + why; };
    if (!wrong_kind.empty()) return bad(wrong_kind);
    if (line_no == 1 && type != "campaign") return bad("expected the campaign line first (a gfsl fuzz journal), found type \"" + type + "\"");
    if (type == "campaign") {
      if (have_header) return bad("a second campaign line");
      have_header = true;
      if (num("version") != 1) return bad("journal version " + std::to_string(num("version")) + " is not 1");
      campaign_header& h = out.header;
      h.backend = str("backend");
      h.variant = str("variant");
      h.mutant = str("mutant");
      h.granularity = str("granularity");
      // Journals written before the option existed ran the thesis' rule.
      h.upper = f.count("upper") ? str("upper") : "thesis";
      // Journals written before subjects existed fuzzed gfsl.
      h.subject = f.count("subject") ? str("subject") : "gfsl";
      // Journals written before the memory models (and every sc campaign) have none.
      h.memory = f.count("memory") ? str("memory") : "sc";
      h.seconds = dbl("seconds");
      // Journals written before the option existed shrank for 60 s.
      h.shrink_seconds = f.count("shrink_seconds") ? dbl("shrink_seconds") : 60.0;
      h.keep_going = flag("keep_going");
      h.max_runs = num("max_runs");
      h.seed = num("seed");
      h.max_ops = num("max_ops");
      h.max_teams = num("max_teams");
      h.max_range = num("max_range");
      h.shard = static_cast<unsigned>(num("shard"));
      h.shards = static_cast<unsigned>(num("shards"));
      h.workers = static_cast<unsigned>(num("workers"));
      h.devices = str("devices");
      h.device = str("device");
      h.shard_source = str("shard_source");
      if (num("shard") > 0xFFFFFFFFu || num("shards") > 0xFFFFFFFFu || num("workers") > 0xFFFFFFFFu) {
        return bad("shard " + std::to_string(num("shard")) + " of " + std::to_string(num("shards")) + ", " +
                   std::to_string(num("workers")) + " workers: past 2^32-1");
      }
      if (h.shards == 0 || h.shard >= h.shards) return bad("shard " + std::to_string(h.shard) + " of " + std::to_string(h.shards));
    } else if (type == "run") {
      if (num("batch") != out.batches_done) {
        return bad("a run of batch " + std::to_string(num("batch")) + " while batch " + std::to_string(out.batches_done) + " is open");
      }
      run_totals r;
      r.runs = 1;
      r.ops = num("ops");
      r.undecided = flag("undecided");
      for (const auto& [name, v] : f) {
        if (v.k == json::value::kind::unsigned_integer) path_field(r.paths, name, v.u);
      }
      if (f.count("pairs")) r.pairs = num("pairs");
      open_batch += r;
      out.all += r;
    } else if (type == "batch") {
      const std::uint64_t b = num("batch");
      if (b != out.batches_done) {
        return bad("batch " + std::to_string(b) + " completes out of order (expected batch " + std::to_string(out.batches_done) + ")");
      }
      if (open_batch.runs != num("runs")) {
        return bad("batch " + std::to_string(b) + " says " + std::to_string(num("runs")) + " runs, the journal holds " +
                   std::to_string(open_batch.runs));
      }
      out.complete += open_batch;
      open_batch = {};
      ++out.batches_done;
      out.seconds = dbl("seconds");
    } else if (type == "resume") {
      if (num("batch") != out.batches_done) {
        return bad("resumes at batch " + std::to_string(num("batch")) + ", but batch " + std::to_string(out.batches_done) + " is the first unfinished one");
      }
      if (f.count("kept")) {
        // The runs journalled stay counted; the resumed process journals
        // only the runs after them.
        if (num("kept") != open_batch.runs) {
          return bad("resume keeps " + std::to_string(num("kept")) + " runs of batch " + std::to_string(out.batches_done) +
                     ", the journal holds " + std::to_string(open_batch.runs));
        }
      } else {
        // Journals before "kept": the unfinished batch was run again from
        // its start and journalled again, so its earlier runs are dropped.
        out.all = out.complete;
        open_batch = {};
      }
      out.end_reason.clear();
    } else if (type == "failure") {
      failure_entry e;
      e.signature = str("signature");
      e.detector = str("detector");
      e.detail = str("detail");
      e.dir = str("dir");
      e.replay = str("replay");
      e.seconds = dbl("seconds");
      e.ops = num("ops");
      // One failure per signature: a later line is the same failure shrunk
      // (keep-going journals it as found, then shrunk) or found again by a
      // resumed campaign, and replaces the earlier one.
      const auto same = std::find_if(out.failures.begin(), out.failures.end(),
                                     [&](const failure_entry& k) { return k.signature == e.signature; });
      if (same != out.failures.end()) *same = e;
      else out.failures.push_back(e);
    } else if (type == "worker") {
      // A parent's record of how a worker process ended: informational.
    } else if (type == "end") {
      out.end_reason = str("reason");
      out.seconds = std::max(out.seconds, dbl("seconds"));
    } else {
      return bad("unknown record type \"" + type + "\"");
    }
  }
  if (!have_header) return path + ": empty journal (no campaign line)";
  return {};
}

std::string write_file_atomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(traces::replaced_file(path));
  const fs::path temp = target.parent_path() / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return path + ": cannot write: " + std::strerror(errno);
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      return path + ": cannot write: " + why;
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;
  ::close(fd);
  if (!synced || std::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temp.c_str());
    return path + ": cannot replace it: " + why;
  }
  return {};
}

}  // namespace gfsl::fuzz
