#include "workload/length.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>

namespace sb::workload {
namespace {

Error Bad(std::string_view spec, const std::string& why) {
  return Error{ErrorCode::kUsage,
               "length '" + std::string(spec) + "': " + why +
                   " (expected N, uniform:A-B, normal:MEAN,SD, lognormal:MEDIAN,SIGMA or "
                   "file:PATH)"};
}

bool Number(std::string_view text, double& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && std::isfinite(out);
}

// "X<sep>Y" -> two numbers.
bool Pair(std::string_view text, char sep, double& x, double& y) {
  const auto at = text.find(sep);
  return at != std::string_view::npos && Number(text.substr(0, at), x) &&
         Number(text.substr(at + 1), y);
}

Result<std::vector<int>> ReadLengths(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Error{ErrorCode::kSetup, path + ": cannot read the length file"};
  }
  std::vector<int> values;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.empty()) {
      continue;
    }
    double v = 0;
    if (!Number(line, v) || v < 1 || v != std::floor(v) || v > 1e9) {
      return Error{ErrorCode::kUsage, path + ":" + std::to_string(number) +
                                          ": expected a whole number of tokens >= 1, got '" + line +
                                          "'"};
    }
    values.push_back(static_cast<int>(v));
  }
  if (values.empty()) {
    return Error{ErrorCode::kUsage, path + ": the length file holds no lengths"};
  }
  return values;
}

// A standard normal draw (Box-Muller, one value per pair of uniforms).
double StandardNormal(Rng& rng) {
  const double u1 = 1.0 - rng.Uniform();  // (0, 1]
  const double u2 = rng.Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace

Result<LengthSpec> ParseLengthSpec(std::string_view text) {
  LengthSpec s;
  s.text = std::string(text);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) {
    if (!Number(text, s.a) || s.a < 1 || s.a != std::floor(s.a) || s.a > 1e9) {
      return Bad(text, "a fixed length is a whole number >= 1");
    }
    return s;
  }
  const std::string_view kind = text.substr(0, colon);
  const std::string_view rest = text.substr(colon + 1);
  if (kind == "uniform") {
    s.kind = LengthSpec::Kind::kUniform;
    if (!Pair(rest, '-', s.a, s.b) || s.a < 1 || s.b < s.a || s.a != std::floor(s.a) ||
        s.b != std::floor(s.b)) {
      return Bad(text, "uniform needs whole numbers 1 <= A <= B");
    }
  } else if (kind == "normal") {
    s.kind = LengthSpec::Kind::kNormal;
    if (!Pair(rest, ',', s.a, s.b) || s.a < 1 || s.b < 0) {
      return Bad(text, "normal needs MEAN >= 1 and SD >= 0");
    }
  } else if (kind == "lognormal") {
    s.kind = LengthSpec::Kind::kLognormal;
    if (!Pair(rest, ',', s.a, s.b) || s.a < 1 || s.b < 0 || s.b > 5) {
      return Bad(text, "lognormal needs MEDIAN >= 1 and SIGMA in [0, 5]");
    }
  } else if (kind == "file") {
    s.kind = LengthSpec::Kind::kFile;
    if (rest.empty()) {
      return Bad(text, "file needs a path");
    }
    auto values = ReadLengths(std::string(rest));
    if (!values) {
      return values.error();
    }
    s.values = std::move(values).value();
  } else {
    return Bad(text, "unknown kind '" + std::string(kind) + "'");
  }
  return s;
}

double SpecMean(const LengthSpec& s) {
  switch (s.kind) {
    case LengthSpec::Kind::kFixed:
      return s.a;
    case LengthSpec::Kind::kUniform:
      return (s.a + s.b) / 2;
    case LengthSpec::Kind::kNormal:
      return s.a;
    case LengthSpec::Kind::kLognormal:
      return s.a * std::exp(s.b * s.b / 2);
    case LengthSpec::Kind::kFile: {
      double sum = 0;
      for (const int v : s.values) {
        sum += v;
      }
      return sum / static_cast<double>(s.values.size());
    }
  }
  return 0;
}

LengthSampler::LengthSampler(LengthSpec spec, std::uint64_t seed, int max_tokens)
    : spec_(std::move(spec)), rng_(seed), max_(std::max(1, max_tokens)) {}

int LengthSampler::Next() {
  double v = 0;
  switch (spec_.kind) {
    case LengthSpec::Kind::kFixed:
      v = spec_.a;
      break;
    case LengthSpec::Kind::kUniform: {
      const auto span = static_cast<std::uint64_t>(spec_.b - spec_.a) + 1;
      v = spec_.a + static_cast<double>(rng_.Next() % span);
      break;
    }
    case LengthSpec::Kind::kNormal:
      v = spec_.a + spec_.b * StandardNormal(rng_);
      break;
    case LengthSpec::Kind::kLognormal:
      v = spec_.a * std::exp(spec_.b * StandardNormal(rng_));
      break;
    case LengthSpec::Kind::kFile:
      v = spec_.values[rng_.Next() % spec_.values.size()];
      break;
  }
  if (!std::isfinite(v)) {
    v = max_;
  }
  return static_cast<int>(
      std::clamp(std::llround(std::min(v, 2e9)), 1LL, static_cast<long long>(max_)));
}

}  // namespace sb::workload
