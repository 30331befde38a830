// The speed profiles' failed requests of a results.json, in profile order, for the Errors
// sections of report.md and report.html (one list, so the two reports name the same requests).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sb::report {

struct FailedRequest {
  std::string profile;           // the profile table's name: "decode", "max-tokens" ...
  std::string request;           // "8 streams, request 3", "short run 2", ...
  const nlohmann::json* record;  // the request record (status, http_status, reason)
};

// Points into `results`, which must outlive the list.
std::vector<FailedRequest> FailedRequests(const nlohmann::json& results);

}  // namespace sb::report
