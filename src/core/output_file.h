// Every output file servebench writes goes through here (docs/bounds.md, "Disk"): the run
// directory's files, `report`, `export`, `compare`, `history`/`leaderboard --out`, a matrix's
// comparison, the media cache and `assets`.
//
// WriteOutputFile(path, bytes):
//   "-"                          standard output (written and flushed, both checked);
//   an existing device or FIFO   opened and written in place, never replaced (/dev/null stays a
//                                device, /dev/stdout and a named pipe work);
//   a regular file or a new path written to a temporary file in the same directory, fsync'd and
//                                renamed over the path (a symbolic link to a regular file is
//                                followed: the file it names is replaced, the link is kept; an
//                                existing file keeps its permission bits), so a reader sees the
//                                old file or the new one, never a part;
//   anything else (a directory)  an error.
// Every write, fsync and close is checked: a full disk, /dev/full or an I/O error is a kIo error
// naming the path and the system's reason ("cannot write out.csv: No space left on device"), and
// leaves no temporary, empty or partial file behind.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.h"

namespace sb {

Result<void> WriteOutputFile(const std::filesystem::path& path, std::string_view bytes);

// The name error messages use for `path` ("standard output" for "-").
std::string OutputName(const std::filesystem::path& path);

// Flushes stdout and reports whether everything written to it since the last check reached it.
// Errors (kIo): "cannot write standard output: No space left on device". Clears the stream's
// error flag, so one failure is reported once. `broken_pipe` (optional) is set when the reason is
// EPIPE (the reader went away, e.g. `| head`).
Result<void> CheckStdout(bool* broken_pipe = nullptr);

}  // namespace sb
