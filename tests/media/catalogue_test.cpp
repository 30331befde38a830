// The catalogue: names, errors, user files, the `assets` export and the caches.

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "media/internal.h"
#include "media/media.h"

namespace sb::media {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

class CatalogueFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("media_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  void TearDown() override {
    SetCacheDir("");
    internal::ClearMemoryCache();
    fs::remove_all(dir_);
  }

  fs::path dir_;
};

const std::vector<std::string> kExpectedNames = {
    "color_grid",      "ocr_text",      "receipt",       "bar_chart",       "line_chart",
    "code_screenshot", "equation",      "scene",         "number_sequence", "shapes_a",
    "shapes_b",        "bouncing_ball", "moving_shapes", "color_cycle",     "counting_dots",
    "speech",          "speech_math",   "beeps",         "probe_image",     "probe_video",
    "probe_audio"};

TEST(Catalogue, Names) {
  EXPECT_EQ(CatalogueNames(), kExpectedNames);
  for (const std::string& n : kExpectedNames) {
    EXPECT_TRUE(IsCatalogueName(n)) << n;
  }
  for (const char* n : {"", "Color_Grid", "bouncing_ball#frame0", "nope", "color_grid.png"}) {
    EXPECT_FALSE(IsCatalogueName(n)) << n;
  }
  EXPECT_EQ(KindName(Kind::kImage), "image");
  EXPECT_EQ(KindName(Kind::kVideo), "video");
  EXPECT_EQ(KindName(Kind::kAudio), "audio");
}

TEST(Catalogue, EveryAssetIsWellFormed) {
  ASSERT_GE(CatalogueNames().size(), 10u);  // images, videos and audio (docs/media.md)
  for (const std::string& name : CatalogueNames()) {
    auto a = Generate(name);
    ASSERT_TRUE(a.has_value()) << name << ": " << a.error().message;
    EXPECT_EQ(a->name, name);
    EXPECT_EQ(a->sha256, Sha256Hex(a->bytes)) << name;
    EXPECT_EQ(a->sha256.size(), 64u);
    EXPECT_FALSE(a->description.empty()) << name;
    json truth = json::parse(a->truth_json, nullptr, false);
    ASSERT_TRUE(truth.is_object()) << name;
    EXPECT_FALSE(truth.empty()) << name;
    switch (a->kind) {
      case Kind::kImage:
        EXPECT_EQ(a->extension, "png");
        EXPECT_EQ(a->bytes.substr(0, 8), "\x89PNG\r\n\x1a\n") << name;
        break;
      case Kind::kVideo:
        EXPECT_EQ(a->extension, "mp4");
        EXPECT_EQ(a->bytes.substr(4, 4), "ftyp") << name;
        break;
      case Kind::kAudio:
        EXPECT_EQ(a->extension, "wav");
        EXPECT_EQ(a->bytes.substr(0, 4), "RIFF") << name;
        EXPECT_EQ(a->bytes.substr(8, 4), "WAVE") << name;
        break;
    }
    EXPECT_EQ(truth.contains("probe"), name.rfind("probe_", 0) == 0) << name;
  }
}

TEST(Catalogue, UnknownNameIsAUsageErrorListingTheCatalogue) {
  for (const char* name : {"nope", "", "Bar_Chart"}) {
    auto a = Generate(name);
    ASSERT_FALSE(a) << name;
    EXPECT_EQ(a.error().code, ErrorCode::kUsage);
    EXPECT_NE(a.error().message.find(std::string("'") + name + "'"), std::string::npos);
    EXPECT_NE(a.error().message.find("color_grid, ocr_text"), std::string::npos);
    EXPECT_NE(a.error().message.find("probe_audio"), std::string::npos);
  }
}

TEST(Catalogue, GenerateIsCachedAndThreadSafe) {
  internal::ClearMemoryCache();
  const std::vector<std::string> names = {"color_grid", "beeps", "probe_video", "speech_math"};
  std::vector<std::vector<std::string>> hashes(6);
  {
    std::vector<std::jthread> threads;
    for (size_t t = 0; t < hashes.size(); ++t) {
      threads.emplace_back([&, t] {
        for (size_t k = 0; k < names.size(); ++k) {
          auto a = Generate(names[(k + t) % names.size()]);
          hashes[t].push_back(a ? a->sha256 : "error: " + a.error().message);
        }
      });
    }
  }
  for (size_t t = 0; t < hashes.size(); ++t) {
    for (size_t k = 0; k < names.size(); ++k) {
      auto expected = internal::GenerateUncached(names[(k + t) % names.size()]);
      ASSERT_TRUE(expected.has_value());
      EXPECT_EQ(hashes[t][k], expected->sha256) << names[(k + t) % names.size()];
    }
  }
}

TEST_F(CatalogueFiles, LoadFileKindsFromTheExtension) {
  struct Case {
    const char* file;
    Kind kind;
    const char* mime;
    const char* extension;
  };

  const Case cases[] = {
      {"a.png", Kind::kImage, "image/png", "png"},
      {"b.JPG", Kind::kImage, "image/jpeg", "jpg"},
      {"c.jpeg", Kind::kImage, "image/jpeg", "jpeg"},
      {"d.webp", Kind::kImage, "image/webp", "webp"},
      {"e.gif", Kind::kImage, "image/gif", "gif"},
      {"f.mp4", Kind::kVideo, "video/mp4", "mp4"},
      {"g.webm", Kind::kVideo, "video/webm", "webm"},
      {"h.MOV", Kind::kVideo, "video/quicktime", "mov"},
      {"i.wav", Kind::kAudio, "audio/wav", "wav"},
      {"j.mp3", Kind::kAudio, "audio/mpeg", "mp3"},
      {"k.flac", Kind::kAudio, "audio/flac", "flac"},
      {"l.ogg", Kind::kAudio, "audio/ogg", "ogg"},
  };
  for (const Case& c : cases) {
    const std::string bytes = std::string("content of ") + c.file + std::string("\0\xff", 2);
    WriteAll(dir_ / c.file, bytes);
    auto a = LoadFile(dir_ / c.file);
    ASSERT_TRUE(a.has_value()) << c.file << ": " << a.error().message;
    EXPECT_EQ(a->kind, c.kind) << c.file;
    EXPECT_EQ(a->mime, c.mime) << c.file;
    EXPECT_EQ(a->extension, c.extension) << c.file;
    EXPECT_TRUE(a->bytes == bytes) << c.file;
    EXPECT_EQ(a->sha256, Sha256Hex(bytes)) << c.file;
    EXPECT_EQ(a->name, (dir_ / c.file).string());
    EXPECT_EQ(a->truth_json, "{}");
  }
}

TEST_F(CatalogueFiles, LoadFileErrorsNameThePath) {
  WriteAll(dir_ / "notes.txt", "hello");
  WriteAll(dir_ / "noext", "hello");
  fs::create_directories(dir_ / "folder.png");
  for (const fs::path& p :
       {dir_ / "notes.txt", dir_ / "noext", dir_ / "missing.png", dir_ / "folder.png"}) {
    auto a = LoadFile(p);
    ASSERT_FALSE(a) << p;
    EXPECT_EQ(a.error().code, ErrorCode::kSetup) << p;
    EXPECT_NE(a.error().message.find(p.string()), std::string::npos) << a.error().message;
  }
  EXPECT_NE(LoadFile(dir_ / "notes.txt").error().message.find("unknown type"), std::string::npos);
  EXPECT_NE(LoadFile(dir_ / "missing.png").error().message.find("cannot read"), std::string::npos);
}

TEST_F(CatalogueFiles, WriteCatalogueWritesEveryFileAndAMatchingManifest) {
  const fs::path out = dir_ / "nested" / "assets";
  auto r = WriteCatalogue(out);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  json manifest = json::parse(ReadAll(out / "manifest.json"));
  EXPECT_EQ(manifest["schema"], "servebench.assets/1");
  ASSERT_EQ(manifest["assets"].size(), CatalogueNames().size());
  std::set<std::string> files = {"manifest.json"};
  for (size_t i = 0; i < CatalogueNames().size(); ++i) {
    const json& entry = manifest["assets"][i];
    const std::string& name = CatalogueNames()[i];
    auto a = Generate(name);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(entry["name"], name);
    EXPECT_EQ(entry["kind"], std::string(KindName(a->kind)));
    EXPECT_EQ(entry["mime"], a->mime);
    EXPECT_EQ(entry["file"], name + "." + a->extension);
    EXPECT_EQ(entry["description"], a->description);
    EXPECT_EQ(entry["truth"], json::parse(a->truth_json));
    const std::string bytes = ReadAll(out / entry["file"].get<std::string>());
    EXPECT_EQ(entry["bytes"], bytes.size()) << name;
    EXPECT_EQ(entry["sha256"], Sha256Hex(bytes)) << name;
    EXPECT_TRUE(bytes == a->bytes) << name;
    files.insert(entry["file"].get<std::string>());
  }
  std::set<std::string> on_disk;
  for (const auto& e : fs::directory_iterator(out)) {
    on_disk.insert(e.path().filename().string());
  }
  EXPECT_EQ(on_disk, files);
}

TEST_F(CatalogueFiles, WriteCatalogueIoErrorNamesThePath) {
  WriteAll(dir_ / "a-file", "x");
  auto r = WriteCatalogue(dir_ / "a-file" / "out");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_NE(r.error().message.find((dir_ / "a-file" / "out").string()), std::string::npos)
      << r.error().message;
}

// The cache entry files for a name: everything in the cache dir but temporaries.
std::vector<fs::path> CacheFiles(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) {
    return out;
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(CatalogueFiles, DiskCacheIsReadVerifiedAndRepaired) {
  const fs::path cache = dir_ / "cache";
  auto fresh = internal::GenerateUncached("shapes_a");
  ASSERT_TRUE(fresh.has_value());
  SetCacheDir(cache);
  internal::ClearMemoryCache();
  ASSERT_TRUE(Generate("shapes_a").has_value());
  auto files = CacheFiles(cache);
  ASSERT_EQ(files.size(), 2u) << "<key>.json and <key>.png";
  const fs::path meta_path = files[0].extension() == ".json" ? files[0] : files[1];
  const fs::path bytes_path = files[0].extension() == ".png" ? files[0] : files[1];
  EXPECT_EQ(meta_path.stem(), bytes_path.stem());
  EXPECT_EQ(meta_path.stem().string().size(), 64u) << "a SHA-256 key";
  EXPECT_TRUE(ReadAll(bytes_path) == fresh->bytes);
  json meta = json::parse(ReadAll(meta_path));
  EXPECT_EQ(meta["sha256"], fresh->sha256);
  EXPECT_EQ(meta["name"], "shapes_a");
  EXPECT_EQ(meta["truth"], json::parse(fresh->truth_json));

  // A consistent entry is used as it is: change the truth, keep the hash.
  meta["truth"] = {{"edited", true}};
  WriteAll(meta_path, meta.dump());
  internal::ClearMemoryCache();
  auto edited = Generate("shapes_a");
  ASSERT_TRUE(edited.has_value());
  EXPECT_EQ(json::parse(edited->truth_json), json({{"edited", true}}));
  EXPECT_TRUE(edited->bytes == fresh->bytes);

  // Bytes that do not match the hash: regenerated, and the entry rewritten.
  WriteAll(bytes_path, fresh->bytes + "x");
  internal::ClearMemoryCache();
  auto repaired = Generate("shapes_a");
  ASSERT_TRUE(repaired.has_value());
  EXPECT_TRUE(repaired->bytes == fresh->bytes);
  EXPECT_EQ(repaired->truth_json, fresh->truth_json);
  EXPECT_TRUE(ReadAll(bytes_path) == fresh->bytes);
  EXPECT_EQ(json::parse(ReadAll(meta_path))["truth"], json::parse(fresh->truth_json));

  // Garbage metadata, or a missing bytes file: regenerated too.
  WriteAll(meta_path, "{not json");
  internal::ClearMemoryCache();
  EXPECT_EQ(Generate("shapes_a")->truth_json, fresh->truth_json);
  WriteAll(meta_path, R"({"schema": "servebench.media-cache/1", "name": "shapes_a",
                           "sha256": 42, "truth": {}, "description": "x"})");
  internal::ClearMemoryCache();
  EXPECT_EQ(Generate("shapes_a")->truth_json, fresh->truth_json);
  fs::remove(bytes_path);
  internal::ClearMemoryCache();
  EXPECT_TRUE(Generate("shapes_a")->bytes == fresh->bytes);
  EXPECT_TRUE(fs::exists(bytes_path));
  EXPECT_EQ(CacheFiles(cache).size(), 2u) << "no temporaries left behind";
}

TEST_F(CatalogueFiles, UnwritableCacheIsIgnored) {
  WriteAll(dir_ / "a-file", "x");
  SetCacheDir(dir_ / "a-file" / "cache");
  internal::ClearMemoryCache();
  auto a = Generate("probe_image");
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_TRUE(a->bytes == internal::GenerateUncached("probe_image")->bytes);
}

TEST(Catalogue, GeneratorVersionNamesTheLibraries) {
  const std::string v = internal::GeneratorVersion();
  for (const char* part : {"servebench.media/", "cairo", "pango", "libavcodec", "espeak-ng"}) {
    EXPECT_NE(v.find(part), std::string::npos) << v;
  }
}

}  // namespace
}  // namespace sb::media
