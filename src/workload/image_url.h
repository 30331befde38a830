// Images named in workload files (dataset "images", session "images"): a file path (relative to
// the file's folder) or a data: URL, always as a data: URL. Nothing is read from the network.
// Thread safety: pure functions (reads files).
#pragma once

#include <string>

#include "core/result.h"

namespace sb::workload {

// `item` as a data: URL: a data: URL as is; a file path read (relative to `dir` unless it
// starts with '/') and base64-encoded with its type from the extension (png unless jpg/jpeg,
// gif, webp, bmp). kUsage error, "image 'X': ..." or "cannot read image 'PATH'", for an http(s)
// URL or a file that cannot be read.
Result<std::string> ImageDataUrl(const std::string& item, const std::string& dir);

}  // namespace sb::workload
