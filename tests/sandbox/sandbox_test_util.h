// Helpers for the sandbox tests: Python programs, small limits, the processes of a uid.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/types.h>

#include "sandbox/sandbox.h"
#include "support/temp_dir.h"

namespace sb::sandbox::testutil {

inline constexpr const char* kPython = "/usr/bin/python3";

// Small limits so that hostile programs end fast and bounded.
inline Limits Small() {
  Limits l;
  l.cpu_s = 5;
  l.wall_s = 10;
  l.memory_bytes = 512ull << 20;
  l.processes = 16;
  l.file_bytes = 1ull << 20;
  l.output_bytes = 256ull << 10;
  l.open_files = 64;
  return l;
}

inline Program Py(const std::string& source, const std::string& stdin_data = "") {
  Program p;
  p.argv = {kPython, "-I", "-B", "main.py"};
  p.files.push_back(File{"main.py", source, false});
  p.stdin_data = stdin_data;
  return p;
}

// Run that must not be a harness error.
inline RunResult MustRun(const Program& program, const Limits& limits) {
  auto r = Run(program, limits);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? std::move(r).value() : RunResult{};
}

inline std::string Describe(const RunResult& r) {
  return std::string(VerdictName(r.verdict)) + " (" + r.reason +
         ")\nstdout: " + r.stdout_data.substr(0, 2000) +
         "\nstderr: " + r.stderr_data.substr(0, 2000);
}

// Processes (not threads) whose real uid is uid.
inline int CountProcessesOfUid(uid_t uid) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream in(e.path() / "status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Uid:", 0) == 0) {
        n += std::stoul(line.substr(4)) == uid ? 1 : 0;
        break;
      }
    }
  }
  return n;
}

// A fresh directory under /tmp for one test, removed afterwards.
using ::sb::testing::TempDir;

}  // namespace sb::sandbox::testutil
