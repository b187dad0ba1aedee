// The subjects, one line each: a new structure joins with its folder under
// core/ (its descriptor, core/subject.hpp) and its line here, in the order
// of subject_kind (docs/SUBJECTS.md, "Adding a structure").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gfsl/subject.hpp"
#include "lideng/subject.hpp"
#include "slabhash/subject.hpp"
#include "subject.hpp"
#include "user/subject.hpp"

namespace gfsl {

inline constexpr const subject_descriptor* subject_registry[] = {
    &gfsl_subject::descriptor,
    &slabhash::descriptor,
    &lideng::descriptor,
    &user::descriptor,  // filled at run time by the program that registers one
};

inline constexpr std::size_t subject_count = sizeof(subject_registry) / sizeof(subject_registry[0]);

// The user slot is last, and not a constant (its name is the user's).
constexpr bool registry_in_kind_order() {
  if (subject_registry[subject_count - 1] != &user::descriptor) return false;
  for (std::size_t i = 0; i + 1 < subject_count; ++i) {
    if (static_cast<std::size_t>(subject_registry[i]->kind) != i) return false;
  }
  return true;
}
static_assert(registry_in_kind_order(), "core/registry.hpp lists the subjects in the order of subject_kind");
static_assert(static_cast<std::size_t>(subject_kind::user) + 1 == subject_count, "the user slot is the last kind");
// subject_choice's default is the default subject's default choice.
static_assert(subject_choice{}.variant == gfsl_subject::descriptor.default_variant && subject_choice{}.mutant == 0);

constexpr const subject_descriptor& subject_of(subject_kind k) { return *subject_registry[static_cast<std::size_t>(k)]; }
constexpr const char* subject_name(subject_kind k) { return subject_of(k).name.data(); }

// The user slot takes part once a program registered a structure there or
// `gfsl check` named it after a trace (core/user/subject.hpp).
inline bool subject_listed(const subject_descriptor* s) { return s != &user::descriptor || user::slot().named; }

inline std::optional<subject_kind> parse_subject(std::string_view name) {
  for (const subject_descriptor* s : subject_registry) {
    if (subject_listed(s) && s->name == name) return s->kind;
  }
  return std::nullopt;
}

// "gfsl, slabhash": for error lines.
inline std::string subject_names_text() {
  std::string out;
  for (const subject_descriptor* s : subject_registry) {
    if (!subject_listed(s)) continue;
    if (!out.empty()) out += ", ";
    out += s->name;
  }
  return out;
}

// "gfsl (the skiplist) or slabhash (the slab-list hash table)": for --subject's help.
inline std::string subject_help_text() {
  std::string out;
  std::size_t listed = 0;
  for (const subject_descriptor* s : subject_registry) listed += subject_listed(s);
  for (std::size_t i = 0, n = 0; i < subject_count; ++i) {
    if (!subject_listed(subject_registry[i])) continue;
    if (n++) out += n == listed ? " or " : ", ";
    out += std::string(subject_registry[i]->name) + " (" + std::string(subject_registry[i]->nickname) + ")";
  }
  return out;
}

// The subjects that declare a parameter of this name.
inline std::string parameter_owners(std::string_view name) {
  std::string out;
  for (const subject_descriptor* s : subject_registry) {
    for (const subject_parameter& p : s->parameters) {
      if (p.name == name) out += (out.empty() ? "" : ", ") + std::string(s->name);
    }
  }
  return out;
}
inline const subject_parameter* find_parameter(subject_kind k, std::string_view name) {
  for (const subject_parameter& p : subject_of(k).parameters) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// The windows and effects a subject marks (core/coverage.hpp).
inline coverage_spec coverage_of(subject_kind s) { return subject_of(s).coverage; }

// A choice by name: the variant and the seeded bug ("none" for none).
inline std::string variant_label(subject_kind s, const subject_choice& c) {
  return std::string(subject_of(s).variant_name(c.variant));
}
inline std::string mutant_label(subject_kind s, const subject_choice& c) {
  return c.mutated() ? std::string(subject_of(s).mutant_name(c.mutant)) : std::string("none");
}

}  // namespace gfsl
