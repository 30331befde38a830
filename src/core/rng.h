// The one random-number module: splitmix64 and xoshiro256** (Blackman & Vigna), our own rather
// than <random>'s engines and distributions, so that a seed gives the same numbers on every
// platform and library version (the simulator's answers, arrival schedules, shard seeds and
// bootstrap intervals are all reproducible from their seed).
// Thread safety: a generator is used from one thread.
#pragma once

#include <cstdint>

namespace sb {

// splitmix64 of x (the golden-ratio step, then its finaliser): a good 64-bit mix.
std::uint64_t Mix64(std::uint64_t x);

// The splitmix64 generator: Next() is Mix64 of 0, 1, 2 ... golden-ratio steps from the seed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next();

 private:
  std::uint64_t state_;
};

// xoshiro256**, its state seeded by four splitmix64 outputs of the seed.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t Next();
  double Uniform();                                        // [0, 1)
  double OpenUniform();                                    // (0, 1]: its log is finite
  std::uint64_t Below(std::uint64_t n);                    // [0, n), exactly; REQUIRES: n > 0
  std::int64_t Between(std::int64_t lo, std::int64_t hi);  // [lo, hi]; REQUIRES: lo <= hi

 private:
  std::uint64_t s_[4];
};

}  // namespace sb
