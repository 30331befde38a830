// JUnit XML export of the quality tests, in the Apache Ant JUnit layout (testsuites > testsuite
// with properties, testcases, system-out, system-err), which Jenkins, GitLab, GitHub Actions
// reporters and most CI systems read.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/escape.h"
#include "core/redact.h"
#include "export/export.h"
#include "report/format.h"

namespace sb::exporter {

namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key, std::string fallback = "") {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

// The schema's xs:token: no leading/trailing/double spaces, no line breaks.
std::string Token(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      space = !out.empty();
      continue;
    }
    if (space) {
      out += ' ';
      space = false;
    }
    out += c;
  }
  return out;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  return s;
}

// "2026-12-03T10:36:07Z" -> "2026-12-03T10:36:07" (the schema's timestamp has no zone).
std::string Timestamp(const json& results) {
  std::string s = Str(results, "started_at");
  if (s.size() >= 19 && s[4] == '-' && s[10] == 'T') {
    return s.substr(0, 19);
  }
  return "1970-01-01T00:00:00";
}

// The endpoint's host, or localhost.
std::string Host(const json& results) {
  std::string url = results.contains("target") ? Str(results["target"], "endpoint") : "";
  auto scheme = url.find("://");
  if (scheme == std::string::npos) {
    return "localhost";
  }
  std::string rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = rest.rfind('@'); at != std::string::npos) {
    rest = rest.substr(at + 1);  // never credentials
  }
  if (!rest.empty() && rest.front() == '[') {
    rest = rest.substr(1, rest.find(']') - 1);
  } else {
    rest = rest.substr(0, rest.find(':'));
  }
  return rest.empty() ? "localhost" : Token(rest);
}

std::string Seconds(const json& t, const char* key) {
  double ms = t.contains(key) && t[key].is_number() ? t[key].get<double>() : 0;
  return fmt::format("{:.3f}", std::max(0.0, ms) / 1000.0);
}

struct Suite {
  std::string category;
  std::vector<const json*> tests;
};

struct SuiteTotals {
  int failures = 0, errors = 0, skipped = 0;
  double time = 0;
};

struct SuiteHeader {
  std::string package;
  std::size_t id = 0;
  std::string name, timestamp, host;
};

// One quality test's <testcase>, counted into `n`.
std::string TestCase(const json& t, const std::string& category, SuiteTotals& n) {
  std::string status = Upper(Str(t, "status"));
  std::string reason = Str(t, "reason");
  std::string id = Str(t, "id", "test");
  std::string name = Str(t, "name", id);
  if (t.contains("repeat") && t["repeat"].is_number()) {
    name += fmt::format(" #{}", t["repeat"].get<long long>());
  }
  std::string secs = Seconds(t, "time_ms");
  n.time += std::stod(secs);
  std::string out = fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
                                XmlEscape(Token(name + " (" + id + ")")),
                                XmlEscape(Token("servebench." + category)), secs);
  std::string message = reason.empty() ? status : status + ": " + reason;
  if (status == "PASS") {
    return out + "/>\n";
  }
  if (status == "FAIL" || status == "LOOP") {
    ++n.failures;
    out += fmt::format(">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n", status,
                       XmlEscape(message), XmlEscape(reason));
  } else if (status == "UNSUPPORTED" || status == "EMPTY") {
    ++n.skipped;
    out += fmt::format(">\n      <skipped message=\"{}\"/>\n", XmlEscape(message));
  } else {  // ERROR, TIMEOUT, or a status this version does not know
    ++n.errors;
    out += fmt::format(">\n      <error type=\"{}\" message=\"{}\">{}</error>\n",
                       XmlEscape(Token(status.empty() ? "ERROR" : status)), XmlEscape(message),
                       XmlEscape(reason));
  }
  return out + "    </testcase>\n";
}

std::string SuiteXml(const SuiteHeader& h,
                     const std::vector<std::pair<std::string, std::string>>& props,
                     const SuiteTotals& n, std::size_t tests, const std::string& cases,
                     const std::string& system_out) {
  std::string body = fmt::format(
      "  <testsuite package=\"{}\" id=\"{}\" name=\"{}\" timestamp=\"{}\" hostname=\"{}\" "
      "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
      XmlEscape(h.package), h.id, XmlEscape(Token(h.name)), h.timestamp, XmlEscape(h.host), tests,
      n.failures, n.errors, n.skipped, n.time);
  body += "    <properties>\n";
  for (const auto& [k, v] : props) {
    body += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", k, XmlEscape(v));
  }
  body += "    </properties>\n" + cases;
  body += fmt::format("    <system-out>{}</system-out>\n    <system-err></system-err>\n",
                      XmlEscape(system_out));
  return body + "  </testsuite>\n";
}

// The run's gates (results.json "gates"): for the SLO gate (--fail-on-slo), one <testcase> per
// level or rate point checked, a <failure> naming the objectives missed; when nothing could be
// checked, one failing testcase saying why. Empty when the run has no gate.
std::string GatesSuite(const json& gates, const SuiteHeader& h,
                       const std::vector<std::pair<std::string, std::string>>& props) {
  const json slo = gates.value("slo", json());
  if (!slo.is_object()) {
    return "";
  }
  std::string objectives;
  const json given = slo.value("slo", json::object());
  for (const auto& [k, v] : given.items()) {
    if (v.is_number()) {
      objectives += fmt::format("{}{}={:g}", objectives.empty() ? "" : ",", k, v.get<double>());
    }
  }
  const std::string classname = "servebench.gates.slo";
  SuiteTotals n;
  std::string cases;
  std::size_t tests = 0;
  auto add = [&](const std::string& name, bool met, const std::string& message) {
    ++tests;
    cases += fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"0.000\"",
                         XmlEscape(Token(name)), classname);
    if (met) {
      cases += "/>\n";
      return;
    }
    ++n.failures;
    cases +=
        fmt::format(">\n      <failure type=\"SLO\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    XmlEscape(message), XmlEscape(message));
  };
  for (const json& c : slo.value("checks", json::array())) {
    const std::string where = Str(c, "where", "?");
    std::vector<std::string> missed;
    for (const json& f : c.value("failed", json::array())) {
      if (f.is_string()) {
        missed.push_back(f.get<std::string>());
      }
    }
    const bool met = c.value("met", false);
    add(fmt::format("SLO {} at {}", objectives, where), met,
        fmt::format("--slo {} not met at {}{}{}", objectives, where,
                    missed.empty() ? "" : ": missed ", fmt::join(missed, ", ")));
  }
  if (tests == 0) {
    add(fmt::format("SLO {}", objectives), false,
        fmt::format("--slo {} not checked: {}", objectives,
                    Str(slo, "reason", "nothing measured")));
  }
  return SuiteXml(h, props, n, tests, cases,
                  fmt::format("--fail-on-slo: {} of {} check{} met", tests - n.failures, tests,
                              tests == 1 ? "" : "s"));
}

}  // namespace

std::string ToJunit(const json& results) {
  std::vector<Suite> suites;
  if (results.contains("tests") && results["tests"].is_array()) {
    for (const json& t : results["tests"]) {
      if (!t.is_object()) {
        continue;
      }
      std::string cat = Str(t, "category", "uncategorised");
      auto it = std::find_if(suites.begin(), suites.end(),
                             [&](const Suite& s) { return s.category == cat; });
      if (it == suites.end()) {
        suites.push_back(Suite{cat, {}});
        it = suites.end() - 1;
      }
      it->tests.push_back(&t);
    }
  }
  const json target = results.value("target", json::object());
  std::vector<std::string> suite_names;
  if (results.contains("suite") && results["suite"].is_object()) {
    for (const json& n : results["suite"].value("names", json::array())) {
      if (n.is_string()) {
        suite_names.push_back(n.get<std::string>());
      }
    }
  }
  std::string package = Token(fmt::format(
      "servebench.{}",
      suite_names.empty() ? std::string("tests") : fmt::format("{}", fmt::join(suite_names, "+"))));
  std::string model = Str(target, "model", "unknown model");
  std::string timestamp = Timestamp(results);
  std::string host = Host(results);
  // Properties: what the tests ran against.
  std::vector<std::pair<std::string, std::string>> props = {
      {"model", model},
      {"endpoint", RedactUrl(Str(target, "endpoint"))},
      {"server.kind", target.contains("server") ? Str(target["server"], "kind") : ""},
      {"server.version", target.contains("server") ? Str(target["server"], "version") : ""},
      {"servebench.version",
       results.contains("tool") ? Str(results["tool"], "version") : std::string()},
      {"run.status", Str(results, "status")},
      {"run.started_at", Str(results, "started_at")},
  };
  std::string body;
  for (std::size_t i = 0; i < suites.size(); ++i) {
    const Suite& s = suites[i];
    SuiteTotals n;
    std::string cases;
    for (const json* t : s.tests) {
      cases += TestCase(*t, s.category, n);
    }
    body += SuiteXml({package, i, s.category, timestamp, host}, props, n, s.tests.size(), cases,
                     fmt::format("{} {} tests against {}", s.tests.size(), s.category, model));
  }
  if (results.contains("gates") && results["gates"].is_object()) {
    body += GatesSuite(results["gates"],
                       {"servebench.gates", suites.size(), "gates", timestamp, host}, props);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  // The Ant schema gives <testsuites> no attributes: the totals are in each <testsuite>.
  out += "<testsuites>\n";
  return out + body + "</testsuites>\n";
}

}  // namespace sb::exporter
