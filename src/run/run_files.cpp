#include "run/run_files.h"

#include <fstream>

#include <fmt/format.h>

namespace sb::run {

using nlohmann::json;

Result<json> ReadJsonFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kSetup, fmt::format("cannot read {}", p.string()));
  }
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return MakeError(ErrorCode::kSetup, fmt::format("{} is not valid JSON", p.string()));
  }
  return j;
}

}  // namespace sb::run
