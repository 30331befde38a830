// Internal: a GitHub-flavoured Markdown table. Cells are written as given, so callers escape
// text with MarkdownCell() first. Numbers are right-aligned (`---:`), text left (`---`).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sb::report {

enum class Align { kLeft, kRight };

struct Column {
  std::string header;
  Align align = Align::kLeft;
};

class MarkdownTable {
 public:
  explicit MarkdownTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // REQUIRES: cells.size() == number of columns (missing cells are padded with "").
  void AddRow(std::vector<std::string> cells) {
    cells.resize(columns_.size());
    rows_.push_back(std::move(cells));
  }

  bool empty() const { return rows_.empty(); }

  // Header, separator and rows, each line ending in '\n'.
  std::string Render() const {
    std::string out = "|";
    for (const Column& c : columns_) {
      out += " " + c.header + " |";
    }
    out += "\n|";
    for (const Column& c : columns_) {
      out += c.align == Align::kRight ? "---:|" : "---|";
    }
    out += "\n";
    for (const auto& row : rows_) {
      out += "|";
      for (const std::string& cell : row) {
        out += cell.empty() ? " |" : " " + cell + " |";
      }
      out += "\n";
    }
    return out;
  }

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace sb::report
