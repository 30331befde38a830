#include "sim/hostile.h"

#include <cstddef>
#include <string_view>

namespace sb::sim {

Reply HostileReply(Fault fault) {
  Reply r;
  r.status = 200;
  if (fault == Fault::kHugeHeader) {
    r.body = "{}";
    r.extra_headers.reserve(kHugeHeaderBytes + 16);
    r.extra_headers = "X-Sim-Pad: ";
    r.extra_headers.append(kHugeHeaderBytes, 'x');
    r.extra_headers += "\r\n";
    return r;
  }
  r.content_type = "text/event-stream; charset=utf-8";
  r.body = "data: [DONE]\n\n";
  return r;
}

void ReplaceCompletionTokens(std::string& body, long long tokens) {
  constexpr std::string_view kKey = "\"completion_tokens\":";
  const std::size_t at = body.find(kKey);
  if (at == std::string::npos) {
    return;
  }
  std::size_t begin = at + kKey.size();
  while (begin < body.size() && body[begin] == ' ') {
    ++begin;
  }
  std::size_t end = begin;
  while (end < body.size() && body[end] >= '0' && body[end] <= '9') {
    ++end;
  }
  body.replace(begin, end - begin, std::to_string(tokens));
}

}  // namespace sb::sim
