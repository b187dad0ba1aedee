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
command add_stress_command(CLI::App& root);

}  // namespace gfsl::cli
