// Internal to sb_report: a report.md table declared as columns. Each column names the field of a
// row it shows and how ("TTFT p50 / p99 (ms)": the row's from_scheduled.ttft_ms, its p50 and
// p99, as milliseconds); one function draws any profile's rows by such a list. The profiles
// whose sections are their own (core/profile_table.h, own_sections) declare their tables so in
// markdown_speed.cpp, markdown_replay.cpp and markdown_sessions.cpp; the profiles drawn from
// their metrics alone (profile_rows.h) need no list.
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/profile_table.h"
#include "report/table.h"

namespace sb::report {

// How a column writes its value (report/format.h's formats).
enum class CellFormat {
  kCount,    // "4,096"
  kFixed1,   // "198.7"
  kFixed2,   // "2.13"
  kMs,       // "41", "5.0"
  kSeconds,  // "0.82", "444.8"
  kErrors,   // a count, bold when not zero: errors must catch the eye
  kText,     // a string, escaped for a cell
  kLevel,    // where the row sits in a numeric sweep: the profile's dim field, a count
  kPlace,    // where the row sits, a count or a name: the profile's dim field, escaped
};

// When a column is in the table at all.
enum class Show {
  kAlways,
  kAnyNonZero,  // some row's value is a number other than 0 (an Errors column)
  kAnyPresent,  // some row has the field (an optional measurement: cached TTFT)
};

// A path into a row, up to three keys; unused keys are empty.
using FieldPath = std::array<std::string_view, 3>;

// A cell written by code of its own, for what a path and a format cannot say ("✅", a note);
// `index` is the row's position, from 0.
using CellWriter = std::string (*)(const nlohmann::json& row, std::size_t index);

// The tails a latency column shows: "p50 / p90 / p99".
inline constexpr std::array<std::string_view, 3> kTailStats = {"p50", "p90", "p99"};

struct ColumnSpec {
  std::string_view header;
  // The field: a number, a string (kText), or a statistics object whose `stats` are shown.
  FieldPath path = {};
  CellFormat format = CellFormat::kCount;
  // Statistics of the object at `path`, joined by " / " ("p50", "p99"); none: the field itself.
  std::array<std::string_view, 3> stats = {};
  Show show = Show::kAlways;
  Align align = Align::kRight;
  CellWriter cell = nullptr;  // set: writes the cell instead of path and format
};

// The table of `rows` (a profile p's rows) by `columns`, the columns whose Show rule holds.
// A row the client's self-check found client-bound (self_check.client_bound) has
// " (client-bound)" after its first cell (ClientBoundNote says what that means).
MarkdownTable ColumnsTable(const ProfileSpec& p, const std::vector<const nlohmann::json*>& rows,
                           std::span<const ColumnSpec> columns);

// True when row's self-check found the client, not the server, the bottleneck.
bool ClientBound(const nlohmann::json& row);

// The note under a table with a client-bound row ("" when none is).
std::string ClientBoundNote(const std::vector<const nlohmann::json*>& rows);

// "- <place>: not sent, <why>.\n" for each row that has a "skipped" reason, then a blank line;
// "" when none has.
std::string SkippedList(const ProfileSpec& p, const std::vector<const nlohmann::json*>& rows);

}  // namespace sb::report
