// The one number format of everything servebench prints (console progress lines, the console
// summary, report.md, report.html): fixed-point with the integer part grouped in thousands,
// "3,317.6". Thread safety: pure functions.
#pragma once

#include <string>

namespace sb {

// v with `decimals` decimals (0..9), thousands separated by ',': 3317.62 -> "3,317.6" (1
// decimal). A value that rounds to zero never prints a minus sign ("-0.0" -> "0.0").
std::string FixedGrouped(double v, int decimals);

// Milliseconds without unit: an integer from 10 ms up ("41", "1,204"), one decimal below
// ("5.0"; 9.95 would round up to "10.0", so it joins the integers).
std::string MillisecondsText(double ms);

// "1 token", "2 tokens", "1,024 tokens": a count with its noun, plural unless the count is 1.
std::string CountOf(long long n, const std::string& singular, const std::string& plural);

}  // namespace sb
