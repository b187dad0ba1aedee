// gfsl's command line (cli/main.cpp is the program; a user's structure
// program, gfsl::cpu::main, runs the same). Exit codes are listed in
// cli/commands.hpp and the README.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/workers.hpp"
#include "linearizability/report.hpp"

namespace {

// Every numeric option of every command, checked before CLI11 converts it:
// CLI11 takes "nan" and "inf" for a real, wraps "-1" to 2^64-1 for an
// unsigned and saturates a decimal past 2^64. No option of this program
// means anything by a negative number, so none is taken, nor a number (an
// integer or a real) of 2^64 or more.
std::string bad_number(const std::string& type, const std::string& v) {
  std::size_t at = v.find_first_not_of(" \t");
  if (at == std::string::npos) return {};  // CLI11 names an empty value
  if (v[at] == '-') return "expected a number of 0 or more, found " + v;
  if (type == "FLOAT") {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (end != v.c_str() && *end == '\0' && !std::isfinite(d)) return "expected a finite number, found " + v;
    // As for an integer: a real of 2^64 or more means nothing here (a
    // --shrink-seconds of 18446744073709551616 was taken).
    if (end != v.c_str() && *end == '\0' && d >= 18446744073709551616.0) return "expected a number below 2^64, found " + v;
    return {};
  }
  if (v.find_first_not_of("0123456789", at) == std::string::npos) {
    unsigned long long x = 0;
    const auto [p, ec] = std::from_chars(v.data() + at, v.data() + v.size(), x);
    if (ec != std::errc() || p != v.data() + v.size()) return "expected a number below 2^64, found " + v;
  }
  return {};
}

void check_numbers(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    // The type name carries the validators' descriptions after a ':' ("FLOAT:POSITIVE").
    std::string type = opt->get_type_name();
    type = type.substr(0, type.find_first_of(": "));
    if (type != "UINT" && type != "INT" && type != "FLOAT") continue;
    opt->check(CLI::Validator([type](std::string& v) { return bad_number(type, v); }, "", "number"));
  }
  for (CLI::App* sub : app->get_subcommands({})) check_numbers(sub);
}

}  // namespace

std::string& gfsl::cli::replay_program() {
  static std::string name = "gfsl";
  return name;
}

int gfsl::cli::gfsl_main(int argc, char** argv) {
  using namespace gfsl::cli;
  remember_command_line(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "bench") return forward_to_bench(argc, argv, 1);
  CLI::App app{"gfsl: verification testbed for concurrent GPU data structures"};
  app.require_subcommand(1);
  std::vector<command> commands{add_run_command(app), add_replay_command(app), add_fuzz_command(app),
                                add_mutants_command(app), add_check_command(app), add_convert_command(app), add_dot_command(app),
                                add_bench_forwarder(app), add_stress_command(app)};
  check_numbers(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    // The option values in CLI11's message are the user's bytes: escaped.
    std::fprintf(stderr, "gfsl: %s (see gfsl --help)\n", gfsl::lin::printable(e.what()).c_str());
    return exit_usage;
  }
  for (const command& c : commands) {
    if (!c.app->parsed()) continue;
    const int rc = c.run();
    // A report that did not reach standard output (a full disk, /dev/full)
    // must not pass for one that did: one line, exit 2, with the code the
    // command would have given.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::fprintf(stderr, "gfsl %s: standard output: cannot write: %s (the report is lost; the command's exit code was %d)\n",
                   c.app->get_name().c_str(), std::strerror(errno), rc);
      return exit_usage;
    }
    return rc;
  }
  return exit_usage;
}
