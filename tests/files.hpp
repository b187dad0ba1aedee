// Whole files in and out, byte for byte, for the tests that write inputs
// and read back what gfsl wrote.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace gfsl::testing_files {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace gfsl::testing_files
