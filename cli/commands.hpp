// The subcommands of the gfsl program. Each adds itself to the root app and
// returns the function that runs it once parsing is done.
//
// Exit codes, for every command: 0 fine; 1 a violation found; 2 bad usage, bad
// input or missing environment (no CUDA device, unreadable file), or a
// resource that failed (a thread, memory, a full disk, an unwritable output);
// 3 an answer that could not be decided (a checker's time limit, a run or
// campaign interrupted by SIGINT/SIGTERM, a cut trace); 4 the run stopped on an error
// of its own (chunk pool exhausted, a kernel watchdog).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace gfsl::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_violation = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_undecided = 3;
inline constexpr int exit_run_error = 4;

struct command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// The flags that mean one thing on every command (docs/CLI.md, "Flag audit").

// --progress auto|on|off: progress lines on stderr. auto, the default, draws
// them only when stderr is a terminal, so that a log or a test's captured
// output holds the report alone unless progress is asked for.
inline CLI::Option* add_progress_option(CLI::App* app, std::string& mode) {
  return app->add_option("--progress", mode, "progress lines on stderr: auto (only when stderr is a terminal), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
}
inline bool progress_wanted(const std::string& mode) { return mode == "on" || (mode == "auto" && isatty(2) != 0); }

// A help formatter that wraps each option's description at `width`
// characters a line (CLI11 2.1 prints it as one line, however long),
// continuing under the description column.
class wrapping_formatter : public CLI::Formatter {
 public:
  explicit wrapping_formatter(std::size_t width = 100) : width_(width) {}
  std::string make_option_desc(const CLI::Option* opt) const override {
    const std::string text = CLI::Formatter::make_option_desc(opt);
    const std::size_t room = width_ > get_column_width() + 20 ? width_ - get_column_width() : 20;
    std::string out, line;
    std::size_t at = 0;
    while (at < text.size()) {
      std::size_t end = text.find(' ', at);
      if (end == std::string::npos) end = text.size();
      const std::string word = text.substr(at, end - at);
      if (!line.empty() && line.size() + 1 + word.size() > room) {
        out += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
      at = end + 1;
    }
    return out + line;
  }

 private:
  std::size_t width_;
};

// Puts each of `app`'s options in the group its name is listed under
// (groups: {group, {"--name", ...}}, in the order help shows them); an
// option listed nowhere stays in "Options".
inline void group_options(CLI::App* app, const std::vector<std::pair<std::string, std::vector<std::string>>>& groups) {
  for (const auto& [group, names] : groups) {
    for (const std::string& name : names) {
      if (CLI::Option* opt = app->get_option_no_throw(name)) opt->group(group);
    }
  }
}

// --json FILE, --csv FILE, --junit FILE, --html FILE: a report written to
// FILE; "-" is standard output, where it takes the text report's place.
inline bool is_stdout(const std::string& path) { return path == "-"; }

command add_run_command(CLI::App& root);
command add_replay_command(CLI::App& root);
command add_fuzz_command(CLI::App& root);
command add_mutants_command(CLI::App& root);
command add_dot_command(CLI::App& root);
command add_check_command(CLI::App& root);
command add_convert_command(CLI::App& root);
command add_bench_command(CLI::App& root);
// gfsl bench: a stand-in that names gfsl-bench in gfsl's help; main() hands
// `gfsl bench ...` to forward_to_bench, which runs gfsl-bench beside gfsl.
command add_bench_forwarder(CLI::App& root);
int forward_to_bench(int argc, char** argv, int bench_at);

// The whole command line, as the gfsl program runs it (cli/gfsl.cpp).
int gfsl_main(int argc, char** argv);
// The program that replays a printed line: gfsl, or a user's structure
// program (gfsl::cpu::main), whose lines name a subject gfsl does not have.
std::string& replay_program();
command add_stress_command(CLI::App& root);

}  // namespace gfsl::cli
