#include "fuzz/coverage.hpp"

#include <cstdlib>
#include <sstream>

#include "core/gfsl/coverage.hpp"
#include "core/registry.hpp"
#include "fuzz/campaign.hpp"
#include "core/gfsl/types.hpp"

namespace gfsl::fuzz {

std::string hold_text(subject_kind s, const sched::hold_directive& h) {
  const coverage_spec spec = coverage_of(s);
  std::ostringstream out;
  out << (h.window < spec.windows.size() ? spec.windows[h.window] : std::string_view("?")) << ","
      << (h.effect < spec.effects.size() ? spec.effects[h.effect] : std::string_view("?")) << "," << h.nth;
  if (h.team != sched::hold_directive::any_team) out << "," << h.team;
  return out.str();
}

namespace {
bool parse_count(const std::string& text, std::uint32_t& out, std::uint32_t least) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (*end != '\0' || v < least || v > 0xFFFFFFFEull) return false;
  out = static_cast<std::uint32_t>(v);
  return true;
}
std::string joined(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}
}  // namespace

std::string parse_hold(subject_kind s, const std::string& text, sched::hold_directive& out) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string p; std::getline(in, p, ',');) parts.push_back(p);
  if (parts.size() < 3 || parts.size() > 4) return "hold '" + text + "': expected WINDOW,EFFECT,NTH or WINDOW,EFFECT,NTH,TEAM";
  const coverage_spec spec = coverage_of(s);
  const int w = spec.find_window(parts[0]);
  if (w < 0) return "hold '" + text + "': no " + subject_name(s) + " window '" + parts[0] + "' (" + joined(spec.windows) + ")";
  const int e = spec.find_effect(parts[1]);
  if (e < 0) return "hold '" + text + "': no " + subject_name(s) + " effect '" + parts[1] + "' (" + joined(spec.effects) + ")";
  sched::hold_directive h;
  h.active = true;
  h.window = static_cast<std::uint8_t>(w);
  h.effect = static_cast<std::uint8_t>(e);
  if (!parse_count(parts[2], h.nth, 1)) return "hold '" + text + "': NTH '" + parts[2] + "' is not a count from 1";
  if (parts.size() == 4 && !parse_count(parts[3], h.team, 0)) return "hold '" + text + "': TEAM '" + parts[3] + "' is not a team number";
  out = h;
  return {};
}

std::vector<int> pair_bits(subject_kind s) {
  const coverage_spec spec = coverage_of(s);
  std::vector<int> bits;
  for (std::size_t w = 0; w < spec.windows.size(); ++w) {
    for (std::size_t e = 0; e < spec.effects.size(); ++e) bits.push_back(pair_bit(static_cast<int>(w), static_cast<int>(e)));
  }
  return bits;
}
int pair_window(int bit) { return bit / max_effects; }
int pair_effect(int bit) { return bit % max_effects; }

std::string pair_name(subject_kind s, int bit) {
  const coverage_spec spec = coverage_of(s);
  return std::string(spec.windows[static_cast<std::size_t>(pair_window(bit))]) + " x " +
         std::string(spec.effects[static_cast<std::size_t>(pair_effect(bit))]);
}

std::string pair_disabled_by(const campaign_options& o, int bit) {
  // Only robust validates a "not here" (core/gfsl/algorithm.hpp, validated_read).
  if (o.limits.subject == subject_kind::gfsl && pair_window(bit) == static_cast<int>(gfsl_window::validate) &&
      gfsl_subject::variant_of(o.choice) == variant::thesis) {
    return "--variant thesis";
  }
  return {};
}

}  // namespace gfsl::fuzz
