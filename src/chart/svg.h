// SVG text helpers for the charts: the two number formats of the output —
// pixel coordinates (two decimals at most, so the output is small and deterministic) and data
// values (the shortest text that reads back as the same double, so a data-y attribute equals
// the value in results.json exactly).
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/escape.h"  // XmlEscape, for every chart's text

namespace sb::chart {

// A pixel coordinate: at most two decimals, trailing zeros dropped, "-0" written "0":
// 12.3456 -> "12.35", 40.0 -> "40".
std::string Px(double v);

// A data value: the shortest decimal that parses back to the same double ("198.7", "0.1",
// "1e+21"); NaN and infinities (never written by servebench) become "NaN"/"inf"/"-inf".
std::string Num(double v);

// A value for a hover title: thousands grouped with `decimals` digits: 1119.84 -> "1,119.8".
std::string Readable(double v, int decimals);

}  // namespace sb::chart
