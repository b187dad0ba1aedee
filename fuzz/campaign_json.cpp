#include <sstream>
#include <vector>

#include "fuzz/campaign.hpp"
#include "fuzz/coverage.hpp"
#include "traces/json.hpp"

namespace gfsl::fuzz {

namespace json = traces::json;

std::string campaign_json(const campaign_options& o, const campaign_result& r, const std::vector<failure_entry>& earlier) {
  std::ostringstream j;
  j << "{\"backend\":\"" << o.backend << "\",\"subject\":\"" << subject_name(o.limits.subject) << "\",\"variant\":\""
    << variant_label(o.limits.subject, o.choice) << "\",\"mutant\":\"" << mutant_label(o.limits.subject, o.choice)
    << "\",\"shard\":" << o.shard
    << ",\"shards\":" << o.shards << ",\"seed\":" << o.seed << ",\"seconds\":" << r.seconds << ",\"runs\":" << r.runs
    << ",\"ops\":" << r.ops << ",\"undecided\":" << r.undecided << ",\"splits\":" << r.paths.splits
    << ",\"merges\":" << r.paths.merges << ",\"zombie_unlinks\":" << r.paths.zombie_unlinks + r.paths.head_unlinks
    << ",\"backtracks\":" << r.paths.backtracks << ",\"restarts\":" << r.paths.restarts
    << ",\"down_ptr_updates\":" << r.paths.down_ptr_updates << ",\"pct_runs\":" << r.pct_runs
    << ",\"pct_priority_changes\":" << r.pct_changes << ",\"pct_change_points\":" << r.pct_change_points
    << ",\"path_combinations\":" << r.path_combinations << ",\"rare_paths\":{";
  for (std::size_t i = 0; i < std::size(rare_paths); ++i) j << (i ? "," : "") << "\"" << rare_paths[i].name << "\":" << r.paths.*rare_paths[i].count;
  j << "},\"never_hit\":[";
  bool first = true;
  for (const rare_path& p : rare_paths) {
    if (r.paths.*p.count || !disabled_by(o, p.name).empty()) continue;
    j << (first ? "" : ",") << "\"" << p.name << "\"";
    first = false;
  }
  j << "],\"disabled_paths\":[";
  first = true;
  for (const rare_path& p : rare_paths) {
    if (r.paths.*p.count || disabled_by(o, p.name).empty()) continue;
    j << (first ? "" : ",") << "\"" << p.name << "\"";
    first = false;
  }
  j << "]";
  if (o.backend == "host") {
    // Interleaving coverage (fuzz/coverage.hpp), by pair name.
    std::string reached, never, disabled;
    for (int bit : pair_bits(o.limits.subject)) {
      const std::string name = "\"" + pair_name(o.limits.subject, bit) + "\"";
      std::string& into = (r.pairs >> bit & 1u) ? reached : !pair_disabled_by(o, bit).empty() ? disabled : never;
      into += (into.empty() ? "" : ",") + name;
    }
    j << ",\"pairs_reached\":[" << reached << "],\"pairs_never_reached\":[" << never << "],\"pairs_disabled\":[" << disabled
      << "],\"hold_runs\":" << r.hold_runs << ",\"hold_met\":" << r.hold_met;
  }
  j << ",\"failures\":[";
  std::vector<const failure*> all;
  if (r.found) all.push_back(&*r.found);
  for (const failure& f : r.further) all.push_back(&f);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const failure& f = *all[i];
    const detection* d = f.verdict.found.empty() ? nullptr : &f.verdict.found.front();
    j << (i ? "," : "") << "{\"detector\":" << json::quote(d ? d->detector : "") << ",\"detail\":"
      << json::quote(d ? d->detail : "") << ",\"signature\":" << json::quote(f.signature) << ",\"detectors\":[";
    for (std::size_t k = 0; k < f.verdict.found.size(); ++k) j << (k ? "," : "") << json::quote(f.verdict.found[k].detector);
    j << "],\"runs\":" << f.runs << ",\"reproduced\":" << (f.reproduced ? "true" : "false")
      << ",\"seconds\":" << f.seconds_to_first << ",\"ops\":" << f.shrunk.w.ops << ",\"prefill\":" << f.verdict.run.prefill.size()
      << ",\"teams\":" << f.shrunk.w.teams << ",\"dir\":" << json::quote(f.dir) << ",\"replay\":"
      << json::quote(o.replay_line ? o.replay_line(f.shrunk) : f.shrunk.describe()) << "}";
  }
  for (std::size_t i = 0; i < earlier.size(); ++i) {
    const failure_entry& f = earlier[i];
    j << (all.empty() && i == 0 ? "" : ",") << "{\"detector\":" << json::quote(f.detector) << ",\"detail\":" << json::quote(f.detail)
      << ",\"signature\":" << json::quote(f.signature) << ",\"seconds\":" << f.seconds << ",\"ops\":" << f.ops << ",\"dir\":"
      << json::quote(f.dir) << ",\"replay\":" << json::quote(f.replay) << ",\"before_resume\":true}";
  }
  j << "]}";
  return j.str();
}

}  // namespace gfsl::fuzz
