// `gfsl fuzz merge`: the campaigns of many shards (Slurm array tasks,
// Kubernetes Job indexes, --jobs and --devices workers) as one: totals, the
// rare paths summed, figures per device, and failures grouped by signature
// with one artifact each, as text, JSON and JUnit XML. It reads each
// campaign's journal, so a shard that was killed counts every run it finished.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fuzz/journal.hpp"

namespace gfsl::fuzz {

struct shard_entry {
  std::string dir;
  journal_summary journal;
};

struct failure_group {
  std::string signature;
  std::vector<failure_entry> failures;  // the first is the group's artifact (the earliest found)
};

struct merged_campaigns {
  std::vector<shard_entry> shards;
  run_totals totals;
  double seconds = 0;        // the longest shard (shards run side by side)
  double shard_seconds = 0;  // the shards' times added up
  std::vector<failure_group> failures;
  std::vector<std::string> notes;  // torn journal tails, shards that did not finish
  // The worker folders a campaign of worker processes should have and has
  // no journal in (a worker that could not be started): shards never searched.
  std::vector<std::string> missing;
  std::uint64_t failure_count() const;
};

// Reads the journals of `dirs`; a folder of worker processes (--jobs,
// --devices) stands for its worker-<j>/ folders, worker-0 to worker-<N-1>
// for the N workers its journal names: one without a journal is `missing`
// (and named in a note), not an error. Empty on success; otherwise one line
// naming the folder.
std::string merge_campaigns(const std::vector<std::string>& dirs, merged_campaigns& out);

std::string merged_json(const merged_campaigns& m);
std::string merged_junit(const merged_campaigns& m);
std::string merged_text(const merged_campaigns& m);

// The worker folders of a campaign run by worker processes, in worker order.
std::vector<std::string> worker_dirs(const std::string& dir);

}  // namespace gfsl::fuzz
