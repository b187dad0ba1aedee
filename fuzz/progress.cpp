#include "fuzz/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include <unistd.h>

namespace gfsl::fuzz {

void print_progress(const campaign_options& o, shared_state& s, bool tty) {
  const campaign_result& r = s.result;
  const double t = std::max(s.elapsed(), 1e-9);
  const std::string bug = mutant_label(o.limits.subject, o.choice);
  const std::string who = (o.limits.subject == subject_kind::gfsl ? "" : std::string(subject_name(o.limits.subject)) + " ") + o.backend +
                          (bug == "none" ? "" : " " + bug);
  if (!s.phase.empty()) {
    std::fprintf(stderr, "%s[fuzz %s] %6.1f s  %llu runs searched; %s%s", tty ? "\r\033[K" : "", who.c_str(), t,
                 (unsigned long long)r.runs, s.phase.c_str(), tty ? "" : "\n");
    std::fflush(stderr);
    return;
  }
  std::fprintf(stderr,
               "%s[fuzz %s] %6.1f s  %llu runs (%.1f/s)  %llu ops (%.0f/s)  splits %llu merges %llu zombie-unlinks %llu "
               "backtracks %llu restarts %llu down-ptr %llu   %s",
               tty ? "\r" : "", who.c_str(), t, (unsigned long long)r.runs, r.runs / t, (unsigned long long)r.ops, r.ops / t,
               (unsigned long long)r.paths.splits, (unsigned long long)r.paths.merges,
               (unsigned long long)(r.paths.zombie_unlinks + r.paths.head_unlinks), (unsigned long long)r.paths.backtracks,
               (unsigned long long)r.paths.restarts, (unsigned long long)r.paths.down_ptr_updates, tty ? "" : "\n");
  std::fflush(stderr);
}

void enter_phase(const campaign_options& o, shared_state& s, std::string phase) {
  std::lock_guard<std::mutex> g(s.lock);
  s.phase = std::move(phase);
  if (o.progress) print_progress(o, s, isatty(2) != 0);
}

}  // namespace gfsl::fuzz
