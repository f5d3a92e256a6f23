#pragma once
// Test support: runs a command (kubectl, in practice) to completion and captures what it wrote.

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace kinformer::testing {

struct command_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `argv` through the shell with `environment` ("NAME='value' ...") in front, each argument
// single-quoted (none may contain a quote). Stdout is read from a pipe; stderr goes through the
// file "stderr" in `scratch`. Put `timeout N` first in `argv` to bound it.
inline command_result run_command(const std::vector<std::string>& argv,
                                  const std::string& environment,
                                  const std::filesystem::path& scratch) {
  std::string command = environment;
  for (const auto& a : argv)
    command += " '" + a + "'";
  command += " 2>'" + (scratch / "stderr").string() + "'";
  command_result result;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    result.out.append(buffer, n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(scratch / "stderr");
  result.err.assign(std::istreambuf_iterator<char>(err), {});
  return result;
}

// run_command, requiring exit status 0; returns stdout. A failure shows the command and both
// streams.
inline std::string run_command_ok(const std::vector<std::string>& argv,
                                  const std::string& environment,
                                  const std::filesystem::path& scratch) {
  auto r = run_command(argv, environment, scratch);
  std::string shown;
  for (const auto& a : argv)
    shown += a + " ";
  INFO(shown << "\nexit " << r.exit_code << "\nstderr: " << r.err
             << "\nstdout: " << r.out.substr(0, 2000));
  REQUIRE(r.exit_code == 0);
  return r.out;
}

} // namespace kinformer::testing
