// A log-linear histogram of non-negative integers (HdrHistogram's bucket layout, our own code):
// values are kept to `significant_digits` decimal digits of precision at every magnitude, so a
// percentile read back from it is within 10^-digits of the exact value, relatively, whatever the
// spread of the data (1 µs and 100 s in one histogram). Counts are integers, so two histograms
// merge exactly (per-thread histograms, merged after the run). The range grows on demand: there
// is no highest trackable value to configure.
// Units are the caller's (servebench records nanoseconds). Thread safety: none; one owner.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace sb::perf {

class Histogram {
 public:
  // REQUIRES: 1 <= significant_digits <= 5 (values outside are clamped into that range).
  explicit Histogram(int significant_digits = 3);

  // Records `value` `count` times. Negative values are recorded as 0; count <= 0 does nothing.
  void Record(std::int64_t value, std::int64_t count = 1);

  // Adds every value recorded in `other`. With the same significant digits the result is
  // exactly what recording both streams into one histogram gives. With different digits, each
  // of other's buckets is recorded at its highest equivalent value (the coarser error applies).
  void Merge(const Histogram& other);

  std::int64_t count() const { return count_; }

  bool empty() const { return count_ == 0; }

  int significant_digits() const { return digits_; }

  // Exact smallest/largest recorded value; 0 when empty.
  std::int64_t Min() const { return count_ > 0 ? min_ : 0; }

  std::int64_t Max() const { return count_ > 0 ? max_ : 0; }

  // Exact arithmetic mean of the recorded values (the sum is kept, not estimated from buckets);
  // 0 when empty.
  double Mean() const;

  // The percentile by servebench's one convention (sb::RankOfPercentile, core/stats.h: linear
  // interpolation between the values of the two closest ranks), where the value of a rank is the
  // highest value of its bucket clamped to [Min(), Max()]. So for the exact percentile x of the
  // recorded values, x <= result <= x × (1 + 10^-digits). percentile is clamped to [0, 100]; 0
  // gives Min(), 100 gives Max(). 0 when empty.
  double ValueAtPercentile(double percentile) const;

  // The range of values the histogram cannot tell apart from `value` (its bucket).
  std::int64_t LowestEquivalent(std::int64_t value) const;
  std::int64_t HighestEquivalent(std::int64_t value) const;

  bool operator==(const Histogram& other) const;

  // The exact state as JSON (histogram_json.cpp; docs/results-schema.md "histograms"):
  // {"digits", "count", "min", "max", "sum", "buckets": [[index, count], ...]} with only the
  // non-empty buckets. FromJson(ToJson()) == the original, so histograms written by separate
  // processes (the shards of one load) merge exactly.
  nlohmann::json ToJson() const;
  // kSetup error naming what is wrong when `j` is not such an object (or is inconsistent).
  static Result<Histogram> FromJson(const nlohmann::json& j);

 private:
  std::size_t IndexOf(std::int64_t value) const;
  std::int64_t ValueAt(std::size_t index) const;      // lowest value of the bucket at index
  std::int64_t ValueOfRank(std::int64_t rank) const;  // 0-based rank, bucket's highest, clamped
  std::int64_t BucketSize(std::size_t index) const;

  int digits_;
  int sub_bucket_half_count_magnitude_;  // log2 of half the sub-buckets per power of two
  std::int64_t sub_bucket_half_count_;
  std::int64_t sub_bucket_mask_;
  std::vector<std::int64_t> counts_;  // grows to the highest index recorded
  std::int64_t count_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
  long double sum_ = 0;  // exact for integer sums below 2^64 (x86-64: 64-bit mantissa)
};

// Percentiles of a histogram of nanoseconds in units of `unit_ns` (1e6: ms, 1e3: µs), as every
// rate-profile row reports them: {"n","min","mean","p50","p90","p95","p99","p99_9","max"}, or
// {"n": 0} when empty. `servebench merge` recomputes a merged row with this same function.
nlohmann::json PercentilesJson(const Histogram& h, double unit_ns);

}  // namespace sb::perf
