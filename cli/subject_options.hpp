// --subject, --buckets and the subject's --variant and --mutant, the same on
// every command (docs/CLI.md, "Flag audit"): the options are read as text and
// resolved once the subject is known, since each subject names its own
// variants and mutants.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "model/workload.hpp"

namespace gfsl::cli {

struct subject_text {
  std::string subject = "gfsl";
  std::string variant;  // empty: the subject's default
  std::string mutant;   // empty: none
  // The subjects' parameters (core/subject.hpp) by name; 0: the subject's default.
  std::map<std::string, std::uint32_t, std::less<>> parameters;
  std::uint32_t parameter(std::string_view name) const {
    const auto it = parameters.find(name);
    return it == parameters.end() ? 0 : it->second;
  }
  CLI::Option* chunk_option = nullptr;  // to tell a --chunk given from the default
};

// --subject and the subjects' parameters (--buckets; each command adds its
// own --variant and --mutant). `with_parameters`: false where the runs draw
// their own (gfsl fuzz, gfsl mutants).
void add_subject_options(CLI::App* app, subject_text& t, bool with_parameters = true);

// The subject and its parameters into `w` (subject, its parameters, chunk); empty on
// success, else one line naming the option.
std::string resolve_workload_subject(const subject_text& t, model::workload& w);
// The variant and mutant names, read in the workload's subject's terms;
// empty on success, else one line ("--variant thesis: slabhash's variants are fixed, published").
std::string resolve_variant(subject_kind s, const std::string& name, subject_choice& c);
std::string resolve_mutant(subject_kind s, const std::string& name, subject_choice& c);

inline std::string resolve_subject(const subject_text& t, model::workload& w, subject_choice& c) {
  if (std::string e = resolve_workload_subject(t, w); !e.empty()) return e;
  if (std::string e = resolve_variant(w.subject, t.variant, c); !e.empty()) return e;
  return resolve_mutant(w.subject, t.mutant, c);
}

inline std::string variant_label(const model::workload& w, const subject_choice& c) { return gfsl::variant_label(w.subject, c); }
inline bool has_mutant(const subject_choice& c) { return c.mutated(); }
// "" for none.
inline std::string mutant_label(const model::workload& w, const subject_choice& c) {
  return c.mutated() ? gfsl::mutant_label(w.subject, c) : std::string();
}

}  // namespace gfsl::cli
