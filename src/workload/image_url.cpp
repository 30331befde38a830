#include "workload/image_url.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <sstream>

namespace sb::workload {

namespace {

// RFC 4648 base64 (an image file into a data: URL).
std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t v = static_cast<std::uint8_t>(bytes[i]) << 16;
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    if (n > 1) {
      v |= static_cast<std::uint8_t>(bytes[i + 1]) << 8;
    }
    if (n > 2) {
      v |= static_cast<std::uint8_t>(bytes[i + 2]);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out += k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=';
    }
  }
  return out;
}

std::string MimeOf(const std::string& path) {
  const auto dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == "jpg" || ext == "jpeg") {
    return "image/jpeg";
  }
  if (ext == "gif" || ext == "webp" || ext == "bmp") {
    return "image/" + ext;
  }
  return "image/png";
}

}  // namespace

Result<std::string> ImageDataUrl(const std::string& item, const std::string& dir) {
  if (item.rfind("data:", 0) == 0) {
    return item;
  }
  if (item.rfind("http://", 0) == 0 || item.rfind("https://", 0) == 0) {
    return Error{ErrorCode::kUsage, "image '" + item +
                                        "': nothing is read from the network; give a file "
                                        "path or a data: URL"};
  }
  const std::string path = !item.empty() && item[0] == '/' ? item : dir + "/" + item;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{ErrorCode::kUsage, "cannot read image '" + path + "'"};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return "data:" + MimeOf(path) + ";base64," + Base64(ss.str());
}

}  // namespace sb::workload
