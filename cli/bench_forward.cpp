// gfsl bench: the GPU benchmark kernels live in their own program,
// gfsl-bench, built beside gfsl with the CUDA backend (its kernels take most
// of a CUDA build, and a checker or a CPU campaign needs none of them). This
// subcommand hands its arguments to that program unchanged.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/workers.hpp"

namespace gfsl::cli {

std::string bench_program_path() {
  std::string self = self_program();
  const std::size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string() : self.substr(0, slash + 1)) + "gfsl-bench";
}

int forward_to_bench(int argc, char** argv, int bench_at) {
  const std::string program = bench_program_path();
  if (access(program.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "gfsl bench: %s is not built: the GPU benchmark is its own program, built with the CUDA backend "
                 "(cmake --build build --target gfsl-bench, with nvcc on the PATH)\n",
                 program.c_str());
    return exit_usage;
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>("gfsl-bench"));
  for (int i = bench_at + 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(program.c_str(), args.data());
  std::fprintf(stderr, "gfsl bench: cannot start %s: %s\n", program.c_str(), std::strerror(errno));
  return exit_usage;
}

command add_bench_forwarder(CLI::App& root) {
  CLI::App* b = root.add_subcommand(
      "bench", "GPU throughput, thesis 5.1 (runs gfsl-bench, built with the CUDA backend; gfsl bench --help lists its options)");
  b->prefix_command();  // every argument is gfsl-bench's
  b->set_help_flag();   // --help too
  return {b, [] { return exit_usage; }};  // main() forwards before parsing
}

}  // namespace gfsl::cli
