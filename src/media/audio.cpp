// The audio generators: speech from espeak-ng (synchronous mode, samples collected by the synth
// callback) and tones synthesized here, written as 16-bit PCM mono WAV.
// espeak-ng keeps global state (one voice, one callback, and synthesis state that carries from
// one utterance to the next), so every use holds espeak_mu and each sentence is synthesised
// once per process, in a fixed order (Speak).

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <espeak-ng/speak_lib.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "media/internal.h"

namespace sb::media::internal {

namespace {

using nlohmann::ordered_json;

constexpr const char* kVoice = "en";
constexpr int kSpeechRateWpm = 160;
constexpr int kToneRateHz = 16000;

// ---- WAV ----

void PutLe(std::string& out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

std::string Wav(const std::vector<int16_t>& samples, int rate_hz) {
  const auto data_bytes = static_cast<uint32_t>(samples.size() * 2);
  std::string out;
  out.reserve(44 + data_bytes);
  out += "RIFF";
  PutLe(out, 36 + data_bytes, 4);
  out += "WAVEfmt ";
  PutLe(out, 16, 4);                                  // fmt chunk size
  PutLe(out, 1, 2);                                   // PCM
  PutLe(out, 1, 2);                                   // mono
  PutLe(out, static_cast<uint32_t>(rate_hz), 4);      // sample rate
  PutLe(out, static_cast<uint32_t>(rate_hz) * 2, 4);  // byte rate
  PutLe(out, 2, 2);                                   // block align
  PutLe(out, 16, 2);                                  // bits per sample
  out += "data";
  PutLe(out, data_bytes, 4);
  for (int16_t s : samples) {
    PutLe(out, static_cast<uint16_t>(s), 2);
  }
  return out;
}

double Seconds(size_t samples, int rate_hz) {
  return std::round(static_cast<double>(samples) / rate_hz * 1000) / 1000;
}

// ---- speech ----

// espeak-ng's global state, so module state by necessity.
std::mutex espeak_mu;    // guards every espeak_* call and espeak_rate_hz
int espeak_rate_hz = 0;  // guarded by espeak_mu; 0: not initialised yet, < 0: failed

int CollectSamples(short* wav, int n, espeak_EVENT* events) {
  if (wav != nullptr && n > 0 && events != nullptr) {
    auto* out = static_cast<std::vector<int16_t>*>(events->user_data);
    out->insert(out->end(), wav, wav + n);
  }
  return 0;  // continue
}

struct Speech {
  std::vector<int16_t> samples;
  int rate_hz = 0;
};

// Each of kSentences' samples once synthesised; guarded by espeak_mu.
std::optional<std::vector<Result<Speech>>> spoken;

// Every sentence the catalogue speaks, in the order they are synthesised.
constexpr std::string_view kSpeechText = "The quick brown fox jumps over the lazy dog.";
constexpr std::string_view kSpeechMathText = "What is seven plus five?";
constexpr std::string_view kSentences[] = {kSpeechText, kSpeechMathText};

// One utterance. REQUIRES: espeak_mu held, espeak initialised.
Result<Speech> SynthesizeLocked(std::string_view text) {
  Speech speech;
  speech.rate_hz = espeak_rate_hz;
  const std::string z(text);  // NUL-terminated
  espeak_ERROR rc = espeak_Synth(z.c_str(), z.size() + 1, 0, POS_CHARACTER, 0,
                                 espeakCHARS_UTF8 | espeakENDPAUSE, nullptr, &speech.samples);
  if (rc != EE_OK) {
    return MakeError(ErrorCode::kInternal, fmt::format("speech synthesis: espeak_Synth failed ({})",
                                                       static_cast<int>(rc)));
  }
  espeak_Synchronize();
  if (speech.samples.empty()) {
    return MakeError(ErrorCode::kInternal, "speech synthesis: espeak-ng produced no samples");
  }
  return speech;
}

// The samples of one of kSentences. espeak-ng carries synthesis state from one utterance to
// the next (wavegen's pitch-flutter phase and filter state live in statics that no API resets),
// so an utterance's samples depend on what was said before it in the process. To give the same
// bytes whatever the order of requests, the first call synthesises every sentence, in the order
// of kSentences, from the freshly initialised engine, and later calls return those samples.
Result<Speech> Speak(std::string_view text) {
  std::lock_guard lock(espeak_mu);
  if (espeak_rate_hz == 0) {
    espeak_rate_hz =
        espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nullptr, espeakINITIALIZE_DONT_EXIT);
    if (espeak_rate_hz <= 0) {
      espeak_rate_hz = -1;
    }
  }
  if (espeak_rate_hz < 0) {
    return MakeError(ErrorCode::kInternal,
                     "speech synthesis: espeak_Initialize failed (is espeak-ng-data installed?)");
  }
  if (!spoken) {
    espeak_SetSynthCallback(CollectSamples);
    if (espeak_SetVoiceByName(kVoice) != EE_OK) {
      return MakeError(ErrorCode::kInternal,
                       fmt::format("speech synthesis: espeak-ng has no voice '{}'", kVoice));
    }
    espeak_SetParameter(espeakRATE, kSpeechRateWpm, 0);
    espeak_SetParameter(espeakVOLUME, 100, 0);
    espeak_SetParameter(espeakPITCH, 50, 0);
    espeak_SetParameter(espeakRANGE, 50, 0);
    espeak_SetParameter(espeakWORDGAP, 0, 0);
    espeak_SetParameter(espeakPUNCTUATION, espeakPUNCT_NONE, 0);
    spoken.emplace();
    for (std::string_view sentence : kSentences) {
      spoken->push_back(SynthesizeLocked(sentence));
    }
  }
  for (size_t i = 0; i < std::size(kSentences); ++i) {
    if (kSentences[i] == text) {
      return (*spoken)[i];
    }
  }
  return MakeError(ErrorCode::kInternal,
                   fmt::format("speech synthesis: '{}' is not a catalogue sentence", text));
}

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '\'') {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) {
    words.push_back(std::move(word));
  }
  return words;
}

Result<Generated> SpeechAsset(std::string_view text, ordered_json extra, std::string description) {
  auto speech = Speak(text);
  if (!speech) {
    return speech.error();
  }
  ordered_json truth = {{"text", text}};
  for (auto& [key, value] : extra.items()) {
    truth[key] = value;
  }
  truth["words"] = Words(text);
  truth["voice"] = kVoice;
  truth["sample_rate"] = speech->rate_hz;
  truth["duration_s"] = Seconds(speech->samples.size(), speech->rate_hz);
  return Generated{Wav(speech->samples, speech->rate_hz), truth.dump(), std::move(description)};
}

// ---- tones ----

// Appends a sine tone of `seconds` with raised-cosine fades of fade_s at both ends.
void AppendTone(std::vector<int16_t>& out, double freq_hz, double seconds, double fade_s) {
  const auto n = static_cast<size_t>(std::lround(seconds * kToneRateHz));
  const auto fade = static_cast<size_t>(std::lround(fade_s * kToneRateHz));
  for (size_t i = 0; i < n; ++i) {
    double gain = 1;
    size_t from_edge = std::min(i, n - 1 - i);
    if (from_edge < fade) {
      gain = 0.5 - 0.5 * std::cos(std::numbers::pi * static_cast<double>(from_edge) /
                                  static_cast<double>(fade));
    }
    double v = 0.5 * gain *
               std::sin(2 * std::numbers::pi * freq_hz * static_cast<double>(i) / kToneRateHz);
    out.push_back(static_cast<int16_t>(std::lround(v * 32767)));
  }
}

void AppendSilence(std::vector<int16_t>& out, double seconds) {
  out.insert(out.end(), static_cast<size_t>(std::lround(seconds * kToneRateHz)), 0);
}

Result<Generated> Beeps() {
  constexpr int kCount = 4;
  constexpr int kFreqHz = 880;
  constexpr double kBeepS = 0.2;
  constexpr double kGapS = 0.3;
  constexpr double kEdgeS = 0.25;
  std::vector<int16_t> samples;
  AppendSilence(samples, kEdgeS);
  for (int i = 0; i < kCount; ++i) {
    if (i > 0) {
      AppendSilence(samples, kGapS);
    }
    AppendTone(samples, kFreqHz, kBeepS, 0.01);
  }
  AppendSilence(samples, kEdgeS);
  ordered_json truth = {{"count", kCount},
                        {"frequency_hz", kFreqHz},
                        {"beep_s", kBeepS},
                        {"gap_s", kGapS},
                        {"sample_rate", kToneRateHz},
                        {"duration_s", Seconds(samples.size(), kToneRateHz)}};
  return Generated{Wav(samples, kToneRateHz), truth.dump(), "four 880 Hz beeps"};
}

Result<Generated> ProbeAudio() {
  std::vector<int16_t> samples;
  AppendTone(samples, 440, 0.5, 0.01);
  return Generated{Wav(samples, kToneRateHz), ordered_json{{"probe", true}}.dump(),
                   "0.5 s 440 Hz tone (probe)"};
}

}  // namespace

Result<Generated> GenerateAudio(std::string_view name) {
  if (name == "speech") {
    return SpeechAsset(kSpeechText, ordered_json::object(),
                       "speech: \"The quick brown fox jumps over the lazy dog.\"");
  }
  if (name == "speech_math") {
    return SpeechAsset(kSpeechMathText, ordered_json{{"answer", 7 + 5}},
                       "speech: \"What is seven plus five?\"");
  }
  if (name == "beeps") {
    return Beeps();
  }
  if (name == "probe_audio") {
    return ProbeAudio();
  }
  return MakeError(ErrorCode::kInternal, fmt::format("no audio generator '{}'", name));
}

std::string AudioLibraryVersions() {
  std::lock_guard lock(espeak_mu);
  const char* data_path = nullptr;
  const char* version = espeak_Info(&data_path);
  return fmt::format("espeak-ng {} voice {} rate {}", version != nullptr ? version : "?", kVoice,
                     kSpeechRateWpm);
}

}  // namespace sb::media::internal
