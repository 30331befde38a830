// The memory-bandwidth table: built-in accelerators (DGX Spark, H100, H200, RTX, Jetson, Apple
// M-series, ...) with the vendor's peak figure and where it comes from, extendable from a JSON
// file. Names match case-insensitively, ignoring '-', '_' and spaces, with aliases ("spark",
// "gb10", "h100", "4090"). Bandwidth is in GB/s with 1 GB = 1e9 bytes, as vendors quote it.
// Thread safety: a const HardwareTable may be shared.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sb::roofline {

struct Hardware {
  std::string id;                    // "dgx-spark"
  std::string name;                  // "DGX Spark (GB10)"
  double bandwidth_gb_s = 0;         // peak memory bandwidth, 1e9 bytes/s
  std::vector<std::string> aliases;  // "spark", "gb10"
  std::string source;                // where the figure comes from
};

class HardwareTable {
 public:
  // The built-in entries (docs/roofline.md §4).
  static HardwareTable Builtin();

  // Adds entries from a JSON file:
  //   {"my-gpu": {"bandwidth_gb_s": 1000, "name": "My GPU", "aliases": ["mine"], "source": ".."}}
  // Only bandwidth_gb_s is required. An entry whose name equals an existing id updates that
  // entry (bandwidth, source, and name if given; its aliases are kept and the file's added);
  // new entries are searched before the built-in ones, so their aliases win. kSetup errors
  // name the file and the entry.
  Result<void> LoadFile(const std::filesystem::path& path);
  Result<void> AddJson(std::string_view json_text, const std::string& source);

  // The entry whose id or alias matches `name`; kUsage error listing the known ids otherwise.
  Result<Hardware> Find(std::string_view name) const;

  const std::vector<Hardware>& entries() const { return entries_; }

 private:
  std::vector<Hardware> entries_;
};

}  // namespace sb::roofline
