// `servebench doctor [--endpoint URL]` (docs/doctor.md): flags only; the checks are in
// doctor/doctor.h. Thread safety: used from main's thread.
#pragma once

#include <string>

#include "doctor/doctor.h"

namespace CLI {
class App;
}  // namespace CLI

namespace sb::cli {

struct DoctorCommand {
  doctor::Options options;
  std::string api_key_env;   // as run's --api-key-env
  std::string api_key_file;  // as run's --api-key-file
  bool json = false;
};

// Adds the `doctor` subcommand (--endpoint, --model, --api-key-env, --api-key-file,
// --concurrency, --python, --cxx, --timeout-s, --json) and returns it.
CLI::App* AddDoctorCommand(CLI::App& app, DoctorCommand& cmd);

// Runs every check and prints the screen (or JSON); returns 0, 1 (a FAIL), or 2/3 for a bad
// flag or an unreadable API key file.
int RunDoctorCommand(const DoctorCommand& cmd);

}  // namespace sb::cli
