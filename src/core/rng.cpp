#include "core/rng.h"

namespace sb {

namespace {

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

std::uint64_t Finalise(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t Rotl(std::uint64_t v, int k) {
  return (v << k) | (v >> (64 - k));
}

}  // namespace

std::uint64_t Mix64(std::uint64_t x) {
  return Finalise(x + kGolden);
}

std::uint64_t SplitMix64::Next() {
  state_ += kGolden;
  return Finalise(state_);
}

Rng::Rng(std::uint64_t seed) {
  SplitMix64 init(seed);
  for (auto& s : s_) {
    s = init.Next();
  }
}

std::uint64_t Rng::Next() {
  const std::uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double Rng::Uniform() {
  return static_cast<double>(Next() >> 11) * 0x1.0p-53;
}

double Rng::OpenUniform() {
  return static_cast<double>((Next() >> 11) + 1) * 0x1.0p-53;
}

std::uint64_t Rng::Below(std::uint64_t n) {
  // Rejection keeps it exactly uniform (Lemire's method would be faster).
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t v = Next();
  while (v >= limit) {
    v = Next();
  }
  return v % n;
}

std::int64_t Rng::Between(std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(Below(static_cast<std::uint64_t>(hi - lo) + 1));
}

}  // namespace sb
