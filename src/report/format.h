// Internal helpers shared by the report writers: the null-safe reads of results.json
// (core/json_read.h, named here too), a profile's rows, and the number formats the reports use
// (the seeds' conventions: "47,716" tokens, "198.7" tok/s, "41" ms, "0.82s"/"444.8s"). Every
// reader returns std::nullopt for a missing, null or mistyped value, so a writer renders "—" for
// it and never a made-up 0. Nothing here throws.
// Thread safety: pure functions.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/escape.h"  // XmlEscape, for every page
#include "core/json_read.h"
#include "core/profile_table.h"

namespace sb::report {

// What every writer prints for a value that was not measured (null in results.json).
inline constexpr std::string_view kMissing = "—";

// ---- Null-safe reads (core/json_read.h) -----------------------------------------------------

using ::sb::ArrayAt;
using ::sb::BoolAt;
using ::sb::Find;
using ::sb::NumberAt;
using ::sb::NumbersAt;
using ::sb::StringAt;

// The rows profile `id` wrote into results.json's "perf" object (perf.<key>.<rows>, the profile
// table's names), in order; empty when it did not run.
std::vector<const nlohmann::json*> ProfileRows(const nlohmann::json& perf, ProfileId id);

// Where `row` of profile `id` sits in its sweep: its field named by the table's dim (concurrency,
// max_tokens, size ...); nullopt when missing or not a number.
std::optional<double> RowLevel(const nlohmann::json& row, ProfileId id);

// ---- Number formats (all return kMissing for nullopt) ----------------------------------------
// Fixed-point formats group the integer part in thousands: "1,119.8".

// 47716 -> "47,716"; rounds to the nearest integer.
std::string Thousands(long long v);

// A count (tokens, requests): "47,716".
std::string FormatCount(std::optional<double> v);

// One decimal, for tok/s: "198.7".
std::string FormatFixed1(std::optional<double> v);

// Two decimals: "2.13".
std::string FormatFixed2(std::optional<double> v);

// Milliseconds: an integer from 10 ms up ("41"), one decimal below ("5.0").
std::string FormatMs(std::optional<double> ms);

// Seconds without unit: one decimal from 1 s up ("444.8"), two below ("0.82", "0.7": a
// trailing zero is dropped) so that short requests do not all read "0.0".
std::string FormatSeconds(std::optional<double> s);

// A fraction as a percentage with one decimal, ".0" dropped: 0.909 -> "90.9%", 1 -> "100%".
std::string FormatPercent(std::optional<double> fraction);

// A ratio >= 1 with the multiplication sign: "3.9×". One decimal; two when one decimal would
// read "1.0×" (a real but small difference must not look like none).
std::string FormatRatio(double ratio);

// ---- Text -----------------------------------------------------------------------------------

// MarkdownCell and MarkdownInline: core/escape.h, the one escaping module.
using ::sb::MarkdownCell;
using ::sb::MarkdownInline;

// A user's text as a Markdown code span: MarkdownCell (uncut) between backticks, with longer
// fences when the text holds backticks ("a`b" -> "`` a`b ``").
std::string MarkdownCode(std::string_view text);

// "vllm" -> "vLLM", "sglang" -> "SGLang", "sim" -> "servebench simulator", ...; unknown kinds
// are returned as given.
std::string ServerKindName(std::string_view kind);

// "Qwen/Qwen3-8B at http://... (vLLM 0.11.0)"-style description of results["target"] used by
// every writer; says plainly when the target was the built-in simulator.
std::string DescribeTarget(const nlohmann::json& results);

// What results["labels"] gives the header's "Label:" line: --label (nullopt when none or empty)
// and each --tag as "k=v", in results.json's order; raw text, each writer escapes its own way.
struct RunLabels {
  std::optional<std::string> label;
  std::vector<std::string> tags;

  bool empty() const { return !label && tags.empty(); }
};

RunLabels LabelsOf(const nlohmann::json& results);

// "tool_calling" -> "Tool calling": '_' becomes a space ('-' stays: "multi-image"), the first
// letter is upper-cased; "ttft" -> "TTFT", "latency_throughput" -> "Latency & throughput".
std::string CategoryName(std::string_view category);

}  // namespace sb::report
