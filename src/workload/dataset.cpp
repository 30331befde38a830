#include "workload/dataset.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <variant>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "workload/image_url.h"

namespace sb::workload {
namespace {

using nlohmann::json;

struct LineError {
  std::string what;
};

Error At(const std::string& name, int line, const std::string& what) {
  return Error{ErrorCode::kUsage, name + ":" + std::to_string(line) + ": " + what};
}

std::variant<DatasetEntry, LineError> JsonlEntry(std::string_view line, const std::string& dir) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return LineError{"not a JSON object"};
  }
  DatasetEntry e;
  const auto prompt = j.find("prompt");
  const auto messages = j.find("messages");
  if ((prompt == j.end()) == (messages == j.end())) {
    return LineError{"give exactly one of \"prompt\" (a string) or \"messages\" (a chat array)"};
  }
  if (prompt != j.end()) {
    if (!prompt->is_string() || prompt->get_ref<const std::string&>().empty()) {
      return LineError{"\"prompt\" must be a non-empty string"};
    }
    e.prompt = prompt->get<std::string>();
  } else {
    if (!messages->is_array() || messages->empty()) {
      return LineError{"\"messages\" must be a non-empty chat array"};
    }
    for (const auto& m : *messages) {
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string() ||
          !m.contains("content")) {
        return LineError{"each of \"messages\" needs a \"role\" string and a \"content\""};
      }
    }
    e.messages_json = messages->dump();
  }
  if (const auto it = j.find("output_tokens"); it != j.end()) {
    if (!it->is_number() || it->get<double>() < 1 || it->get<double>() > 1e9 ||
        it->get<double>() != std::floor(it->get<double>())) {
      return LineError{"\"output_tokens\" must be a whole number >= 1"};
    }
    e.output_tokens = static_cast<int>(it->get<double>());
  }
  if (const auto it = j.find("images"); it != j.end()) {
    if (!it->is_array()) {
      return LineError{"\"images\" must be an array of file paths or data: URLs"};
    }
    if (e.prompt.empty()) {
      return LineError{"\"images\" go with \"prompt\" (put images inside \"messages\" as is)"};
    }
    for (const auto& item : *it) {
      if (!item.is_string()) {
        return LineError{"\"images\" must be an array of file paths or data: URLs"};
      }
      auto url = ImageDataUrl(item.get<std::string>(), dir);
      if (!url) {
        return LineError{url.error().message};
      }
      e.image_urls.push_back(std::move(url).value());
    }
  }
  return e;
}

Result<Dataset> ParseJsonl(std::string_view text, const std::string& name, bool skip_bad,
                           const std::string& dir) {
  Dataset d;
  d.format = DatasetFormat::kJsonl;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      continue;
    }
    auto entry = JsonlEntry(line, dir);
    if (auto* bad = std::get_if<LineError>(&entry)) {
      if (!skip_bad) {
        return At(name, line_no, bad->what + " (--skip-bad-lines skips and counts such lines)");
      }
      ++d.skipped_bad;
      continue;
    }
    auto& e = std::get<DatasetEntry>(entry);
    e.line = line_no;
    d.entries.push_back(std::move(e));
  }
  return d;
}

// The offsets where each element of the top-level JSON array starts (text is valid JSON).
std::vector<std::size_t> ElementStarts(std::string_view text) {
  std::vector<std::size_t> starts;
  int depth = 0;
  bool in_string = false, escaped = false, expect = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      continue;
    }
    if (depth == 1 && expect && c != ']') {
      starts.push_back(i);
      expect = false;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
      if (depth == 1) {
        expect = true;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 1) {
      expect = true;
    }
  }
  return starts;
}

// A ShareGPT conversation -> entry; nullopt when it has no human turn followed by a reply.
std::variant<std::optional<DatasetEntry>, LineError> ShareGptEntry(const json& j) {
  if (!j.is_object()) {
    return LineError{"a ShareGPT entry must be an object"};
  }
  const auto conv = j.find("conversations");
  if (conv == j.end() || !conv->is_array()) {
    return LineError{"a ShareGPT entry needs a \"conversations\" array"};
  }
  for (const auto& turn : *conv) {
    if (!turn.is_object() || !turn.contains("from") || !turn["from"].is_string() ||
        !turn.contains("value") || !turn["value"].is_string()) {
      return LineError{"each turn of \"conversations\" needs \"from\" and \"value\" strings"};
    }
  }
  for (std::size_t i = 0; i + 1 < conv->size(); ++i) {
    if ((*conv)[i]["from"] == "human" &&
        !(*conv)[i]["value"].get_ref<const std::string&>().empty()) {
      DatasetEntry e;
      e.prompt = (*conv)[i]["value"].get<std::string>();
      e.reply = (*conv)[i + 1]["value"].get<std::string>();
      return std::optional<DatasetEntry>(std::move(e));
    }
  }
  return std::optional<DatasetEntry>();
}

int LineAt(std::string_view text, std::size_t offset, std::size_t& from, int& line) {
  for (; from < offset && from < text.size(); ++from) {
    line += text[from] == '\n' ? 1 : 0;
  }
  return line;
}

Result<Dataset> ParseShareGpt(std::string_view text, const std::string& name, bool skip_bad) {
  Dataset d;
  d.format = DatasetFormat::kShareGpt;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    std::size_t from = 0;
    int line = 1;
    const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    return At(name, LineAt(text, byte, from, line),
              "not valid JSON (a ShareGPT file is one JSON array): " + std::string(e.what()));
  }
  if (!j.is_array()) {
    return At(name, 1, "a ShareGPT file is a JSON array of conversations");
  }
  const std::vector<std::size_t> starts = ElementStarts(text);
  std::size_t from = 0;
  int line = 1;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const int at = LineAt(text, i < starts.size() ? starts[i] : text.size(), from, line);
    auto entry = ShareGptEntry(j[i]);
    if (auto* bad = std::get_if<LineError>(&entry)) {
      if (!skip_bad) {
        return At(name, at,
                  bad->what + " (entry " + std::to_string(i + 1) +
                      "; --skip-bad-lines skips and counts such entries)");
      }
      ++d.skipped_bad;
      continue;
    }
    auto& e = std::get<std::optional<DatasetEntry>>(entry);
    if (!e) {
      ++d.skipped_no_reply;
      continue;
    }
    e->line = at;
    d.entries.push_back(std::move(*e));
  }
  return d;
}

}  // namespace

std::string_view DatasetFormatName(DatasetFormat format) {
  return format == DatasetFormat::kShareGpt ? "sharegpt" : "jsonl";
}

std::optional<DatasetFormat> ParseDatasetFormat(std::string_view name) {
  if (name == "sharegpt") {
    return DatasetFormat::kShareGpt;
  }
  if (name == "jsonl") {
    return DatasetFormat::kJsonl;
  }
  return std::nullopt;
}

std::optional<DatasetFormat> DetectDatasetFormat(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return std::nullopt;
  }
  if (text[first] == '[') {
    return DatasetFormat::kShareGpt;
  }
  if (text[first] == '{') {
    return DatasetFormat::kJsonl;
  }
  return std::nullopt;
}

Result<Dataset> ParseDataset(std::string_view text, const std::string& name,
                             std::optional<DatasetFormat> format, bool skip_bad,
                             const std::string& dir) {
  if (!format) {
    format = DetectDatasetFormat(text);
    if (!format) {
      return At(name, 1,
                "cannot tell the dataset format (a ShareGPT JSON array starts with '[', a JSONL "
                "line with '{'); name it with --dataset-format sharegpt|jsonl");
    }
  }
  auto d = *format == DatasetFormat::kShareGpt ? ParseShareGpt(text, name, skip_bad)
                                               : ParseJsonl(text, name, skip_bad, dir);
  if (d && d.value().entries.empty()) {
    return Error{ErrorCode::kUsage, name + ": the dataset has no usable request (" +
                                        std::to_string(d.value().skipped_bad) + " bad, " +
                                        std::to_string(d.value().skipped_no_reply) +
                                        " without a prompt and a reply)"};
  }
  return d;
}

Result<Dataset> ReadDataset(const std::string& path, std::optional<DatasetFormat> format,
                            bool skip_bad) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{ErrorCode::kSetup, path + ": cannot read the dataset file"};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return ParseDataset(ss.str(), path, format, skip_bad, dir.empty() ? "/" : dir);
}

std::vector<std::size_t> DatasetOrder(std::size_t size, bool shuffle, std::uint64_t seed,
                                      std::size_t max_requests) {
  std::vector<std::size_t> order(size);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (shuffle) {
    Rng rng(seed);
    for (std::size_t i = size; i > 1; --i) {  // Fisher-Yates, exact draws
      std::swap(order[i - 1], order[rng.Below(i)]);
    }
  }
  if (max_requests > 0 && order.size() > max_requests) {
    order.resize(max_requests);
  }
  return order;
}

}  // namespace sb::workload
