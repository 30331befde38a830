#include "roofline/hardware.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sb::roofline {

namespace {

using nlohmann::json;

// Lower-case letters and digits only: "RTX PRO 6000", "rtx-pro-6000" and "rtxpro6000" match.
std::string Key(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

bool Matches(const Hardware& h, const std::string& key) {
  if (Key(h.id) == key || Key(h.name) == key) {
    return true;
  }
  return std::any_of(h.aliases.begin(), h.aliases.end(),
                     [&](const std::string& a) { return Key(a) == key; });
}

}  // namespace

HardwareTable HardwareTable::Builtin() {
  HardwareTable t;
  t.entries_ = {
      {"dgx-spark",
       "DGX Spark (GB10)",
       273,
       {"spark", "gb10", "dgx-gb10"},
       "NVIDIA DGX Spark specifications: 128 GB LPDDR5x, 256-bit, 273 GB/s"},
      {"jetson-agx-thor",
       "Jetson AGX Thor (T5000)",
       273,
       {"thor", "jetson-thor", "agx-thor"},
       "NVIDIA Jetson AGX Thor developer kit specifications: 128 GB LPDDR5X, 273 GB/s"},
      {"jetson-agx-orin",
       "Jetson AGX Orin 64GB",
       204.8,
       {"orin", "jetson-orin", "agx-orin"},
       "NVIDIA Jetson AGX Orin 64GB module datasheet: LPDDR5, 204.8 GB/s"},
      {"h100-sxm",
       "H100 SXM 80GB",
       3350,
       {"h100", "h100-sxm5", "h100-80gb"},
       "NVIDIA H100 datasheet, SXM: 80 GB HBM3, 3.35 TB/s"},
      {"h100-pcie",
       "H100 PCIe 80GB",
       2000,
       {"h100pcie"},
       "NVIDIA H100 datasheet, PCIe: 80 GB HBM2e, 2 TB/s"},
      {"h100-nvl", "H100 NVL 94GB", 3900, {}, "NVIDIA H100 datasheet, NVL: 94 GB HBM3, 3.9 TB/s"},
      {"h200",
       "H200 141GB",
       4800,
       {"h200-sxm", "h200-nvl"},
       "NVIDIA H200 datasheet: 141 GB HBM3e, 4.8 TB/s (SXM and NVL)"},
      {"b200",
       "B200 180GB",
       8000,
       {"hgx-b200"},
       "NVIDIA HGX B200 specifications: 8 TB/s HBM3e per GPU"},
      {"a100-sxm-80gb",
       "A100 SXM 80GB",
       2039,
       {"a100", "a100-80gb"},
       "NVIDIA A100 datasheet, 80 GB SXM: HBM2e, 2,039 GB/s"},
      {"a100-40gb", "A100 40GB", 1555, {}, "NVIDIA A100 datasheet, 40 GB: HBM2, 1,555 GB/s"},
      {"l40s", "L40S", 864, {}, "NVIDIA L40S datasheet: 48 GB GDDR6, 864 GB/s"},
      {"rtx-3090",
       "GeForce RTX 3090",
       936,
       {"3090"},
       "24 GB GDDR6X, 19.5 Gbps x 384-bit = 936 GB/s"},
      {"rtx-4090",
       "GeForce RTX 4090",
       1008,
       {"4090"},
       "24 GB GDDR6X, 21 Gbps x 384-bit = 1,008 GB/s"},
      {"rtx-5090",
       "GeForce RTX 5090",
       1792,
       {"5090"},
       "32 GB GDDR7, 28 Gbps x 512-bit = 1,792 GB/s"},
      {"rtx-6000-ada",
       "RTX 6000 Ada",
       960,
       {"6000-ada"},
       "NVIDIA RTX 6000 Ada datasheet: 48 GB GDDR6, 960 GB/s"},
      {"rtx-pro-6000",
       "RTX PRO 6000 Blackwell",
       1792,
       {"pro6000", "rtx-pro-6000-blackwell", "pro-6000"},
       "NVIDIA RTX PRO 6000 Blackwell datasheet: 96 GB GDDR7, 512-bit, 1,792 GB/s"},
      {"mi300x", "AMD Instinct MI300X", 5300, {}, "AMD MI300X datasheet: 192 GB HBM3, 5.3 TB/s"},
      {"m1-max", "Apple M1 Max", 400, {}, "Apple M1 Max specifications: 400 GB/s"},
      {"m1-ultra", "Apple M1 Ultra", 800, {}, "Apple M1 Ultra specifications: 800 GB/s"},
      {"m2-max", "Apple M2 Max", 400, {}, "Apple M2 Max specifications: 400 GB/s"},
      {"m2-ultra", "Apple M2 Ultra", 800, {}, "Apple M2 Ultra specifications: 800 GB/s"},
      {"m3-max",
       "Apple M3 Max (16-core CPU)",
       400,
       {},
       "Apple M3 Max specifications: 400 GB/s (the 14-core CPU / 30-core GPU part: 300 GB/s)"},
      {"m3-ultra", "Apple M3 Ultra", 819, {}, "Apple M3 Ultra specifications: 819 GB/s"},
      {"m4-pro", "Apple M4 Pro", 273, {}, "Apple M4 Pro specifications: 273 GB/s"},
      {"m4-max",
       "Apple M4 Max (16-core CPU)",
       546,
       {},
       "Apple M4 Max specifications: 546 GB/s (the 14-core CPU / 32-core GPU part: 410 GB/s)"},
  };
  return t;
}

Result<void> HardwareTable::AddJson(std::string_view json_text, const std::string& source) {
  json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return MakeError(ErrorCode::kSetup, fmt::format("{}: a hardware file must be a JSON object "
                                                    "{{\"name\": {{\"bandwidth_gb_s\": N}}, ...}}",
                                                    source));
  }
  std::vector<Hardware> added;
  for (const auto& [id, v] : root.items()) {
    auto bad = [&](std::string_view what) {
      return MakeError(ErrorCode::kSetup, fmt::format("{}: '{}': {}", source, id, what));
    };
    if (Key(id).empty()) {
      return bad("a hardware name needs at least one letter or digit");
    }
    if (!v.is_object()) {
      return bad("must be an object with bandwidth_gb_s");
    }
    auto bw = v.find("bandwidth_gb_s");
    if (bw == v.end()) {
      return bad("missing field 'bandwidth_gb_s'");
    }
    if (!bw->is_number() || bw->get<double>() <= 0) {
      return bad("bandwidth_gb_s must be a positive number");
    }
    Hardware h;
    h.id = id;
    h.name = v.contains("name") && v["name"].is_string() ? v["name"].get<std::string>() : "";
    h.bandwidth_gb_s = bw->get<double>();
    h.source = v.contains("source") && v["source"].is_string() ? v["source"].get<std::string>()
                                                               : "from " + source;
    if (auto a = v.find("aliases"); a != v.end()) {
      if (!a->is_array() ||
          !std::all_of(a->begin(), a->end(), [](const json& x) { return x.is_string(); })) {
        return bad("aliases must be an array of strings");
      }
      for (const json& x : *a) {
        h.aliases.push_back(x.get<std::string>());
      }
    }
    added.push_back(std::move(h));
  }
  for (Hardware& h : added) {
    std::string key = Key(h.id);
    auto same = std::find_if(entries_.begin(), entries_.end(),
                             [&](const Hardware& e) { return Key(e.id) == key; });
    if (same != entries_.end()) {
      // Same name: the file's figure wins; the entry keeps its aliases and gains the file's.
      same->bandwidth_gb_s = h.bandwidth_gb_s;
      same->source = h.source;
      if (!h.name.empty()) {
        same->name = h.name;
      }
      same->aliases.insert(same->aliases.end(), h.aliases.begin(), h.aliases.end());
    } else {
      if (h.name.empty()) {
        h.name = h.id;
      }
      entries_.insert(entries_.begin(), std::move(h));
    }
  }
  return {};
}

Result<void> HardwareTable::LoadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("cannot read hardware file '{}'", path.string()));
  }
  std::stringstream text;
  text << in.rdbuf();
  return AddJson(text.str(), path.string());
}

Result<Hardware> HardwareTable::Find(std::string_view name) const {
  std::string key = Key(name);
  for (const Hardware& h : entries_) {
    if (!key.empty() && Matches(h, key)) {
      return h;
    }
  }
  std::string known;
  for (const Hardware& h : entries_) {
    known += known.empty() ? "" : ", ";
    known += h.id;
  }
  return MakeError(ErrorCode::kUsage,
                   fmt::format("unknown hardware '{}' (known: {}; add one with --hardware-file "
                               "or give --bandwidth-gb-s)",
                               name, known));
}

}  // namespace sb::roofline
