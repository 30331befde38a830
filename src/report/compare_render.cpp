// Renderers of a Comparison (compare.h): Markdown, JSON and a plain self-contained HTML page.
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "report/format.h"
#include "report/html_figure.h"
#include "report/table.h"

namespace sb::report {

namespace {

using ojson = nlohmann::ordered_json;

std::string Title(const Comparison& c) {
  std::vector<std::string> labels;
  for (const auto& r : c.runs) {
    labels.push_back(r.label);
  }
  return fmt::format("servebench compare: {}", fmt::join(labels, " vs "));
}

std::string Or(const std::optional<std::string>& s) {
  return s.value_or(std::string(kMissing));
}

std::string_view BetterName(Better b) {
  switch (b) {
    case Better::kHigher:
      return "higher";
    case Better::kLower:
      return "lower";
    case Better::kNone:
      return "none";
  }
  return "none";
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kMissing:
      return "missing";
    case Verdict::kBetter:
      return "better";
    case Verdict::kWithinNoise:
      return "within_noise";
    case Verdict::kNoInterval:
      return "no_interval";
    case Verdict::kEqual:
      return "equal";
    case Verdict::kCountDiff:
      return "count_difference";
  }
  return "missing";
}

std::string Label(const Comparison& c, std::size_t i) {
  return i < c.runs.size() ? c.runs[i].label : std::string(kMissing);
}

// Whole numbers (counts) are written as integers, everything else as it is.
ojson OptNum(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) {
    return nullptr;
  }
  if (std::trunc(*v) == *v && std::fabs(*v) < 9e15) {
    return static_cast<long long>(*v);
  }
  return *v;
}

std::string TestName(const TestChange& ch) {
  return ch.name == ch.id ? ch.id : ch.name + " (" + ch.id + ")";
}

}  // namespace

std::string RenderCompareMarkdown(const Comparison& c) {
  std::string out = "# " + MarkdownCell(Title(c), std::string::npos) + "\n\n";
  MarkdownTable who({{"Run"}, {"Model"}, {"Server"}, {"Endpoint"}, {"Status"}, {"Started"}});
  for (const CompareRunInfo& r : c.runs) {
    who.AddRow({MarkdownCell(r.label), MarkdownCell(Or(r.model)), MarkdownCell(r.server),
                MarkdownCell(Or(r.endpoint)), MarkdownCell(Or(r.status)),
                MarkdownCell(Or(r.started_at))});
  }
  out += who.Render() + "\n";
  for (const std::string& n : c.notes) {
    out += "- " + MarkdownCell(n, std::string::npos) + "\n";
  }
  for (const std::string& w : c.warnings) {
    out += "- **Warning:** " + MarkdownCell(w, std::string::npos) + "\n";
  }
  if (!c.notes.empty() || !c.warnings.empty()) {
    out += "\n";
  }
  for (const CompareSection& s : c.sections) {
    std::vector<Column> cols = {{"Metric"}};
    for (const CompareRunInfo& r : c.runs) {
      cols.push_back({MarkdownCell(r.label), Align::kRight});
    }
    cols.push_back({"Advantage"});
    MarkdownTable t(cols);
    for (const CompareRow& row : s.rows) {
      std::vector<std::string> cells = {MarkdownCell(row.metric)};
      for (const CompareCell& v : row.cells) {
        cells.push_back(MarkdownCell(v.text));
      }
      cells.push_back(MarkdownCell(row.judgement.text));
      t.AddRow(std::move(cells));
    }
    out += "## " + s.title + "\n\n";
    if (!s.note.empty()) {
      out += s.note + "\n\n";
    }
    out += t.Render() + "\n";
  }
  if (!c.paired.empty() || !c.changes.empty()) {
    out += "## Quality: tests both runs ran\n\n";
    for (const PairedQuality& p : c.paired) {
      out += MarkdownCell(p.text, std::string::npos) + "\n\n";
    }
    if (!c.changes.empty()) {
      MarkdownTable t({{"Test"}, {"Runs"}, {"Change"}, {"Reason"}});
      for (const TestChange& ch : c.changes) {
        t.AddRow({MarkdownCell(TestName(ch)),
                  MarkdownCell(Label(c, ch.base) + " → " + Label(c, ch.other)),
                  MarkdownCell(ch.change), MarkdownCell(ch.reason)});
      }
      out += t.Render() + "\n";
    } else {
      out += "No test changed status.\n\n";
    }
  }
  out += c.method + "\n";
  return out;
}

std::string RenderCompareJson(const Comparison& c) {
  ojson doc = {{"schema", "servebench.compare/2"}};
  ojson runs = ojson::array();
  auto opt = [](const std::optional<std::string>& s) { return s ? ojson(*s) : ojson(nullptr); };
  for (const CompareRunInfo& r : c.runs) {
    runs.push_back({{"label", r.label},
                    {"model", opt(r.model)},
                    {"endpoint", opt(r.endpoint)},
                    {"server_kind", opt(r.server_kind)},
                    {"server_version", opt(r.server_version)},
                    {"simulated", r.simulated},
                    {"status", opt(r.status)},
                    {"started_at", opt(r.started_at)},
                    {"samples", r.has_samples}});
  }
  doc["runs"] = std::move(runs);
  doc["notes"] = c.notes;
  doc["warnings"] = c.warnings;
  doc["method"] = c.method;
  doc["equivalence_pct"] = c.equivalence_pct;
  ojson sections = ojson::array();
  for (const CompareSection& s : c.sections) {
    ojson rows = ojson::array();
    for (const CompareRow& row : s.rows) {
      ojson values = ojson::array();
      ojson display = ojson::array();
      ojson n = ojson::array();
      for (const CompareCell& v : row.cells) {
        values.push_back(OptNum(v.value));
        display.push_back(v.text);
        n.push_back(v.samples.size());
      }
      ojson jr = {{"metric", row.metric}, {"key", row.key},
                  {"unit", row.unit},     {"better", BetterName(row.better)},
                  {"values", values},     {"display", display},
                  {"samples", n}};
      if (row.counts && !row.cells.empty()) {
        ojson pass = ojson::array();
        ojson total = ojson::array();
        for (const CompareCell& v : row.cells) {
          pass.push_back(OptNum(v.pass));
          total.push_back(OptNum(v.total));
        }
        jr["pass"] = std::move(pass);
        jr["total"] = std::move(total);
      }
      const Judgement& j = row.judgement;
      ojson noise = ojson::array();
      for (std::size_t i : j.within_noise) {
        noise.push_back(Label(c, i));
      }
      jr["advantage"] = {
          {"text", j.text},
          {"verdict", j.same ? std::string_view("same") : VerdictName(j.verdict)},
          {"winner", j.winner ? ojson(Label(c, *j.winner)) : ojson(nullptr)},
          {"winner_index", j.winner ? ojson(*j.winner) : ojson(nullptr)},
          {"ratio", OptNum(j.ratio)},
          {"ci95", j.ci_low ? ojson::array({*j.ci_low, *j.ci_high}) : ojson(nullptr)},
          {"statistic", row.quantile == 0.5 ? std::string("median")
                                            : fmt::format("p{}", std::lround(row.quantile * 100))},
          {"within_noise", noise}};
      rows.push_back(std::move(jr));
    }
    sections.push_back({{"id", s.id}, {"title", s.title}, {"note", s.note}, {"rows", rows}});
  }
  doc["sections"] = std::move(sections);
  ojson quality = ojson::array();
  for (const PairedQuality& p : c.paired) {
    quality.push_back({{"base", Label(c, p.base)},
                       {"other", Label(c, p.other)},
                       {"shared", p.shared},
                       {"both_pass", p.both_pass},
                       {"base_only", p.base_only},
                       {"other_only", p.other_only},
                       {"neither", p.neither},
                       {"mcnemar_p", p.p_value},
                       {"text", p.text}});
  }
  doc["quality"] = std::move(quality);
  ojson changes = ojson::array();
  for (const TestChange& ch : c.changes) {
    changes.push_back({{"base", Label(c, ch.base)},
                       {"other", Label(c, ch.other)},
                       {"id", ch.id},
                       {"name", ch.name},
                       {"from", ch.from},
                       {"to", ch.to},
                       {"change", ch.change},
                       {"reason", ch.reason}});
  }
  doc["test_changes"] = std::move(changes);
  return doc.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

std::string RenderCompareHtml(const Comparison& c) {
  std::string title = XmlEscape(Title(c));
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>{}</title>\n<style>\n{}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
      title, html::Stylesheet(), title);
  out +=
      "<table>\n<tr><th>Run</th><th>Model</th><th>Server</th><th>Endpoint</th>"
      "<th>Status</th><th>Started</th></tr>\n";
  for (const CompareRunInfo& r : c.runs) {
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        XmlEscape(r.label), XmlEscape(Or(r.model)), XmlEscape(r.server), XmlEscape(Or(r.endpoint)),
        XmlEscape(Or(r.status)), XmlEscape(Or(r.started_at)));
  }
  out += "</table>\n";
  if (!c.notes.empty() || !c.warnings.empty()) {
    out += "<ul>\n";
    for (const std::string& n : c.notes) {
      out += "<li>" + XmlEscape(n) + "</li>\n";
    }
    for (const std::string& w : c.warnings) {
      out += "<li><strong>Warning:</strong> " + XmlEscape(w) + "</li>\n";
    }
    out += "</ul>\n";
  }
  for (const CompareSection& s : c.sections) {
    out += "<h2>" + XmlEscape(s.title) + "</h2>\n";
    if (!s.note.empty()) {
      out += "<p>" + XmlEscape(s.note) + "</p>\n";
    }
    out += "<table>\n<tr><th>Metric</th>";
    for (const CompareRunInfo& r : c.runs) {
      out += "<th>" + XmlEscape(r.label) + "</th>";
    }
    out += "<th>Advantage</th></tr>\n";
    for (const CompareRow& row : s.rows) {
      out += "<tr><td>" + XmlEscape(row.metric) + "</td>";
      for (const CompareCell& v : row.cells) {
        out += "<td class=\"num\">" + XmlEscape(v.text) + "</td>";
      }
      out += "<td>" + XmlEscape(row.judgement.text) + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  if (!c.paired.empty() || !c.changes.empty()) {
    out += "<h2>Quality: tests both runs ran</h2>\n";
    for (const PairedQuality& p : c.paired) {
      out += "<p>" + XmlEscape(p.text) + "</p>\n";
    }
    if (!c.changes.empty()) {
      out += "<table>\n<tr><th>Test</th><th>Runs</th><th>Change</th><th>Reason</th></tr>\n";
      for (const TestChange& ch : c.changes) {
        out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                           XmlEscape(TestName(ch)),
                           XmlEscape(Label(c, ch.base) + " → " + Label(c, ch.other)),
                           XmlEscape(ch.change), XmlEscape(ch.reason));
      }
      out += "</table>\n";
    }
  }
  out += "<p>" + XmlEscape(c.method) + "</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace sb::report
