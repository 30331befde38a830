// Request length distributions (--input-tokens, --output-tokens; docs/workloads.md): `N`,
// `uniform:A-B`, `normal:MEAN,SD`, `lognormal:MEDIAN,SIGMA` or `file:PATH` (one length per line,
// sampled uniformly), drawn from a seeded generator of our own (core/rng.h: xoshiro256** through
// splitmix64, and explicit samplers rather than <random>'s distributions, whose algorithms differ
// between standard libraries): a seed gives the same lengths on every machine and build. Thread
// safety: a LengthSampler belongs to one thread; the parsers are pure.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/rng.h"  // Rng (xoshiro256**), Mix64

namespace sb::workload {

struct LengthSpec {
  enum class Kind { kFixed, kUniform, kNormal, kLognormal, kFile };
  Kind kind = Kind::kFixed;
  double a = 0;             // N; A; MEAN; MEDIAN
  double b = 0;             // -; B; SD; SIGMA
  std::vector<int> values;  // kFile: the lengths read
  std::string text;         // the spec as given (for reports)
};

// Parses a spec; `file:PATH` reads the file (a bad line is "PATH:LINE: ..."). kUsage error
// naming the spec otherwise.
Result<LengthSpec> ParseLengthSpec(std::string_view text);

// The mean of the distribution before rounding and clamping.
double SpecMean(const LengthSpec& spec);

// Draws lengths: rounded to the nearest integer and clamped to [1, max_tokens].
class LengthSampler {
 public:
  LengthSampler(LengthSpec spec, std::uint64_t seed,
                int max_tokens = std::numeric_limits<int>::max());
  int Next();

  const LengthSpec& spec() const { return spec_; }

 private:
  LengthSpec spec_;
  Rng rng_;
  int max_;
};

}  // namespace sb::workload
