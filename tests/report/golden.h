// Golden-file helpers for the report writers: tests/report/data/*.json in, the exact text users
// see out (tests/report/golden/*). Run with UPDATE_GOLDEN=1 to rewrite the goldens, then review
// the diff as a reader would.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sb::report::testing {

// Parses tests/report/data/<name>; fails the test (and returns null) when it cannot.
nlohmann::json LoadData(const std::string& name);

// Compares `actual` with tests/report/golden/<name> byte for byte, or rewrites the file when
// UPDATE_GOLDEN=1.
void ExpectGolden(const std::string& actual, const std::string& name);

}  // namespace sb::report::testing
