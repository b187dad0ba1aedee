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
  if (!s) return "--subject " + lin::printable(t.subject) + ": the subjects are " + subject_names_text();
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

std::string resolve_variant(subject_kind s, const std::string& name, subject_choice& c) {
  const subject_descriptor& d = subject_of(s);
  if (name.empty()) {
    c.variant = d.default_variant;
    return {};
  }
  const auto v = d.parse_variant(name);
  if (!v) return "--variant " + lin::printable(name) + ": " + std::string(d.name) + "'s variants are " + std::string(d.variants_text);
  c.variant = *v;
  return {};
}

std::string resolve_mutant(subject_kind s, const std::string& name, subject_choice& c) {
  c.mutant = 0;
  if (name.empty()) return {};
  const subject_descriptor& d = subject_of(s);
  const auto m = d.parse_mutant(name);
  if (!m) return "--mutant " + lin::printable(name) + ": " + std::string(d.no_such_mutant);
  c.mutant = static_cast<std::uint8_t>(*m);
  return {};
}

}  // namespace gfsl::cli
