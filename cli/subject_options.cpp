#include "cli/subject_options.hpp"

#include <algorithm>

#include "linearizability/report.hpp"

namespace gfsl::cli {

void add_subject_options(CLI::App* app, subject_text& t, bool with_buckets) {
  app->add_option("--subject", t.subject, "the structure under test: gfsl (the skiplist) or slabhash (the slab-list hash table)")
      ->check(CLI::IsMember({"gfsl", "slabhash"}))
      ->capture_default_str();
  if (!with_buckets) return;
  app->add_option("--buckets", t.buckets, "slabhash: buckets of the table (0: one per 20 keys of the range)")
      ->check(CLI::Range(0u, model::max_buckets))
      ->capture_default_str();
}

std::uint32_t default_buckets(std::uint32_t range) { return std::max<std::uint32_t>(1, (range + 19) / 20); }

std::string resolve_workload_subject(const subject_text& t, model::workload& w) {
  const auto s = parse_subject(t.subject);
  if (!s) return "--subject " + lin::printable(t.subject) + ": the subjects are " + std::string(subject_names);
  w.subject = *s;
  if (w.subject == subject_kind::slabhash) {
    if (t.chunk_option && t.chunk_option->count() > 0 && w.chunk != 16) {
      return "--chunk " + std::to_string(w.chunk) + ": slabhash reads a slab of 16 eight-byte words, one per lane (--chunk does not apply)";
    }
    w.chunk = 16;
    w.buckets = t.buckets ? t.buckets : default_buckets(w.range);
  } else {
    if (t.buckets) return "--buckets " + std::to_string(t.buckets) + ": a slabhash parameter (--subject slabhash)";
    w.buckets = 0;
  }
  return {};
}

std::string resolve_variant(subject_kind s, const std::string& name, variant& var, slabhash::slab_variant& slab_var) {
  if (s == subject_kind::slabhash) {
    if (name.empty()) {
      slab_var = slabhash::default_slab_variant;
      return {};
    }
    const auto v = slabhash::parse_variant(name);
    if (!v) return "--variant " + lin::printable(name) + ": slabhash's variants are fixed, published";
    slab_var = *v;
    return {};
  }
  if (name.empty()) {
    var = default_variant;
    return {};
  }
  const auto v = parse_variant(name);
  if (!v) return "--variant " + lin::printable(name) + ": gfsl's variants are robust, thesis";
  var = *v;
  return {};
}

std::string resolve_mutant(subject_kind s, const std::string& name, mutant& mut, slabhash::slab_mutant& slab_mut) {
  mut = mutant::none;
  slab_mut = slabhash::slab_mutant::none;
  if (name.empty()) return {};
  if (s == subject_kind::slabhash) {
    const auto m = slabhash::parse_mutant(name);
    if (!m) return "--mutant " + lin::printable(name) + ": no such slabhash mutant (gfsl mutants --subject slabhash --list)";
    slab_mut = *m;
    return {};
  }
  const mutant_info* m = find_mutant(name);
  if (!m) return "--mutant " + lin::printable(name) + ": no such mutant (gfsl mutants --list)";
  mut = m->id;
  return {};
}

std::vector<mutant_entry> mutant_entries(subject_kind s) {
  std::vector<mutant_entry> out;
  if (s == subject_kind::slabhash) {
    for (int i = 1; i < static_cast<int>(slabhash::slab_mutant::count_); ++i) {
      const slabhash::slab_mutant_info& m = slabhash::info(static_cast<slabhash::slab_mutant>(i));
      mutant_entry e;
      e.id = i;
      e.name = m.name;
      e.backends = "host,cuda";
      e.variants = m.variants;
      e.breaks = m.breaks;
      if (!m.equivalent.empty()) e.notes = " (equivalent on the CPU)";
      out.push_back(std::move(e));
    }
    return out;
  }
  for (const mutant_info& m : mutant_catalog) {
    mutant_entry e;
    e.id = static_cast<int>(m.id);
    e.name = m.name;
    e.backends = m.backends;
    e.variants = m.variants;
    e.breaks = m.breaks;
    if (!m.equivalent.empty()) e.notes += " (equivalent under whole-chunk reads)";
    if (!m.robust_equivalent.empty()) {
      e.notes += m.robust_equivalent_whole_chunk_only ? " (equivalent in robust under whole-chunk reads)" : " (equivalent in robust)";
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string equivalence_reason(subject_kind s, const mutant_entry& m, const std::string& variant_name, bool whole_chunk_reads,
                               bool sc_memory) {
  if (s == subject_kind::slabhash) {
    // SlabHash's equivalent mutants weaken an order the CPU's sequentially
    // consistent memory gives anyway (core/slabhash/mutants.hpp).
    return std::string(slabhash::info(static_cast<slabhash::slab_mutant>(m.id)).equivalent);
  }
  const auto v = parse_variant(variant_name);
  if (!v) return {};
  for (const mutant_info& i : mutant_catalog) {
    if (static_cast<int>(i.id) == m.id) return std::string(equivalence_of(i, *v, whole_chunk_reads, sc_memory));
  }
  return {};
}

}  // namespace gfsl::cli
