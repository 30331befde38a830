// `compare --format junit` with --max-regression: the regression gate as JUnit XML in the
// Apache Ant layout (tests/fixtures/junit), one <testcase> per gated row and run, so that CI
// systems list each gated metric (docs/compare.md "Gates in CI").
#include <string>

#include <fmt/format.h>

#include "core/escape.h"
#include "report/compare_gates.h"

namespace sb::report {

namespace {

// The schema's xs:token: single spaces, no line breaks.
std::string Token(const std::string& s) {
  std::string out;
  bool space = false;
  for (char ch : s) {
    if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) {
      out += ' ';
      space = false;
    }
    out += ch;
  }
  return out;
}

// "2026-12-03T10:36:07Z" -> "2026-12-03T10:36:07" (the schema's timestamp has no zone).
std::string Timestamp(const Comparison& c) {
  const std::optional<std::string>& s = c.runs.back().started_at;
  if (s && s->size() >= 19 && (*s)[4] == '-' && (*s)[10] == 'T') {
    return s->substr(0, 19);
  }
  return "1970-01-01T00:00:00";
}

std::string Case(const std::string& name, const std::string& failure) {
  std::string out =
      fmt::format("    <testcase name=\"{}\" classname=\"servebench.compare.gate\" time=\"0.000\"",
                  XmlEscape(Token(name)));
  if (failure.empty()) {
    return out + "/>\n";
  }
  return out + fmt::format(
                   ">\n      <failure type=\"regression\" message=\"{}\">{}</failure>\n"
                   "    </testcase>\n",
                   XmlEscape(failure), XmlEscape(failure));
}

}  // namespace

std::string RenderGateJunit(const Comparison& c, const GateResult& gate) {
  const std::string& base = c.runs.front().label;
  std::string cases;
  int failures = 0;
  for (const GateCheck& g : gate.checks) {
    const std::string& other = c.runs[g.other].label;
    std::string failure;
    if (g.failed) {
      ++failures;
      failure = fmt::format("{} [{}]: {} is {:.1f}% worse than {} (limit {:g}%), outside the noise",
                            g.metric, g.key, other, g.worse_pct.value_or(0), base, g.limit_pct);
    }
    cases += Case(fmt::format("{} [{}]: {} vs {}", g.metric, g.key, other, base), failure);
  }
  std::size_t tests = gate.checks.size();
  if (tests == 0) {  // nothing could be gated: the gate fails, and says so
    ++tests;
    ++failures;
    cases += Case("regression gate", gate.summary);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  out += fmt::format(
      "  <testsuite package=\"servebench.compare\" id=\"0\" name=\"regression gate\" "
      "timestamp=\"{}\" hostname=\"localhost\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"0\" time=\"0.000\">\n",
      Timestamp(c), tests, failures);
  out += "    <properties>\n";
  out +=
      fmt::format("      <property name=\"max_regression\" value=\"{}\"/>\n", XmlEscape(gate.text));
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    out += fmt::format("      <property name=\"run.{}\" value=\"{}\"/>\n", i,
                       XmlEscape(c.runs[i].label));
  }
  out += "    </properties>\n" + cases;
  out += fmt::format("    <system-out>{}</system-out>\n    <system-err></system-err>\n",
                     XmlEscape(gate.summary));
  return out + "  </testsuite>\n</testsuites>\n";
}

}  // namespace sb::report
