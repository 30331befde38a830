// Internal interface of the media module: the generators behind the catalogue, by kind, and the
// hooks the tests use to bypass the caches. Not for use outside src/media and tests/media.
// Thread safety: the generators may run on any thread; catalogue.cpp serialises them, because
// espeak-ng keeps global state (audio.cpp also guards it itself).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "media/media.h"

namespace sb::media::internal {

// What a generator produces; catalogue.cpp adds the name, kind, mime and hash.
struct Generated {
  std::string bytes;
  std::string truth_json;  // a JSON object
  std::string description;
};

// Generators per kind. REQUIRES: name is a catalogue name of that kind (kInternal otherwise).
Result<Generated> GenerateImage(std::string_view name);
Result<Generated> GenerateVideo(std::string_view name);
Result<Generated> GenerateAudio(std::string_view name);

// Whether name is a catalogue video, and n PNG frames of it at t_i = (i + 0.5) * duration / n
// with truth {"index": i, "t_s": t_i, "of": name}. REQUIRES: n >= 1.
bool IsVideoName(std::string_view name);
Result<std::vector<Generated>> RenderVideoFrames(std::string_view name, int n);

// Versions of the libraries whose output ends up in the bytes (part of the disk-cache key).
std::string ImageLibraryVersions();
std::string VideoLibraryVersions();
std::string AudioLibraryVersions();

// The disk-cache key input: a version of this code plus the library versions.
std::string GeneratorVersion();

// The asset, generated now, bypassing the in-process and disk caches (tests: determinism).
Result<Asset> GenerateUncached(std::string_view name);

// Forgets the in-process cache (tests: exercise the disk cache).
void ClearMemoryCache();

}  // namespace sb::media::internal
