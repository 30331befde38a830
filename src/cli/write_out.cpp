#include "cli/write_out.h"

#include <cstdio>

#include "core/output_file.h"
#include "run/exit_codes.h"

namespace sb::cli {

int WriteOut(const std::string& out, std::string_view text) {
  const std::string path = out.empty() ? std::string("-") : out;
  if (auto ok = WriteOutputFile(path, text); !ok) {
    return run::Fail(ok.error());
  }
  if (path != "-") {
    std::fprintf(stderr, "wrote %s\n", path.c_str());
  }
  return run::kExitOk;
}

}  // namespace sb::cli
