#include "cli/subject_options.hpp"

#include <algorithm>

#include "linearizability/report.hpp"

namespace gfsl::cli {

void add_subject_options(CLI::App* app, subject_text& t, bool with_parameters) {
  std::vector<std::string> names;
  for (const subject_descriptor* s : subject_registry)
    if (subject_listed(s)) names.emplace_back(s->name);
  app->add_option("--subject", t.subject, "the structure under test: " + subject_help_text())
      ->check(CLI::IsMember(names))
      ->capture_default_str();
  if (!with_parameters) return;
  for (const subject_descriptor* s : subject_registry) {
    for (const subject_parameter& p : s->parameters) {
      if (t.parameters.count(p.name)) continue;  // declared by an earlier subject too
      app->add_option("--" + std::string(p.name), t.parameters[std::string(p.name)], std::string(s->name) + ": " + std::string(p.help))
          ->check(CLI::Range(0u, p.max))
          ->capture_default_str();
    }
  }
}

std::string resolve_workload_subject(const subject_text& t, model::workload& w) {
  const auto s = parse_subject(t.subject);
  if (!s) return "--subject " + lin::printable(t.subject) + ": the subjects are " + subject_names_text();
  w.subject = *s;
  const subject_descriptor& d = subject_of(w.subject);
  if (d.team_width > 0) {
    if (t.chunk_option && t.chunk_option->count() > 0 && w.chunk != d.team_width) {
      return "--chunk " + std::to_string(w.chunk) + ": " + std::string(d.fixed_chunk_note);
    }
    w.chunk = d.team_width;
  }
  // Another subject's parameter given is a mistake; not given, it is 0.
  for (const subject_descriptor* other : subject_registry) {
    if (other == &d) continue;
    for (const subject_parameter& p : other->parameters) {
      if (find_parameter(w.subject, p.name)) continue;
      if (const std::uint32_t v = t.parameter(p.name)) {
        return "--" + std::string(p.name) + " " + std::to_string(v) + ": a " + parameter_owners(p.name) + " parameter (--subject " +
               std::string(other->name) + ")";
      }
      p.set(w, 0);
    }
  }
  for (const subject_parameter& p : d.parameters) {
    const std::uint32_t v = t.parameter(p.name);
    p.set(w, v ? v : p.default_value(w));
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
