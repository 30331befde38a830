#include "chart/svg.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace sb::chart {

std::string Px(double v) {
  if (!std::isfinite(v)) {
    return "0";
  }
  std::string s = fmt::format("{:.2f}", v);
  while (!s.empty() && s.back() == '0') {
    s.pop_back();
  }
  if (!s.empty() && s.back() == '.') {
    s.pop_back();
  }
  if (s == "-0") {
    s = "0";
  }
  return s;
}

std::string Num(double v) {
  if (std::isnan(v)) {
    return "NaN";
  }
  if (std::isinf(v)) {
    return v > 0 ? "inf" : "-inf";
  }
  return fmt::format("{}", v);  // shortest round-trip representation
}

std::string Readable(double v, int decimals) {
  if (!std::isfinite(v)) {
    return Num(v);
  }
  std::string s = fmt::format("{:.{}f}", std::abs(v), decimals < 0 ? 0 : decimals);
  const auto dot = s.find('.');
  std::string whole = s.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : s.substr(dot);
  std::string grouped;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) {
      grouped += ',';
    }
    grouped += whole[i];
  }
  const bool negative = v < 0 && s.find_first_not_of("0.") != std::string::npos;
  return (negative ? "-" : "") + grouped + frac;
}

}  // namespace sb::chart
