// The audio generators: WAV headers parsed by hand, beeps counted from the energy envelope and
// their pitch from zero crossings.

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "media/internal.h"
#include "media/media.h"
#include "media/readback.h"
#include "support/subprocess.h"

namespace sb::media {
namespace {

using nlohmann::json;
using testing::Wav;

struct Decoded {
  Asset asset;
  json truth;
  Wav wav;
};

Decoded Load(const std::string& name) {
  Decoded d;
  testing::GenerateAndDecode(name, testing::ParseWav, "a WAV file", d.asset, d.truth, d.wav);
  return d;
}

struct Segment {
  size_t begin = 0;  // samples
  size_t end = 0;
};

// Runs of 5 ms windows whose RMS exceeds `threshold` (full scale 32768).
std::vector<Segment> LoudSegments(const Wav& w, double threshold) {
  const size_t window = static_cast<size_t>(w.sample_rate) / 200;
  std::vector<Segment> out;
  bool in = false;
  for (size_t start = 0; start + window <= w.samples.size(); start += window) {
    double energy = 0;
    for (size_t i = start; i < start + window; ++i) {
      energy += static_cast<double>(w.samples[i]) * w.samples[i];
    }
    bool loud = std::sqrt(energy / static_cast<double>(window)) > threshold;
    if (loud && !in) {
      out.push_back(Segment{start, start + window});
    } else if (loud) {
      out.back().end = start + window;
    }
    in = loud;
  }
  return out;
}

double Seconds(const Wav& w) {
  return static_cast<double>(w.samples.size()) / w.sample_rate;
}

void ExpectPcm16Mono(const Decoded& d, int rate) {
  EXPECT_EQ(d.asset.kind, Kind::kAudio);
  EXPECT_EQ(d.asset.mime, "audio/wav");
  EXPECT_EQ(d.wav.format, 1);
  EXPECT_EQ(d.wav.channels, 1);
  EXPECT_EQ(d.wav.bits, 16);
  EXPECT_EQ(d.wav.sample_rate, rate);
}

TEST(Audio, BeepsAreCountedFromTheEnvelope) {
  Decoded d = Load("beeps");
  ExpectPcm16Mono(d, 16000);
  EXPECT_EQ(d.truth["sample_rate"], 16000);
  EXPECT_NEAR(Seconds(d.wav), d.truth["duration_s"].get<double>(), 1e-3);
  EXPECT_NEAR(Seconds(d.wav), 0.25 + 4 * 0.2 + 3 * 0.3 + 0.25, 1e-3);
  auto beeps = LoudSegments(d.wav, 1000);
  ASSERT_EQ(static_cast<int>(beeps.size()), d.truth["count"].get<int>());
  const double rate = d.wav.sample_rate;
  for (size_t b = 0; b < beeps.size(); ++b) {
    const Segment& s = beeps[b];
    EXPECT_NEAR((s.end - s.begin) / rate, d.truth["beep_s"].get<double>(), 0.03) << b;
    if (b > 0) {
      EXPECT_NEAR((s.begin - beeps[b - 1].end) / rate, d.truth["gap_s"].get<double>(), 0.03) << b;
    }
    int crossings = 0;
    for (size_t i = s.begin + 1; i < s.end; ++i) {
      crossings += (d.wav.samples[i - 1] < 0) != (d.wav.samples[i] < 0) ? 1 : 0;
    }
    double freq = crossings / 2.0 / ((s.end - s.begin) / rate);
    EXPECT_NEAR(freq, d.truth["frequency_hz"].get<double>(), 20) << b;
  }
  EXPECT_NEAR(beeps.front().begin / rate, 0.25, 0.02) << "leading silence";
  EXPECT_NEAR(Seconds(d.wav) - beeps.back().end / rate, 0.25, 0.02) << "trailing silence";
  // The fades: no click, the first samples of each beep are small.
  for (const Segment& s : beeps) {
    for (size_t i = s.begin; i < s.begin + 10; ++i) {
      EXPECT_LT(std::abs(d.wav.samples[i]), 8000);
    }
  }
}

TEST(Audio, SpeechIsLongAndNotSilent) {
  for (const char* name : {"speech", "speech_math"}) {
    Decoded d = Load(name);
    ExpectPcm16Mono(d, d.truth["sample_rate"].get<int>());
    EXPECT_GE(d.wav.sample_rate, 8000) << name;
    EXPECT_EQ(d.truth["voice"], "en") << name;
    EXPECT_GT(Seconds(d.wav), 1.0) << name;
    EXPECT_NEAR(Seconds(d.wav), d.truth["duration_s"].get<double>(), 1e-3) << name;
    // Speech: several loud stretches covering a good part of the clip.
    auto loud = LoudSegments(d.wav, 500);
    size_t loud_samples = 0;
    for (const Segment& s : loud) {
      loud_samples += s.end - s.begin;
    }
    EXPECT_GE(loud.size(), 3u) << name;
    EXPECT_GT(static_cast<double>(loud_samples) / d.wav.samples.size(), 0.3) << name;
  }
  Decoded speech = Load("speech");
  EXPECT_EQ(speech.truth["text"], "The quick brown fox jumps over the lazy dog.");
  EXPECT_EQ(speech.truth["words"],
            json({"the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"}));
  Decoded math = Load("speech_math");
  EXPECT_EQ(math.truth["text"], "What is seven plus five?");
  EXPECT_EQ(math.truth["answer"], 7 + 5);
  EXPECT_GT(Seconds(speech.wav), Seconds(math.wav)) << "the longer sentence lasts longer";
}

TEST(Audio, ProbeIsAHalfSecondTone) {
  Decoded d = Load("probe_audio");
  ExpectPcm16Mono(d, 16000);
  EXPECT_EQ(d.truth, json::parse(R"({"probe":true})"));
  EXPECT_NEAR(Seconds(d.wav), 0.5, 1e-3);
  int crossings = 0;
  for (size_t i = 1; i < d.wav.samples.size(); ++i) {
    crossings += (d.wav.samples[i - 1] < 0) != (d.wav.samples[i] < 0) ? 1 : 0;
  }
  EXPECT_NEAR(crossings / 2.0 / Seconds(d.wav), 440, 10);
}

TEST(Audio, SynthesisIsDeterministic) {
  for (const char* name : {"speech", "beeps"}) {
    auto a = internal::GenerateUncached(name);
    auto b = internal::GenerateUncached(name);
    ASSERT_TRUE(a && b) << name;
    EXPECT_TRUE(a->bytes == b->bytes) << name;
  }
}

// Run by OrderDoesNotChangeTheBytes in a child process: generates the names listed in
// SB_MEDIA_ORDER, in that order, and prints "name sha256" lines.
TEST(Audio, OrderProbe) {
  const char* order = std::getenv("SB_MEDIA_ORDER");
  if (order == nullptr) {
    GTEST_SKIP() << "helper for Audio.OrderDoesNotChangeTheBytes";
  }
  std::istringstream names(order);
  std::string name;
  while (std::getline(names, name, ',')) {
    auto a = Generate(name);
    std::cout << "@@ " << name << " " << (a ? a->sha256 : "error") << "\n";
  }
}

std::string Hashes(const std::string& order) {
  auto r = sb::testing::RunProcess({"/proc/self/exe", "--gtest_filter=Audio.OrderProbe"},
                                   std::chrono::seconds(60), {"SB_MEDIA_ORDER=" + order});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::map<std::string, std::string> by_name;
  while (std::getline(lines, line)) {
    if (line.rfind("@@ ", 0) == 0) {
      std::istringstream fields(line.substr(3));
      std::string name;
      std::string hash;
      fields >> name >> hash;
      by_name[name] = hash;
    }
  }
  std::string out;
  for (const auto& [name, hash] : by_name) {
    out += name + " " + hash + "\n";
  }
  return out;
}

// espeak-ng carries state from one utterance to the next; the bytes must not depend on which
// sentence a process asks for first.
TEST(Audio, OrderDoesNotChangeTheBytes) {
  const std::string forward = Hashes("speech,speech_math,beeps");
  const std::string backward = Hashes("beeps,speech_math,speech");
  EXPECT_EQ(forward, backward);
  std::string here;
  for (const char* name : {"beeps", "speech", "speech_math"}) {
    auto a = Generate(name);
    ASSERT_TRUE(a.has_value());
    here += std::string(name) + " " + a->sha256 + "\n";
  }
  EXPECT_EQ(forward, here);
}

}  // namespace
}  // namespace sb::media
