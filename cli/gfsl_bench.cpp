// gfsl-bench: the GPU evaluation of thesis 5.1 (`gfsl bench` runs it). Its
// own program so that gfsl carries no benchmark kernels.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

#include "cli/commands.hpp"
#include "cli/workers.hpp"

int main(int argc, char** argv) {
  using namespace gfsl::cli;
  // Taken as `gfsl-bench [options]` or `gfsl-bench bench [options]`; the
  // command line is remembered in the second form, the one its device
  // workers are started with.
  std::vector<char*> args(argv, argv + argc);
  static char bench_word[] = "bench";
  if (argc < 2 || std::strcmp(argv[1], "bench") != 0) args.insert(args.begin() + 1, bench_word);
  remember_command_line(static_cast<int>(args.size()), args.data());
  CLI::App app{"gfsl-bench: GPU throughput of GFSL, the evaluation of thesis 5.1 (also run as gfsl bench)"};
  app.require_subcommand(1);
  command bench = add_bench_command(app);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "gfsl bench: %s (see gfsl bench --help)\n", e.what());
    return exit_usage;
  }
  return bench.run();
}
