// What the parts of a running campaign share: the worker loop
// (fuzz/campaign.cpp), the progress line (fuzz/progress.hpp), shrinking
// (fuzz/shrink_failure.hpp) and the failure folder (fuzz/failure_folder.hpp).
// Internal to the campaign: callers see fuzz/campaign.hpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fuzz/campaign.hpp"

namespace gfsl::fuzz {

using steady = std::chrono::steady_clock;

struct shared_state {
  std::mutex lock;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> next_batch{0};
  campaign_result result;
  std::map<std::string, std::uint64_t> signature_runs;  // failing runs by signature
  std::set<std::uint32_t> combinations;                 // sets of rare paths reached together in one run
  std::vector<failure> pending;                         // keep-going: found, written, not yet shrunk
  std::string phase;                                    // what the campaign does now, when not searching (progress line)
  steady::time_point start = steady::now();
  const std::atomic<bool>* cancel = nullptr;
  bool cancelled() const { return cancel && cancel->load(); }
  // A failure's folder or its journal line could not be written: nothing
  // more is shrunk or written (a full disk only fails again).
  bool broken() {
    std::lock_guard<std::mutex> g(lock);
    return !result.write_error.empty() || !result.record_error.empty();
  }
  double elapsed() const { return std::chrono::duration<double>(steady::now() - start).count(); }
};

}  // namespace gfsl::fuzz
