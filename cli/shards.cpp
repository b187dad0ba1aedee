#include "cli/shards.hpp"

#include <cstdio>
#include <limits>

namespace gfsl::cli {

namespace {

// A whole non-negative number, nothing else.
bool number(const char* text, unsigned long long& out) {
  if (!text || !*text) return false;
  unsigned long long v = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    if (v > (std::numeric_limits<unsigned>::max() - (*p - '0')) / 10) return false;
    v = v * 10 + static_cast<unsigned>(*p - '0');
  }
  out = v;
  return true;
}

std::string var_text(const char* name, const char* value) { return std::string(name) + "=" + (value ? value : "(unset)"); }

}  // namespace

std::string choose_shard(const std::string& text, unsigned shard_count, shard_choice& out,
                         const std::function<const char*(const char*)>& getenv) {
  out = shard_choice{};
  if (text != "auto") {
    if (shard_count) return "--shard-count goes with --shard auto";
    unsigned i = 0, n = 0;
    char extra = 0;
    if (std::sscanf(text.c_str(), "%u/%u%c", &i, &n, &extra) != 2 || n == 0 || i >= n) {
      return "--shard " + text + ": expected i/n with 0 <= i < n, or auto";
    }
    out.shard = i;
    out.shards = n;
    return {};
  }
  const char* task = getenv("SLURM_ARRAY_TASK_ID");
  const char* index = getenv("JOB_COMPLETION_INDEX");
  if (task && index) {
    return std::string("--shard auto: both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set; unset the one that does not "
                       "describe this job, or give --shard i/n");
  }
  if (task) {
    const char* min = getenv("SLURM_ARRAY_TASK_MIN");
    const char* count = getenv("SLURM_ARRAY_TASK_COUNT");
    const char* step = getenv("SLURM_ARRAY_TASK_STEP");
    unsigned long long id = 0, lo = 0, n = 0, st = 1;
    if (!number(task, id)) return "--shard auto: " + var_text("SLURM_ARRAY_TASK_ID", task) + " is not a task number";
    if (!number(min, lo)) return "--shard auto: " + var_text("SLURM_ARRAY_TASK_MIN", min) + " is not a task number (a Slurm job array sets it)";
    if (!shard_count && !number(count, n)) {
      return "--shard auto: " + var_text("SLURM_ARRAY_TASK_COUNT", count) + " is not a task count (a Slurm job array sets it)";
    }
    if (shard_count) {
      if (count && number(count, n) && n != shard_count) {
        return "--shard auto: --shard-count " + std::to_string(shard_count) + " disagrees with " + var_text("SLURM_ARRAY_TASK_COUNT", count);
      }
      n = shard_count;
    }
    if (step && !number(step, st)) return "--shard auto: " + var_text("SLURM_ARRAY_TASK_STEP", step) + " is not a step";
    if (st == 0) st = 1;
    if (n == 0) return "--shard auto: SLURM_ARRAY_TASK_COUNT=0";
    if (id < lo || (id - lo) % st != 0 || (id - lo) / st >= n) {
      return "--shard auto: " + var_text("SLURM_ARRAY_TASK_ID", task) + " is not one of the " + std::to_string(n) +
             " tasks from SLURM_ARRAY_TASK_MIN=" + std::to_string(lo) + " in steps of " + std::to_string(st) +
             " (an array with gaps, such as --array=1,5,9, needs --shard i/n)";
    }
    out.shard = static_cast<unsigned>((id - lo) / st);
    out.shards = static_cast<unsigned>(n);
    out.source = "slurm";
    const char* job = getenv("SLURM_ARRAY_JOB_ID");
    out.detail = std::string(job ? "SLURM_ARRAY_JOB_ID=" + std::string(job) + " " : "") + "SLURM_ARRAY_TASK_ID=" + task;
    return {};
  }
  if (index) {
    unsigned long long i = 0;
    if (!number(index, i)) return "--shard auto: " + var_text("JOB_COMPLETION_INDEX", index) + " is not an index";
    if (!shard_count) {
      return "--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes indexed Job) but not --shard-count: give the Job's "
             "completions, e.g. --shard-count 64";
    }
    if (i >= shard_count) {
      return "--shard auto: " + var_text("JOB_COMPLETION_INDEX", index) + " is not below --shard-count " + std::to_string(shard_count);
    }
    out.shard = static_cast<unsigned>(i);
    out.shards = shard_count;
    out.source = "kubernetes";
    out.detail = std::string("JOB_COMPLETION_INDEX=") + index;
    return {};
  }
  return "--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes indexed Job) "
         "is set; give --shard i/n";
}

}  // namespace gfsl::cli
