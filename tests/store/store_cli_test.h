// Shared by the store's end-to-end tests: temporary directories, simulators of known speed, and
// `servebench` run with a chosen environment (through env(1), so a variable is replaced, not
// added a second time).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <stdlib.h>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sb::store_test {

namespace fs = std::filesystem;

inline const std::string kBin = SB_BINARY;

using ::sb::testing::TempDir;

using ::sb::testing::ReadFile;

// servebench ARGS with the environment changed by `env` ("VAR=value" sets, "-u VAR" unsets);
// SERVEBENCH_STORE (off for the whole test suite) is unset unless `env` sets it.
inline testing::ProcessResult Sb(const std::vector<std::string>& args,
                                 const std::vector<std::string>& env = {},
                                 std::chrono::milliseconds limit = std::chrono::seconds(120)) {
  std::vector<std::string> argv = {"/usr/bin/env", "-u", "SERVEBENCH_STORE"};
  for (const auto& e : env) {
    if (e.starts_with("-u ")) {
      argv.push_back("-u");
      argv.push_back(e.substr(3));
    } else {
      argv.push_back(e);
    }
  }
  argv.push_back(kBin);
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunProcess(argv, limit);
}

// A `servebench sim` serving `model` at `itl_ms` per token; url() is its /v1 base.
class Sim {
 public:
  Sim(const std::string& model, const std::string& itl_ms)
      : child_({kBin, "sim", "--model", model, "--itl-ms", itl_ms, "--jitter-ms", "0.2"}) {
    const std::string line = child_.ReadLine();
    const std::string prefix = "listening on ";
    if (line.starts_with(prefix)) {
      url_ = line.substr(prefix.size());
    }
  }

  const std::string& url() const { return url_; }

 private:
  testing::Child child_;
  std::string url_;
};

// One `perf --profile decode` run into `out`, recorded in `store`.
inline testing::ProcessResult DecodeRun(const Sim& sim, const fs::path& out,
                                        const std::string& store,
                                        const std::vector<std::string>& extra = {},
                                        const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = {"perf",     "--endpoint", sim.url(),   "--profile", "decode",
                                   "--tokens", "24",         "--runs",    "3",         "--warmup",
                                   "0",        "--out",      out.string()};
  if (!store.empty()) {
    args.push_back("--store");
    args.push_back(store);
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return Sb(args, env);
}

}  // namespace sb::store_test
