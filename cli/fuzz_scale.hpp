// How `gfsl fuzz` runs a campaign into its folder: in this process with a
// journal (fuzz/journal.hpp), or as worker processes (--jobs, --devices;
// cli/workers.hpp), each a shard of its own with a folder worker-<j>/, merged
// into one report (fuzz/merge.hpp). `--resume DIR` continues either kind.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "fuzz/campaign.hpp"
#include "fuzz/journal.hpp"

namespace gfsl::cli {

struct scale_options {
  unsigned jobs = 1;           // worker processes on the CPU
  std::string devices;         // --devices as given ("" : not given)
  bool resuming = false;       // the folder holds this campaign's journal: continue it
  bool overwrite = false;      // a new campaign in a folder that holds one: remove the old one first
  std::string worker_device;   // set by a parent for its device workers: the device's CUDA_VISIBLE_DEVICES entry
  std::string shard_source = "option";
  std::string granularity = "any";  // as given (recorded for --resume)
  bool progress = true;
};

// The journal's first line for this campaign.
fuzz::campaign_header header_of(const fuzz::campaign_options& o, const scale_options& s, unsigned workers);

// Runs the campaign into o.out_dir and prints its outcome; returns the exit
// code (0 no failure, 1 a failure, 2 bad usage, 3 interrupted before its
// budget, 4 the journal or a worker failed on its own).
int run_fuzz_campaign(fuzz::campaign_options o, const scale_options& s);

// gfsl fuzz merge.
int merge_fuzz_campaigns(const std::vector<std::string>& dirs, const std::string& json_path, const std::string& junit_path);

}  // namespace gfsl::cli
