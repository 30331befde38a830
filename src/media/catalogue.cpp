// The catalogue: names and kinds, the in-process and disk caches, frames, user files and the
// `assets` export. Generation is serialised by generate_mu (espeak-ng and fontconfig keep global
// state); lookups of generated assets only take the short cache lock.

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/output_file.h"
#include "media/internal.h"
#include "media/media.h"

namespace sb::media {

namespace {

using nlohmann::ordered_json;

// Bump when any generator's output changes: it keys the disk cache.
constexpr std::string_view kCodeVersion = "servebench.media/1";
constexpr std::string_view kCacheSchema = "servebench.media-cache/1";
constexpr std::string_view kManifestSchema = "servebench.assets/1";

struct Entry {
  std::string_view name;
  Kind kind;
};

// Catalogue order (docs/media.md §2).
constexpr Entry kCatalogue[] = {
    {"color_grid", Kind::kImage},      {"ocr_text", Kind::kImage},
    {"receipt", Kind::kImage},         {"bar_chart", Kind::kImage},
    {"line_chart", Kind::kImage},      {"code_screenshot", Kind::kImage},
    {"equation", Kind::kImage},        {"scene", Kind::kImage},
    {"number_sequence", Kind::kImage}, {"shapes_a", Kind::kImage},
    {"shapes_b", Kind::kImage},        {"bouncing_ball", Kind::kVideo},
    {"moving_shapes", Kind::kVideo},   {"color_cycle", Kind::kVideo},
    {"counting_dots", Kind::kVideo},   {"speech", Kind::kAudio},
    {"speech_math", Kind::kAudio},     {"beeps", Kind::kAudio},
    {"probe_image", Kind::kImage},     {"probe_video", Kind::kVideo},
    {"probe_audio", Kind::kAudio},
};

const Entry* FindEntry(std::string_view name) {
  for (const Entry& e : kCatalogue) {
    if (e.name == name) {
      return &e;
    }
  }
  return nullptr;
}

std::string_view MimeOf(Kind kind) {
  switch (kind) {
    case Kind::kImage:
      return "image/png";
    case Kind::kVideo:
      return "video/mp4";
    case Kind::kAudio:
      return "audio/wav";
  }
  return "application/octet-stream";
}

std::string_view ExtensionOf(Kind kind) {
  switch (kind) {
    case Kind::kImage:
      return "png";
    case Kind::kVideo:
      return "mp4";
    case Kind::kAudio:
      return "wav";
  }
  return "bin";
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    out += out.empty() ? n : ", " + n;
  }
  return out;
}

// The module's state: the asset cache and the cache directory. The header promises in-process
// caching, so this is module state by necessity; everything in it is guarded.
struct State {
  std::mutex mu;                                    // guards cache and cache_dir
  std::map<std::string, Asset, std::less<>> cache;  // guarded by mu
  std::filesystem::path cache_dir;                  // guarded by mu
  std::mutex generate_mu;                           // serialises generation
};

State& GetState() {
  static State state;
  return state;
}

// ---- files ----

std::optional<std::string> ReadWholeFile(const std::filesystem::path& path, std::string* why) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    if (why != nullptr) {
      *why = ec ? ec.message()
                : (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
    }
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (why != nullptr) {
      *why = std::strerror(errno);
    }
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    if (why != nullptr) {
      *why = "read error";
    }
    return std::nullopt;
  }
  return std::move(ss).str();
}

// Writes via a temporary file and a rename, so a reader never sees half a file
// (core/output_file.h).
bool WriteAtomically(const std::filesystem::path& path, std::string_view bytes) {
  return WriteOutputFile(path, bytes).has_value();
}

// ---- disk cache: <dir>/<key>.<ext> (the bytes) and <dir>/<key>.json (hash, truth, ...) ----

std::string CacheKey(std::string_view name) {
  return Sha256Hex(internal::GeneratorVersion() + "\n" + std::string(name));
}

// The cached asset, or nullopt when absent, unreadable, stale or corrupt.
std::optional<Asset> ReadDiskCache(const std::filesystem::path& dir, const Entry& entry) try {
  const std::string key = CacheKey(entry.name);
  auto meta_text = ReadWholeFile(dir / (key + ".json"), nullptr);
  if (!meta_text) {
    return std::nullopt;
  }
  auto bytes = ReadWholeFile(dir / (key + "." + std::string(ExtensionOf(entry.kind))), nullptr);
  if (!bytes) {
    return std::nullopt;
  }
  ordered_json meta = ordered_json::parse(*meta_text, nullptr, /*allow_exceptions=*/false);
  if (!meta.is_object() || meta.value("schema", "") != kCacheSchema ||
      meta.value("name", "") != entry.name || !meta.contains("truth") ||
      !meta["truth"].is_object() || !meta.contains("description") ||
      !meta["description"].is_string()) {
    return std::nullopt;
  }
  Asset a;
  a.sha256 = Sha256Hex(*bytes);
  if (a.sha256 != meta.value("sha256", "")) {
    return std::nullopt;
  }
  a.name = std::string(entry.name);
  a.kind = entry.kind;
  a.mime = std::string(MimeOf(entry.kind));
  a.extension = std::string(ExtensionOf(entry.kind));
  a.bytes = std::move(*bytes);
  a.truth_json = meta["truth"].dump();
  a.description = meta["description"].get<std::string>();
  return a;

} catch (const nlohmann::json::exception&) {  // a field of the wrong type

  return std::nullopt;
}

// Best effort: a cache that cannot be written is ignored.
void WriteDiskCache(const std::filesystem::path& dir, const Asset& a) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return;
  }
  const std::string key = CacheKey(a.name);
  ordered_json meta = {{"schema", kCacheSchema},
                       {"name", a.name},
                       {"generator", internal::GeneratorVersion()},
                       {"sha256", a.sha256},
                       {"bytes", a.bytes.size()},
                       {"description", a.description},
                       {"truth", ordered_json::parse(a.truth_json)}};
  if (WriteAtomically(dir / (key + "." + a.extension), a.bytes)) {
    WriteAtomically(dir / (key + ".json"), meta.dump(2) + "\n");
  }
}

Error UnknownName(std::string_view name) {
  return MakeError(ErrorCode::kUsage, fmt::format("unknown media '{}' (the catalogue has: {})",
                                                  name, Join(CatalogueNames())));
}

// Runs the generator. REQUIRES: generate_mu held.
Result<Asset> GenerateNow(const Entry& entry) {
  Result<internal::Generated> g = MakeError(ErrorCode::kInternal, "unreachable");
  switch (entry.kind) {
    case Kind::kImage:
      g = internal::GenerateImage(entry.name);
      break;
    case Kind::kVideo:
      g = internal::GenerateVideo(entry.name);
      break;
    case Kind::kAudio:
      g = internal::GenerateAudio(entry.name);
      break;
  }
  if (!g) {
    return g.error().WithContext(fmt::format("generating media '{}'", entry.name));
  }
  Asset a;
  a.name = std::string(entry.name);
  a.kind = entry.kind;
  a.mime = std::string(MimeOf(entry.kind));
  a.extension = std::string(ExtensionOf(entry.kind));
  a.sha256 = Sha256Hex(g->bytes);
  a.bytes = std::move(g->bytes);
  a.truth_json = std::move(g->truth_json);
  a.description = std::move(g->description);
  return a;
}

}  // namespace

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kImage:
      return "image";
    case Kind::kVideo:
      return "video";
    case Kind::kAudio:
      return "audio";
  }
  return "unknown";
}

const std::vector<std::string>& CatalogueNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Entry& e : kCatalogue) {
      names.emplace_back(e.name);
    }
    return names;
  }();
  return kNames;
}

bool IsCatalogueName(std::string_view name) {
  return FindEntry(name) != nullptr;
}

namespace internal {

std::string GeneratorVersion() {
  static const std::string kVersion =
      fmt::format("{}; {}; {}; {}", kCodeVersion, ImageLibraryVersions(), VideoLibraryVersions(),
                  AudioLibraryVersions());
  return kVersion;
}

Result<Asset> GenerateUncached(std::string_view name) {
  const Entry* entry = FindEntry(name);
  if (entry == nullptr) {
    return UnknownName(name);
  }
  std::lock_guard generating(GetState().generate_mu);
  return GenerateNow(*entry);
}

void ClearMemoryCache() {
  State& s = GetState();
  std::lock_guard lock(s.mu);
  s.cache.clear();
}

}  // namespace internal

Result<Asset> Generate(std::string_view name) {
  const Entry* entry = FindEntry(name);
  if (entry == nullptr) {
    return UnknownName(name);
  }
  State& s = GetState();
  std::filesystem::path dir;
  auto cached = [&]() -> std::optional<Asset> {
    std::lock_guard lock(s.mu);
    dir = s.cache_dir;
    if (auto it = s.cache.find(name); it != s.cache.end()) {
      return it->second;
    }
    return std::nullopt;
  };
  if (auto a = cached()) {
    return *std::move(a);
  }
  std::lock_guard generating(s.generate_mu);
  if (auto a = cached()) {  // another thread made it while we waited
    return *std::move(a);
  }
  std::optional<Asset> asset;
  if (!dir.empty()) {
    asset = ReadDiskCache(dir, *entry);
  }
  if (!asset) {
    auto made = GenerateNow(*entry);
    if (!made) {
      return made.error();
    }
    asset = std::move(made).value();
    if (!dir.empty()) {
      WriteDiskCache(dir, *asset);
    }
  }
  std::lock_guard lock(s.mu);
  s.cache.emplace(asset->name, *asset);
  return *std::move(asset);
}

Result<std::vector<Asset>> VideoFrames(std::string_view name, int n) {
  if (!internal::IsVideoName(name)) {
    std::vector<std::string> videos;
    for (const Entry& e : kCatalogue) {
      if (e.kind == Kind::kVideo) {
        videos.emplace_back(e.name);
      }
    }
    return MakeError(ErrorCode::kUsage,
                     fmt::format("'{}' is not a catalogue video (videos: {})", name, Join(videos)));
  }
  if (n < 1) {
    return MakeError(
        ErrorCode::kUsage,
        fmt::format("frames of '{}': the frame count must be at least 1, not {}", name, n));
  }
  Result<std::vector<internal::Generated>> frames = MakeError(ErrorCode::kInternal, "unreachable");
  {
    std::lock_guard generating(GetState().generate_mu);
    frames = internal::RenderVideoFrames(name, n);
  }
  if (!frames) {
    return frames.error().WithContext(fmt::format("rendering frames of '{}'", name));
  }
  std::vector<Asset> out;
  for (size_t i = 0; i < frames->size(); ++i) {
    internal::Generated& g = (*frames)[i];
    Asset a;
    a.name = fmt::format("{}#frame{}", name, i);
    a.kind = Kind::kImage;
    a.mime = "image/png";
    a.extension = "png";
    a.sha256 = Sha256Hex(g.bytes);
    a.bytes = std::move(g.bytes);
    a.truth_json = std::move(g.truth_json);
    a.description = std::move(g.description);
    out.push_back(std::move(a));
  }
  return out;
}

Result<Asset> LoadFile(const std::filesystem::path& path) {
  struct Type {
    std::string_view extension;
    Kind kind;
    std::string_view mime;
  };

  static constexpr Type kTypes[] = {
      {"png", Kind::kImage, "image/png"},   {"jpg", Kind::kImage, "image/jpeg"},
      {"jpeg", Kind::kImage, "image/jpeg"}, {"webp", Kind::kImage, "image/webp"},
      {"gif", Kind::kImage, "image/gif"},   {"mp4", Kind::kVideo, "video/mp4"},
      {"webm", Kind::kVideo, "video/webm"}, {"mov", Kind::kVideo, "video/quicktime"},
      {"wav", Kind::kAudio, "audio/wav"},   {"mp3", Kind::kAudio, "audio/mpeg"},
      {"flac", Kind::kAudio, "audio/flac"}, {"ogg", Kind::kAudio, "audio/ogg"},
  };
  std::string ext = path.extension().string();
  if (!ext.empty() && ext[0] == '.') {
    ext.erase(0, 1);
  }
  for (char& c : ext) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const Type* type = nullptr;
  for (const Type& t : kTypes) {
    if (t.extension == ext) {
      type = &t;
    }
  }
  if (type == nullptr) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("media file '{}': unknown type '{}' (known: .png .jpg .jpeg "
                                 ".webp .gif .mp4 .webm .mov .wav .mp3 .flac .ogg)",
                                 path.string(), path.extension().string()));
  }
  std::string why;
  auto bytes = ReadWholeFile(path, &why);
  if (!bytes) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("cannot read media file '{}': {}", path.string(), why));
  }
  Asset a;
  a.name = path.string();
  a.kind = type->kind;
  a.mime = std::string(type->mime);
  a.extension = ext;
  a.sha256 = Sha256Hex(*bytes);
  a.bytes = std::move(*bytes);
  a.truth_json = "{}";
  a.description = path.filename().string();
  return a;
}

void SetCacheDir(const std::filesystem::path& dir) {
  State& s = GetState();
  std::lock_guard lock(s.mu);
  s.cache_dir = dir;
}

Result<void> WriteCatalogue(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));
  }
  ordered_json assets = ordered_json::array();
  for (const std::string& name : CatalogueNames()) {
    auto a = Generate(name);
    if (!a) {
      return a.error();
    }
    const std::string file = a->name + "." + a->extension;
    if (auto ok = WriteOutputFile(dir / file, a->bytes); !ok) {
      return ok.error();
    }
    assets.push_back({{"name", a->name},
                      {"kind", KindName(a->kind)},
                      {"mime", a->mime},
                      {"file", file},
                      {"bytes", a->bytes.size()},
                      {"sha256", a->sha256},
                      {"description", a->description},
                      {"truth", ordered_json::parse(a->truth_json)}});
  }
  ordered_json manifest = {
      {"schema", kManifestSchema}, {"generator", internal::GeneratorVersion()}, {"assets", assets}};
  const std::filesystem::path manifest_path = dir / "manifest.json";
  return WriteOutputFile(manifest_path, manifest.dump(2) + "\n");
}

}  // namespace sb::media
