#include "perf/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/stats.h"

namespace sb::perf {

// Layout (as HdrHistogram's, with a unit of 1): with H = sub_bucket_half_count (the smallest
// power of two >= 10^digits), values below 2H are counted exactly, one counter each; above,
// every power-of-two range [H·2^b, 2H·2^b) is split into H counters of width 2^b. A counter's
// width over the smallest value it holds is therefore at most 2^b / (H·2^b) = 1/H <= 10^-digits.
Histogram::Histogram(int significant_digits) : digits_(std::clamp(significant_digits, 1, 5)) {
  std::int64_t largest_exact = 2;
  for (int i = 0; i < digits_; ++i) {
    largest_exact *= 10;
  }
  // Sub-buckets per power of two: the smallest power of two >= 2·10^digits.
  const int sub_bucket_count_magnitude =
      static_cast<int>(std::bit_width(static_cast<std::uint64_t>(largest_exact - 1)));
  sub_bucket_half_count_magnitude_ = sub_bucket_count_magnitude - 1;
  sub_bucket_half_count_ = std::int64_t{1} << sub_bucket_half_count_magnitude_;
  sub_bucket_mask_ = (std::int64_t{1} << sub_bucket_count_magnitude) - 1;
}

std::size_t Histogram::IndexOf(std::int64_t value) const {
  const auto v = static_cast<std::uint64_t>(value);
  const int pow2_ceiling =
      static_cast<int>(std::bit_width(v | static_cast<std::uint64_t>(sub_bucket_mask_)));
  const int bucket = pow2_ceiling - (sub_bucket_half_count_magnitude_ + 1);
  const auto sub = static_cast<std::int64_t>(v >> bucket);
  return static_cast<std::size_t>((std::int64_t{bucket + 1} << sub_bucket_half_count_magnitude_) +
                                  (sub - sub_bucket_half_count_));
}

std::int64_t Histogram::ValueAt(std::size_t index) const {
  const auto i = static_cast<std::int64_t>(index);
  std::int64_t bucket = (i >> sub_bucket_half_count_magnitude_) - 1;
  std::int64_t sub = (i & (sub_bucket_half_count_ - 1)) + sub_bucket_half_count_;
  if (bucket < 0) {
    sub -= sub_bucket_half_count_;
    bucket = 0;
  }
  return sub << bucket;
}

std::int64_t Histogram::BucketSize(std::size_t index) const {
  const std::int64_t bucket = std::max<std::int64_t>(
      0, (static_cast<std::int64_t>(index) >> sub_bucket_half_count_magnitude_) - 1);
  return std::int64_t{1} << bucket;
}

std::int64_t Histogram::LowestEquivalent(std::int64_t value) const {
  return ValueAt(IndexOf(std::max<std::int64_t>(value, 0)));
}

std::int64_t Histogram::HighestEquivalent(std::int64_t value) const {
  const std::size_t index = IndexOf(std::max<std::int64_t>(value, 0));
  return ValueAt(index) + (BucketSize(index) - 1);
}

void Histogram::Record(std::int64_t value, std::int64_t count) {
  if (count <= 0) {
    return;
  }
  value = std::max<std::int64_t>(value, 0);
  const std::size_t index = IndexOf(value);
  if (index >= counts_.size()) {
    counts_.resize(index + 1, 0);
  }
  counts_[index] += count;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += count;
  sum_ += static_cast<long double>(value) * static_cast<long double>(count);
}

void Histogram::Merge(const Histogram& other) {
  if (other.count_ == 0) {
    return;
  }
  if (other.digits_ != digits_) {
    for (std::size_t i = 0; i < other.counts_.size(); ++i) {
      if (other.counts_[i] > 0) {
        Record(other.ValueAt(i) + (other.BucketSize(i) - 1), other.counts_[i]);
      }
    }
    return;
  }
  if (other.counts_.size() > counts_.size()) {
    counts_.resize(other.counts_.size(), 0);
  }
  for (std::size_t i = 0; i < other.counts_.size(); ++i) {
    counts_[i] += other.counts_[i];
  }
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  sum_ += other.sum_;
}

double Histogram::Mean() const {
  return count_ > 0 ? static_cast<double>(sum_ / static_cast<long double>(count_)) : 0.0;
}

std::int64_t Histogram::ValueOfRank(std::int64_t rank) const {
  std::int64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen > rank) {
      const std::int64_t highest = ValueAt(i) + (BucketSize(i) - 1);
      return std::clamp(highest, min_, max_);
    }
  }
  return max_;  // not reached for rank < count_: the counts add up to count_
}

double Histogram::ValueAtPercentile(double percentile) const {
  if (count_ == 0) {
    return 0;
  }
  if (!(percentile > 0)) {  // also NaN
    return static_cast<double>(min_);
  }
  if (percentile >= 100) {
    return static_cast<double>(max_);
  }
  const PercentileRank r = RankOfPercentile(static_cast<std::size_t>(count_), percentile);
  const auto lo = static_cast<double>(ValueOfRank(static_cast<std::int64_t>(r.lo)));
  if (r.frac == 0) {
    return lo;
  }
  const auto hi = static_cast<double>(ValueOfRank(static_cast<std::int64_t>(r.hi)));
  return lo + (hi - lo) * r.frac;
}

bool Histogram::operator==(const Histogram& other) const {
  if (digits_ != other.digits_ || count_ != other.count_ || Min() != other.Min() ||
      Max() != other.Max() || sum_ != other.sum_) {
    return false;
  }
  const std::size_t n = std::max(counts_.size(), other.counts_.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t a = i < counts_.size() ? counts_[i] : 0;
    const std::int64_t b = i < other.counts_.size() ? other.counts_[i] : 0;
    if (a != b) {
      return false;
    }
  }
  return true;
}

}  // namespace sb::perf
