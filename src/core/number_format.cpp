#include "core/number_format.h"

#include <algorithm>
#include <cstdio>

namespace sb {

std::string FixedGrouped(double v, int decimals) {
  decimals = std::clamp(decimals, 0, 9);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.size() > 1 && s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) {
    s.erase(0, 1);
  }
  const std::size_t begin = s[0] == '-' ? 1 : 0;
  const std::size_t end = std::min(s.find('.'), s.size());
  // Copied with the separators rather than inserted in place: GCC 12 warns (-Wrestrict, a false
  // positive in libstdc++'s insert) about the in-place version.
  const std::size_t digits = end - begin;
  std::string out;
  out.reserve(s.size() + digits / 3);
  out.append(s, 0, begin);
  for (std::size_t i = 0; i < digits; ++i) {
    if (i > 0 && (digits - i) % 3 == 0) {
      out.push_back(',');
    }
    out.push_back(s[begin + i]);
  }
  out.append(s, end, std::string::npos);
  return out;
}

std::string MillisecondsText(double ms) {
  return FixedGrouped(ms, ms < 9.95 && ms > -9.95 ? 1 : 0);
}

std::string CountOf(long long n, const std::string& singular, const std::string& plural) {
  return FixedGrouped(static_cast<double>(n), 0) + " " + (n == 1 ? singular : plural);
}

}  // namespace sb
