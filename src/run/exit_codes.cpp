#include "run/exit_codes.h"

#include <cstdio>

#include "core/redact.h"

namespace sb::run {

int ExitCodeFor(const Error& e) {
  switch (e.code) {
    case ErrorCode::kUsage:
      return kExitUsage;
    case ErrorCode::kCancelled:
      return kExitInterrupted;
    default:
      return kExitSetup;
  }
}

int Fail(const Error& e) {
  std::fprintf(stderr, "servebench: error: %s\n", Redact(e.message).c_str());
  return ExitCodeFor(e);
}

}  // namespace sb::run
