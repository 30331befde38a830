// report.md tables declared as columns (columns.h).
#include "report/columns.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/format.h"
#include "report/profile_rows.h"

namespace sb::report {

namespace {

using nlohmann::json;

// The value at path in row (core/json_read.h's Find, key by key); nullptr when absent or null.
const json* At(const json& row, const FieldPath& path) {
  const json* v = &row;
  for (std::string_view key : path) {
    if (key.empty()) {
      break;
    }
    if (v = Find(*v, {key}); v == nullptr) {
      return nullptr;
    }
  }
  return v == &row || v->is_null() ? nullptr : v;
}

// A finite number, as NumberAt reads one; nullopt otherwise.
std::optional<double> Number(const json* v) {
  return v != nullptr ? NumberAt(*v, {}) : std::nullopt;
}

std::string Format(std::optional<double> v, CellFormat f) {
  switch (f) {
    case CellFormat::kFixed1:
      return FormatFixed1(v);
    case CellFormat::kFixed2:
      return FormatFixed2(v);
    case CellFormat::kMs:
      return FormatMs(v);
    case CellFormat::kSeconds:
      return FormatSeconds(v);
    case CellFormat::kErrors: {
      std::string s = FormatCount(v);
      return v && *v > 0 ? "**" + s + "**" : s;
    }
    default:
      return FormatCount(v);
  }
}

std::string Write(const ProfileSpec& p, const json& row, std::size_t index, const ColumnSpec& c) {
  if (c.cell != nullptr) {
    return c.cell(row, index);
  }
  if (c.format == CellFormat::kPlace) {
    return MarkdownCell(RowPlace(row, p));
  }
  if (c.format == CellFormat::kLevel) {
    return FormatCount(NumberAt(row, {p.dim}));
  }
  const json* v = At(row, c.path);
  if (c.format == CellFormat::kText) {
    return MarkdownCell(v != nullptr && v->is_string() ? v->get<std::string>()
                                                       : std::string(kMissing));
  }
  if (c.stats.front().empty()) {
    return Format(Number(v), c.format);
  }
  std::string out;
  for (std::string_view stat : c.stats) {
    if (stat.empty()) {
      break;
    }
    const auto x = v != nullptr ? NumberAt(*v, {stat}) : std::nullopt;
    out += (out.empty() ? "" : " / ") + Format(x, c.format);
  }
  return out;
}

bool Shown(const std::vector<const json*>& rows, const ColumnSpec& c) {
  switch (c.show) {
    case Show::kAnyNonZero:
      return std::any_of(rows.begin(), rows.end(), [&c](const json* r) {
        auto v = Number(At(*r, c.path));
        return v && *v != 0;
      });
    case Show::kAnyPresent:
      return std::any_of(rows.begin(), rows.end(),
                         [&c](const json* r) { return At(*r, c.path) != nullptr; });
    default:
      return true;
  }
}

}  // namespace

bool ClientBound(const json& row) {
  return BoolAt(row, {"self_check", "client_bound"}).value_or(false);
}

MarkdownTable ColumnsTable(const ProfileSpec& p, const std::vector<const json*>& rows,
                           std::span<const ColumnSpec> columns) {
  std::vector<const ColumnSpec*> shown;
  std::vector<Column> headers;
  for (const ColumnSpec& c : columns) {
    if (Shown(rows, c)) {
      shown.push_back(&c);
      headers.push_back({std::string(c.header), c.align});
    }
  }
  MarkdownTable t(std::move(headers));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> cells;
    for (const ColumnSpec* c : shown) {
      cells.push_back(Write(p, *rows[i], i, *c));
    }
    if (!cells.empty() && ClientBound(*rows[i])) {
      cells.front() += " (client-bound)";
    }
    t.AddRow(std::move(cells));
  }
  return t;
}

std::string ClientBoundNote(const std::vector<const json*>& rows) {
  if (std::none_of(rows.begin(), rows.end(), [](const json* r) { return ClientBound(*r); })) {
    return "";
  }
  return "**client-bound**: in the rows marked so, the client's self-check failed (events or "
         "requests waited in the client longer than `--late-ms` at p99, or token events arrived "
         "coalesced; the warnings say which): the client, not the server, limited those "
         "figures.\n\n";
}

std::string SkippedList(const ProfileSpec& p, const std::vector<const json*>& rows) {
  std::string out;
  for (const json* r : rows) {
    if (auto why = StringAt(*r, {"skipped"})) {
      out +=
          fmt::format("- {}: not sent, {}.\n", MarkdownCell(RowPlace(*r, p)), MarkdownCell(*why));
    }
  }
  return out.empty() ? out : out + "\n";
}

}  // namespace sb::report
