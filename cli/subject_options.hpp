// --subject, --buckets and the subject's --variant and --mutant, the same on
// every command (docs/CLI.md, "Flag audit"): the options are read as text and
// resolved once the subject is known, since each subject names its own
// variants and mutants.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/mutants.hpp"
#include "core/slabhash/layout.hpp"
#include "core/slabhash/mutants.hpp"
#include "core/subject.hpp"
#include "core/types.hpp"
#include "model/workload.hpp"

namespace gfsl::cli {

// Every options struct that says what structure a run tests (run_options,
// fuzz::run_config, run_extras) holds the same four fields: GFSL's variant
// and seeded bug (`var`, `mut`) and SlabHash's (`slab_var`, `slab_mut`);
// only the pair of the workload's subject is used.
template <class T>
concept subject_fields = requires(T t) {
  t.var;
  t.mut;
  t.slab_var;
  t.slab_mut;
};

struct subject_text {
  std::string subject = "gfsl";
  std::string variant;  // empty: the subject's default
  std::string mutant;   // empty: none
  std::uint32_t buckets = 0;  // slabhash; 0: sized from the key range
  CLI::Option* chunk_option = nullptr;  // to tell a --chunk given from the default
};

// --subject and --buckets (each command adds its own --variant and --mutant).
// `with_buckets`: false where the runs draw their own (gfsl fuzz, gfsl mutants).
void add_subject_options(CLI::App* app, subject_text& t, bool with_buckets = true);

// One seeded bug of a subject's catalog, as the mutants command lists and
// runs it (core/mutants.hpp for gfsl, core/slabhash/mutants.hpp for slabhash).
struct mutant_entry {
  int id = 0;  // the subject's enum value (0: none, the control)
  std::string name, backends, variants, breaks, notes;
};
std::vector<mutant_entry> mutant_entries(subject_kind s);
// Why the entry behaves like the correct structure of `variant_name` at this
// read granularity; empty when a campaign that does not kill it missed a bug.
// `sc_memory`: every run of the campaign under sc (core/mutants.hpp,
// equivalence_needs_sc).
std::string equivalence_reason(subject_kind s, const mutant_entry& m, const std::string& variant_name, bool whole_chunk_reads,
                               bool sc_memory = true);
// The entry's seeded bug set in `c` (the other subject's stays none).
template <subject_fields T>
void set_mutant(subject_kind s, int id, T& c) {
  c.mut = s == subject_kind::gfsl ? static_cast<mutant>(id) : mutant::none;
  c.slab_mut = s == subject_kind::slabhash ? static_cast<slabhash::slab_mutant>(id) : slabhash::slab_mutant::none;
}

// SlabHash's default bucket count for a key range: about 20 keys of the range
// per bucket, so that a full range makes chains of two slabs (docs/SUBJECTS.md).
std::uint32_t default_buckets(std::uint32_t range);

// The subject and its parameters into `w` (subject, buckets, chunk); empty on
// success, else one line naming the option.
std::string resolve_workload_subject(const subject_text& t, model::workload& w);
// The variant and mutant names, read in the workload's subject's terms;
// empty on success, else one line ("--variant thesis: slabhash's variants are fixed, published").
std::string resolve_variant(subject_kind s, const std::string& name, variant& var, slabhash::slab_variant& slab_var);
std::string resolve_mutant(subject_kind s, const std::string& name, mutant& mut, slabhash::slab_mutant& slab_mut);

template <subject_fields T>
std::string resolve_subject(const subject_text& t, model::workload& w, T& c) {
  if (std::string e = resolve_workload_subject(t, w); !e.empty()) return e;
  if (std::string e = resolve_variant(w.subject, t.variant, c.var, c.slab_var); !e.empty()) return e;
  return resolve_mutant(w.subject, t.mutant, c.mut, c.slab_mut);
}

template <subject_fields T>
std::string variant_label(const model::workload& w, const T& c) {
  return w.subject == subject_kind::slabhash ? slabhash::variant_name(c.slab_var) : variant_name(c.var);
}
template <subject_fields T>
bool has_mutant(const model::workload& w, const T& c) {
  return w.subject == subject_kind::slabhash ? c.slab_mut != slabhash::slab_mutant::none : c.mut != mutant::none;
}
// "" for none.
template <subject_fields T>
std::string mutant_label(const model::workload& w, const T& c) {
  if (!has_mutant(w, c)) return {};
  return std::string(w.subject == subject_kind::slabhash ? slabhash::info(c.slab_mut).name : mutant_name(c.mut));
}

}  // namespace gfsl::cli
