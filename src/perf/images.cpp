#include "perf/images.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <nlohmann/json.hpp>

namespace sb::perf {

Result<std::pair<int, int>> ParseImageSize(std::string_view text) {
  const auto x = text.find('x');
  int w = 0, h = 0;
  auto num = [](std::string_view s, int& v) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size() && v >= 1 && v <= 8192;
  };
  if (x == std::string_view::npos || !num(text.substr(0, x), w) || !num(text.substr(x + 1), h)) {
    return Error{ErrorCode::kUsage, "--image-size must be WxH with each side in [1, 8192], got '" +
                                        std::string(text) + "'"};
  }
  return std::make_pair(w, h);
}

long long DataUrlBytes(const std::string& uri) {
  const auto comma = uri.find(',');
  if (uri.rfind("data:", 0) != 0 || comma == std::string::npos || uri.find(";base64", 0) > comma) {
    return 0;
  }
  std::size_t n = uri.size() - comma - 1;
  std::size_t pad = 0;
  while (pad < 2 && n > pad && uri[uri.size() - 1 - pad] == '=') {
    ++pad;
  }
  return static_cast<long long>(n / 4 * 3 - pad);
}

std::string ImageContentJson(const std::vector<std::string>& uris, const std::string& text) {
  nlohmann::json parts = nlohmann::json::array();
  parts.push_back({{"type", "text"}, {"text", text}});
  for (const std::string& uri : uris) {
    parts.push_back({{"type", "image_url"}, {"image_url", {{"url", uri}}}});
  }
  return parts.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<std::string> ImageRefusal(const client::ChatResponse& r) {
  if (r.outcome != client::Outcome::kHttpError || r.http_status < 400) {
    return std::nullopt;
  }
  std::string lower = r.reason;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* word : {"image", "vision", "multimodal", "multi-modal"}) {
    if (lower.find(word) != std::string::npos) {
      return "UNSUPPORTED: the server refused image input (" + r.reason +
             "); these requests are failures, not throughput";
    }
  }
  return std::nullopt;
}

}  // namespace sb::perf
