// gfsl: the testbed's one program (its command line is cli/gfsl.cpp, in the
// gfsl_cli library that a user's structure program links too).
#include "cli/commands.hpp"

int main(int argc, char** argv) { return gfsl::cli::gfsl_main(argc, argv); }
