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

// [begin, end) of the userinfo in `url` (without the '@'); begin == end when there is none. A URL
// written without its scheme ("alice:pw@host:8000/v1", a usage error) still has its userinfo
// found when it holds a password (a ':' before the '@').
std::pair<std::size_t, std::size_t> UserinfoSpan(std::string_view url) {
  const std::size_t scheme = url.find("://");
  const std::size_t begin = scheme == std::string_view::npos ? 0 : scheme + 3;
  const std::size_t authority_end = url.find_first_of("/?#", begin);
  const std::string_view authority =
      url.substr(begin, authority_end == std::string_view::npos ? std::string_view::npos
                                                                : authority_end - begin);
  const std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) {
    return {0, 0};
  }
  if (scheme == std::string_view::npos && authority.substr(0, at).find(':') == std::string::npos) {
    return {0, 0};
  }
  return {begin, begin + at};
}

// The query of `url` ("key=x&b=y" of "http://h/v1?key=x&b=y#f"), or "" when it has none.
std::string_view Query(std::string_view url) {
  const std::size_t q = url.find('?');
  if (q == std::string_view::npos) {
    return {};
  }
  const std::size_t end = url.find('#', q);
  return url.substr(q + 1, end == std::string_view::npos ? std::string_view::npos : end - q - 1);
}

// Query parameters of a PostgreSQL URL that say how to connect, never who: kept readable.
bool IsPlainParameter(std::string_view key) {
  for (std::string_view plain : {"sslmode", "connect_timeout", "application_name",
                                 "target_session_attrs", "gssencmode", "options"}) {
    if (key == plain) {
      return true;
    }
  }
  return false;
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
  std::string out;
  if (begin == end) {
    out = std::string(url);
  } else {
    out = std::string(url.substr(0, begin));
    out += "***";
    out += url.substr(end);
  }
  // Each query value ("?key=SECRET", "?password=x") too: an API key or password may be there.
  const std::string_view query = Query(out);
  if (query.empty()) {
    return out;
  }
  const std::size_t start = static_cast<std::size_t>(query.data() - out.data());
  std::string redacted;
  std::size_t pos = 0;
  while (pos <= query.size()) {
    std::size_t amp = query.find('&', pos);
    if (amp == std::string_view::npos) {
      amp = query.size();
    }
    const std::string_view item = query.substr(pos, amp - pos);
    const std::size_t eq = item.find('=');
    if (pos > 0) {
      redacted += '&';
    }
    if (eq == std::string_view::npos || eq + 1 == item.size() ||
        IsPlainParameter(item.substr(0, eq))) {
      redacted += item;
    } else {
      redacted += item.substr(0, eq + 1);
      redacted += "***";
    }
    pos = amp + 1;
  }
  out.replace(start, query.size(), redacted);
  return out;
}

void AddUrlSecrets(std::string_view url) {
  auto [begin, end] = UserinfoSpan(url);
  if (begin != end) {
    const std::string_view userinfo = url.substr(begin, end - begin);
    AddSecret(std::string(userinfo));
    if (const std::size_t colon = userinfo.find(':'); colon != std::string_view::npos) {
      AddSecret(std::string(userinfo.substr(colon + 1)));
    }
  }
  const std::string_view query = Query(url);
  std::size_t pos = 0;
  while (pos < query.size()) {
    std::size_t amp = query.find('&', pos);
    if (amp == std::string_view::npos) {
      amp = query.size();
    }
    const std::string_view item = query.substr(pos, amp - pos);
    if (const std::size_t eq = item.find('=');
        eq != std::string_view::npos && !IsPlainParameter(item.substr(0, eq))) {
      AddSecret(std::string(item.substr(eq + 1)));
    }
    pos = amp + 1;
  }
}

}  // namespace sb
