// A campaign's journal: one JSON object per line, appended as the campaign
// goes, so that an interrupted campaign (SIGINT, SIGTERM, SIGKILL, a lost
// machine) keeps every run that ended and `gfsl fuzz --resume` continues it.
//
//   {"type":"campaign", ...the options...}          first line: what `--resume` runs again
//   {"type":"run","batch":B,"case":I,"ops":...}     each run's outcome, as it ends
//   {"type":"batch","batch":B,"runs":N,...}         batch B is complete and passed (resumption starts after it)
//   {"type":"failure","signature":...,"dir":...}    a failure, once its artifact folder is in place (or could not
//                                                    be: "dir" is then ""), before anything prints it; a later line of
//                                                    the same signature replaces it (keep-going: the shrunk form of
//                                                    the failure journalled as found; a resumed campaign finding it again)
//   {"type":"end","reason":"budget"|"failure"|"interrupted",...}
//   {"type":"resume","batch":B,"kept":K}             --resume: the K runs of the unfinished batch B stay counted; the
//                                                    batch is run again from its start, its first K runs not journalled again
//   {"type":"resume","batch":B}                      (journals before "kept") the runs of batch B were dropped and run again
//   {"type":"worker","worker":J,"status":...}        a campaign of worker processes: how worker J ended
//
// A line is written with one write(2) on a file opened O_APPEND, so a killed
// process leaves at most its last line torn; the reader ignores a last line
// without its newline and says so. Batches are the unit of resumption: a
// batch's RapidCheck seed is fixed (campaign.hpp), so the batch that was in
// progress is run again from its start, and the runs it had journalled are
// run again without being journalled or counted twice: a resumed campaign
// never has fewer runs than the one that was stopped, even when its time
// budget was spent already.
//
// A journal line is at most max_journal_line bytes; the reader stops at the
// first line that is longer or does not start a JSON object, so a file that
// is not a journal (/dev/zero, a binary) is refused at once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/gfsl/stats.hpp"

namespace gfsl::fuzz {

inline constexpr const char* journal_file = "journal.jsonl";
inline constexpr const char* report_file = "report.json";
inline constexpr std::size_t max_journal_line = 1 << 20;

// The options that define a campaign, as its first journal line records them.
struct campaign_header {
  std::string backend = "host", variant = "robust", mutant = "none", granularity = "any";
  std::string upper = "thesis";   // the upper levels' rule: thesis, reraise, mixed (fuzz/generators.hpp)
  std::string subject = "gfsl";   // the structure under test (core/subject.hpp); variant and mutant are its names
  std::string memory = "sc";      // what the runs' loads see (exec/sched/memory_model.hpp); written when not sc
  double seconds = 60;
  double shrink_seconds = 60;     // shrinking each failure stops after this long
  bool keep_going = false;        // --keep-going: failures grouped by signature, the campaign goes on
  std::uint64_t max_runs = 0, seed = 1;
  std::uint64_t max_ops = 0, max_teams = 0, max_range = 0;
  unsigned shard = 0, shards = 1;
  unsigned workers = 0;           // worker processes whose folders worker-<j>/ hold the campaign (0: this folder does)
  std::string devices;            // "--devices" as given ("" : none)
  std::string device;             // the device a worker ran on (its CUDA_VISIBLE_DEVICES), "" otherwise
  std::string shard_source;       // "option", "slurm", "kubernetes"
};

struct failure_entry {
  std::string signature;          // what groups equal failures across shards (the detectors that fired)
  std::string detector, detail, dir, replay;
  double seconds = 0;
  std::uint64_t ops = 0;
  std::string campaign;           // the folder it came from (filled by readers)
};

struct run_totals {
  std::uint64_t runs = 0, ops = 0, undecided = 0;
  path_stats paths;
  std::uint64_t pairs = 0;  // coverage pairs reached (bits of sched::outcome::pairs, fuzz/coverage.hpp)
  run_totals& operator+=(const run_totals& o) {
    runs += o.runs, ops += o.ops, undecided += o.undecided;
    paths += o.paths;
    pairs |= o.pairs;
    return *this;
  }
};

// What a journal says, read back.
struct journal_summary {
  campaign_header header;
  run_totals all;                                   // every run journalled (what the campaign did)
  run_totals complete;                              // the runs of complete batches (where --resume starts from)
  std::uint64_t batches_done = 0;                   // the campaign's batches 0 .. batches_done-1 are complete
  run_totals open;                                  // the runs journalled of batch batches_done, not yet complete
  std::uint64_t whole_bytes = 0;                    // the journal's length up to its last whole line
  double seconds = 0;                               // campaign time at the last batch or end line
  std::vector<failure_entry> failures;
  std::string end_reason;                           // "" : the campaign did not end (interrupted hard)
  std::string torn_tail;                            // one line when a torn last line was ignored
};

// Empty on success; otherwise one line naming the file, the line and what is
// wrong with it.
std::string read_journal(const std::string& path, journal_summary& out);

// Appends lines to a journal (the file is created when missing).
class journal_writer {
 public:
  journal_writer() = default;
  journal_writer(const journal_writer&) = delete;
  journal_writer& operator=(const journal_writer&) = delete;
  ~journal_writer();
  // Empty on success; otherwise one line.
  std::string open(const std::string& path);
  // A new journal holding `first_line` (its campaign line), then open for
  // appending: written to a temporary file and renamed into place, so that a
  // journal that exists always holds its campaign line (a campaign killed
  // between creating its journal and writing that line left an empty one,
  // which neither merge nor --resume could read).
  std::string create(const std::string& path, const std::string& first_line);
  // One complete line (the newline is added); `durable` also waits for the
  // disk (batch ends, failures, the end), so a lost machine keeps them too.
  // Empty on success; otherwise one line (a full disk, a removed folder).
  std::string append(const std::string& json_object, bool durable = false);
  bool is_open() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string path_;
};

// The lines of each record type.
std::string header_line(const campaign_header& h);
std::string run_line(std::uint64_t batch, std::uint64_t index, std::uint64_t ops, bool undecided, bool failed,
                     const path_stats& paths, std::uint64_t pairs = 0);
std::string batch_line(std::uint64_t batch, std::uint64_t runs, double seconds);
std::string failure_line(const failure_entry& f);
std::string end_line(const std::string& reason, double seconds);
std::string resume_line(std::uint64_t batch, std::uint64_t kept);

// Writes `content` to `path` through a temporary file in the same folder and
// a rename, so that a reader sees the old file or the new one, never a part.
// Empty on success; otherwise one line.
std::string write_file_atomically(const std::string& path, const std::string& content);

}  // namespace gfsl::fuzz
