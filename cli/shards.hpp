// `--shard auto`: which shard of a campaign this process is, read from the
// scheduler that started it, so that one command line serves every task of a
// Slurm job array or a Kubernetes indexed Job (docs/SCALE.md).
//   Slurm:      SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT
//               (and SLURM_ARRAY_TASK_STEP for --array=0-63:2)
//   Kubernetes: JOB_COMPLETION_INDEX, with the Job's completions given as --shard-count
#pragma once

#include <functional>
#include <string>

namespace gfsl::cli {

struct shard_choice {
  unsigned shard = 0, shards = 1;
  std::string source = "option";  // option | slurm | kubernetes
  std::string detail;             // e.g. "SLURM_ARRAY_JOB_ID=812 SLURM_ARRAY_TASK_ID=5": recorded in the journal
};

// `text` is "i/n" or "auto"; `shard_count` is --shard-count (0: not given).
// `getenv` reads the environment (tests pass their own). Empty on success;
// otherwise one line naming the option or variable at fault.
std::string choose_shard(const std::string& text, unsigned shard_count, shard_choice& out,
                         const std::function<const char*(const char*)>& getenv);

}  // namespace gfsl::cli
