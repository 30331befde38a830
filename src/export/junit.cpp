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
    int failures = 0;
    int errors = 0;
    int skipped = 0;
    double time = 0;
    std::string cases;
    for (const json* t : s.tests) {
      std::string status = Upper(Str(*t, "status"));
      std::string reason = Str(*t, "reason");
      std::string id = Str(*t, "id", "test");
      std::string name = Str(*t, "name", id);
      if (t->contains("repeat") && (*t)["repeat"].is_number()) {
        name += fmt::format(" #{}", (*t)["repeat"].get<long long>());
      }
      std::string secs = Seconds(*t, "time_ms");
      time += std::stod(secs);
      cases += fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
                           XmlEscape(Token(name + " (" + id + ")")),
                           XmlEscape(Token("servebench." + s.category)), secs);
      std::string message = reason.empty() ? status : status + ": " + reason;
      if (status == "PASS") {
        cases += "/>\n";
        continue;
      }
      if (status == "FAIL" || status == "LOOP") {
        ++failures;
        cases += fmt::format(">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n", status,
                             XmlEscape(message), XmlEscape(reason));
      } else if (status == "UNSUPPORTED" || status == "EMPTY") {
        ++skipped;
        cases += fmt::format(">\n      <skipped message=\"{}\"/>\n", XmlEscape(message));
      } else {  // ERROR, TIMEOUT, or a status this version does not know
        ++errors;
        cases += fmt::format(">\n      <error type=\"{}\" message=\"{}\">{}</error>\n",
                             XmlEscape(Token(status.empty() ? "ERROR" : status)),
                             XmlEscape(message), XmlEscape(reason));
      }
      cases += "    </testcase>\n";
    }
    body += fmt::format(
        "  <testsuite package=\"{}\" id=\"{}\" name=\"{}\" timestamp=\"{}\" hostname=\"{}\" "
        "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
        XmlEscape(package), i, XmlEscape(Token(s.category)), timestamp, XmlEscape(host),
        s.tests.size(), failures, errors, skipped, time);
    body += "    <properties>\n";
    for (const auto& [k, v] : props) {
      body += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", k, XmlEscape(v));
    }
    body += "    </properties>\n" + cases;
    body += fmt::format(
        "    <system-out>{}</system-out>\n    <system-err></system-err>\n",
        XmlEscape(fmt::format("{} {} tests against {}", s.tests.size(), s.category, model)));
    body += "  </testsuite>\n";
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  // The Ant schema gives <testsuites> no attributes: the totals are in each <testsuite>.
  out += "<testsuites>\n";
  return out + body + "</testsuites>\n";
}

}  // namespace sb::exporter
