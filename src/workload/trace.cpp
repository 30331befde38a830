#include "workload/trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <variant>

#include <nlohmann/json.hpp>

namespace sb::workload {
namespace {

using nlohmann::json;

struct LineError {
  std::string what;
};

Error At(const std::string& name, int line, const std::string& what) {
  return Error{ErrorCode::kUsage, name + ":" + std::to_string(line) + ": " + what};
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  return s;
}

std::vector<std::string_view> SplitCsv(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const auto comma = line.find(',', start);
    out.push_back(Trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) {
      return out;
    }
    start = comma + 1;
  }
}

bool Double(std::string_view text, double& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return !text.empty() && ec == std::errc() && ptr == end && std::isfinite(out);
}

// A token count: a whole number in [min, 1e9] (CSV text or a JSON number).
bool Count(std::string_view text, int min, int& out) {
  double v = 0;
  if (!Double(text, v) || v != std::floor(v) || v < min || v > 1e9) {
    return false;
  }
  out = static_cast<int>(v);
  return true;
}

std::optional<int> JsonCount(const json& j, const char* key, int min) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>())) {
    return std::nullopt;
  }
  const double v = it->get<double>();
  if (v != std::floor(v) || v < min || v > 1e9) {
    return std::nullopt;
  }
  return static_cast<int>(v);
}

std::optional<double> JsonTime(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>()) ||
      it->get<double>() < 0) {
    return std::nullopt;
  }
  return it->get<double>();
}

// Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil).
std::int64_t DaysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// "2023-11-16 18:15:46.6805900" (fraction optional, any digits) -> µs since the epoch.
std::optional<std::int64_t> AzureTime(std::string_view t) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (t.size() < 19 || t[4] != '-' || t[7] != '-' || (t[10] != ' ' && t[10] != 'T') ||
      t[13] != ':' || t[16] != ':') {
    return std::nullopt;
  }
  auto num = [&](std::size_t at, std::size_t len, int& out) {
    const char* b = t.data() + at;
    auto [ptr, ec] = std::from_chars(b, b + len, out);
    return ec == std::errc() && ptr == b + len;
  };
  if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) ||
      !num(17, 2, s) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) {
    return std::nullopt;
  }
  std::int64_t us = 0;
  if (t.size() > 19) {
    if (t[19] != '.' || t.size() == 20) {
      return std::nullopt;
    }
    std::int64_t scale = 100000;
    for (std::size_t i = 20; i < t.size(); ++i) {
      if (t[i] < '0' || t[i] > '9') {
        return std::nullopt;
      }
      us += (t[i] - '0') * scale;
      scale /= 10;
    }
  }
  const std::int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return ((days * 24 + h) * 60 + mi) * 60'000'000LL + s * 1'000'000LL + us;
}

// One JSONL line (mooncake or jsonl) -> request; LineError on a bad line.
std::variant<TraceRequest, LineError> JsonLine(std::string_view line, TraceFormat format) {
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return LineError{"not a JSON object"};
  }
  TraceRequest r;
  const bool mooncake = format == TraceFormat::kMooncake;
  const char* time_key = mooncake ? "timestamp" : "timestamp_ms";
  const char* in_key = mooncake ? "input_length" : "input_tokens";
  const char* out_key = mooncake ? "output_length" : "output_tokens";
  const auto ms = JsonTime(j, time_key);
  if (!ms) {
    return LineError{std::string("\"") + time_key + "\" must be a number of ms >= 0"};
  }
  r.at_us = std::llround(*ms * 1000);
  const auto in = JsonCount(j, in_key, 1);
  const auto out = JsonCount(j, out_key, 1);
  if (!in) {
    return LineError{std::string("\"") + in_key + "\" must be a whole number >= 1"};
  }
  if (!out) {
    return LineError{std::string("\"") + out_key + "\" must be a whole number >= 1"};
  }
  r.input_tokens = *in;
  r.output_tokens = *out;
  if (mooncake) {
    const auto it = j.find("hash_ids");
    if (it != j.end()) {
      if (!it->is_array()) {
        return LineError{"\"hash_ids\" must be an array of integers"};
      }
      for (const auto& h : *it) {
        if (!h.is_number_integer()) {
          return LineError{"\"hash_ids\" must be an array of integers"};
        }
        r.hash_ids.push_back(h.get<std::int64_t>());
      }
    }
    return r;
  }
  if (const auto it = j.find("prompt"); it != j.end()) {
    if (!it->is_string()) {
      return LineError{"\"prompt\" must be a string"};
    }
    r.prompt = it->get<std::string>();
  }
  if (const auto it = j.find("messages"); it != j.end()) {
    if (!it->is_array() || it->empty()) {
      return LineError{"\"messages\" must be a non-empty chat array"};
    }
    r.messages_json = it->dump();
  }
  return r;
}

// A CSV row -> request, nullopt for a failed request to skip; LineError on a bad row.
std::variant<std::optional<TraceRequest>, LineError> CsvRow(
    const std::vector<std::string_view>& cells, TraceFormat format,
    const std::vector<int>& columns) {
  TraceRequest r;
  const std::string_view time = cells[static_cast<std::size_t>(columns[0])];
  if (format == TraceFormat::kBurstGpt) {
    double s = 0;
    if (!Double(time, s) || s < 0) {
      return LineError{"Timestamp must be a number of seconds >= 0, got '" + std::string(time) +
                       "'"};
    }
    r.at_us = std::llround(s * 1e6);
  } else {
    const auto us = AzureTime(time);
    if (!us) {
      return LineError{"TIMESTAMP must look like 2023-11-16 18:15:46.6805900, got '" +
                       std::string(time) + "'"};
    }
    r.at_us = *us;
  }
  const std::string_view in = cells[static_cast<std::size_t>(columns[1])];
  const std::string_view out = cells[static_cast<std::size_t>(columns[2])];
  const bool burst = format == TraceFormat::kBurstGpt;
  if (!Count(in, 0, r.input_tokens)) {
    return LineError{std::string(burst ? "Request tokens" : "ContextTokens") +
                     " must be a whole number >= 0, got '" + std::string(in) + "'"};
  }
  if (!Count(out, 0, r.output_tokens)) {
    return LineError{std::string(burst ? "Response tokens" : "GeneratedTokens") +
                     " must be a whole number >= 0, got '" + std::string(out) + "'"};
  }
  if (r.output_tokens == 0 || r.input_tokens == 0) {
    return std::optional<TraceRequest>();  // a failure the trace recorded
  }
  return std::optional<TraceRequest>(std::move(r));
}

// The columns (time, input, output) of a CSV header, or a LineError naming what is missing.
std::variant<std::vector<int>, LineError> CsvColumns(std::string_view header, TraceFormat f) {
  const auto cells = SplitCsv(header);
  const std::vector<std::string_view> want =
      f == TraceFormat::kBurstGpt
          ? std::vector<std::string_view>{"Timestamp", "Request tokens", "Response tokens"}
          : std::vector<std::string_view>{"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
  std::vector<int> cols;
  for (const auto w : want) {
    const auto it = std::find(cells.begin(), cells.end(), w);
    if (it == cells.end()) {
      return LineError{"the header has no column '" + std::string(w) + "'"};
    }
    cols.push_back(static_cast<int>(it - cells.begin()));
  }
  return cols;
}

}  // namespace

std::string_view TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kMooncake:
      return "mooncake";
    case TraceFormat::kBurstGpt:
      return "burstgpt";
    case TraceFormat::kAzure:
      return "azure";
    case TraceFormat::kJsonl:
      return "jsonl";
  }
  return "?";
}

std::optional<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (const auto f :
       {TraceFormat::kMooncake, TraceFormat::kBurstGpt, TraceFormat::kAzure, TraceFormat::kJsonl}) {
    if (name == TraceFormatName(f)) {
      return f;
    }
  }
  return std::nullopt;
}

std::optional<TraceFormat> DetectTraceFormat(std::string_view first_line) {
  const std::string_view line = Trim(first_line);
  if (line.starts_with('{')) {
    if (line.find("\"input_length\"") != std::string_view::npos ||
        line.find("\"hash_ids\"") != std::string_view::npos) {
      return TraceFormat::kMooncake;
    }
    if (line.find("\"timestamp_ms\"") != std::string_view::npos ||
        line.find("\"input_tokens\"") != std::string_view::npos) {
      return TraceFormat::kJsonl;
    }
    return std::nullopt;
  }
  if (line.find("Request tokens") != std::string_view::npos) {
    return TraceFormat::kBurstGpt;
  }
  if (line.find("ContextTokens") != std::string_view::npos) {
    return TraceFormat::kAzure;
  }
  return std::nullopt;
}

Result<Trace> ParseTrace(std::string_view text, const std::string& name,
                         std::optional<TraceFormat> format, std::size_t max_requests) {
  Trace trace;
  std::vector<int> columns;
  bool header_seen = false;
  int number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    const std::string_view line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++number;
    if (line.empty()) {
      continue;
    }
    if (!format) {
      format = DetectTraceFormat(line);
      if (!format) {
        return At(name, number,
                  "cannot tell the trace format from this line; name it with --trace-format "
                  "(mooncake, burstgpt, azure or jsonl)");
      }
    }
    trace.format = *format;
    const bool csv = *format == TraceFormat::kBurstGpt || *format == TraceFormat::kAzure;
    if (csv && !header_seen) {
      header_seen = true;
      auto cols = CsvColumns(line, *format);
      if (auto* e = std::get_if<LineError>(&cols)) {
        return At(name, number, e->what);
      }
      columns = std::get<std::vector<int>>(cols);
      continue;
    }
    if (csv) {
      const auto cells = SplitCsv(line);
      const int need = *std::max_element(columns.begin(), columns.end()) + 1;
      if (static_cast<int>(cells.size()) < need) {
        return At(name, number,
                  "expected at least " + std::to_string(need) + " columns, got " +
                      std::to_string(cells.size()));
      }
      auto row = CsvRow(cells, *format, columns);
      if (auto* e = std::get_if<LineError>(&row)) {
        return At(name, number, e->what);
      }
      auto& r = std::get<std::optional<TraceRequest>>(row);
      if (!r) {
        ++trace.skipped;
        continue;
      }
      r->line = number;
      trace.requests.push_back(std::move(*r));
      continue;
    }
    auto r = JsonLine(line, *format);
    if (auto* e = std::get_if<LineError>(&r)) {
      return At(name, number, e->what);
    }
    trace.requests.push_back(std::move(std::get<TraceRequest>(r)));
    trace.requests.back().line = number;
  }
  if (trace.requests.empty()) {
    return Error{ErrorCode::kUsage, name + ": the trace holds no requests"};
  }
  std::stable_sort(trace.requests.begin(), trace.requests.end(),
                   [](const TraceRequest& a, const TraceRequest& b) { return a.at_us < b.at_us; });
  if (max_requests > 0 && trace.requests.size() > max_requests) {
    trace.requests.resize(max_requests);
  }
  const std::int64_t first = trace.requests.front().at_us;
  for (auto& r : trace.requests) {
    r.at_us -= first;
  }
  return trace;
}

Result<Trace> ReadTrace(const std::string& path, std::optional<TraceFormat> format,
                        std::size_t max_requests) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{ErrorCode::kSetup, path + ": cannot read the trace file"};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseTrace(ss.str(), path, format, max_requests);
}

}  // namespace sb::workload
