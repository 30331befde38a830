#include "core/redact.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace sb {

namespace {

std::mutex& Mutex() {
  static std::mutex mu;
  return mu;
}

std::vector<std::string>& Secrets() {
  static std::vector<std::string> secrets;
  return secrets;
}

// [begin, end) of the userinfo in `url` (without the '@'); begin == end when there is none.
std::pair<std::size_t, std::size_t> UserinfoSpan(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) {
    return {0, 0};
  }
  const std::size_t begin = scheme + 3;
  const std::size_t authority_end = url.find_first_of("/?#", begin);
  const std::string_view authority =
      url.substr(begin, authority_end == std::string_view::npos ? std::string_view::npos
                                                                : authority_end - begin);
  const std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) {
    return {0, 0};
  }
  return {begin, begin + at};
}

}  // namespace

void AddSecret(std::string secret) {
  if (secret.size() < 4) {
    return;
  }
  std::lock_guard<std::mutex> lock(Mutex());
  for (const auto& s : Secrets()) {
    if (s == secret) {
      return;
    }
  }
  Secrets().push_back(std::move(secret));
  // Longest first, so a secret that contains another is replaced whole.
  std::sort(Secrets().begin(), Secrets().end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Redact(std::string text) {
  std::string out = std::move(text);
  std::lock_guard<std::mutex> lock(Mutex());
  for (const auto& s : Secrets()) {
    for (std::size_t pos = out.find(s); pos != std::string::npos; pos = out.find(s, pos + 3)) {
      out.replace(pos, s.size(), "***");
    }
  }
  return out;
}

std::string RedactUrl(std::string_view url) {
  auto [begin, end] = UserinfoSpan(url);
  if (begin == end) {
    return std::string(url);
  }
  std::string out(url.substr(0, begin));
  out += "***";
  out += url.substr(end);
  return out;
}

void AddUrlSecrets(std::string_view url) {
  auto [begin, end] = UserinfoSpan(url);
  if (begin == end) {
    return;
  }
  const std::string_view userinfo = url.substr(begin, end - begin);
  AddSecret(std::string(userinfo));
  if (const std::size_t colon = userinfo.find(':'); colon != std::string_view::npos) {
    AddSecret(std::string(userinfo.substr(colon + 1)));
  }
}

}  // namespace sb
