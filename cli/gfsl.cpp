// gfsl: the testbed's one program. Exit codes are listed in cli/commands.hpp
// and the README.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <vector>

#include "cli/commands.hpp"
#include "cli/workers.hpp"

int main(int argc, char** argv) {
  using namespace gfsl::cli;
  remember_command_line(argc, argv);
  CLI::App app{"gfsl: verification testbed for the GPU-Friendly Skiplist"};
  app.require_subcommand(1);
  std::vector<command> commands{add_run_command(app), add_replay_command(app), add_fuzz_command(app),
                                add_mutants_command(app), add_check_command(app), add_convert_command(app), add_dot_command(app),
                                add_bench_command(app), add_stress_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "gfsl: %s (see gfsl --help)\n", e.what());
    return exit_usage;
  }
  for (const command& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return exit_usage;
}
