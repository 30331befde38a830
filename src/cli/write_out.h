// The output of the commands that print a document (compare, report, export, history,
// leaderboard): to stdout, or to `--out FILE` through core/output_file.h.
#pragma once

#include <string>
#include <string_view>

namespace sb::cli {

// Writes `text` to `out` ("" or "-" = stdout; a device is written in place, a file replaced
// atomically) and says "wrote OUT" on stderr for a file. The exit code: 0, or 3 with one error
// line naming the file (or standard output) and the system's reason.
int WriteOut(const std::string& out, std::string_view text);

}  // namespace sb::cli
