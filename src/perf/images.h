// Multimodal load (`--images-per-request N --image-size WxH`, docs/sessions.md "Images"): the
// decode, concurrency and rate profiles' prompts and every sessions turn carry N generated PNG
// images (media::LoadImage, made by the run before the first request) as image_url parts. A
// server without vision refuses them: such a request is a failure (never throughput) and the run
// says UNSUPPORTED with the server's words.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/chat.h"
#include "core/result.h"

namespace sb::perf {

struct ImageLoad {
  int per_request = 0;                 // --images-per-request; 0 = none
  std::string size = "512x512";        // --image-size WxH
  std::vector<std::string> data_uris;  // per_request images, "data:image/png;base64,..."
  std::size_t bytes = 0;               // their PNG bytes in all (what one request carries)
};

// "WxH" -> (W, H); kUsage error naming --image-size otherwise.
Result<std::pair<int, int>> ParseImageSize(std::string_view text);

// The bytes a data: URL's base64 payload decodes to (0 for anything else).
long long DataUrlBytes(const std::string& uri);

// The content parts of a user message: its text, then every image of `uris` (data: URLs), as
// JSON text.
std::string ImageContentJson(const std::vector<std::string>& uris, const std::string& text);

// "UNSUPPORTED: the server refused image input (HTTP 400: ...)" when r is the refusal of a
// request that carried images; nullopt otherwise.
std::optional<std::string> ImageRefusal(const client::ChatResponse& r);

}  // namespace sb::perf
