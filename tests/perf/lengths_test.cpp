// --input-tokens and --output-tokens as distributions against the simulator: each request's
// prompt is exactly its drawn size by the server's count and its answer exactly its drawn
// length, the draws are the seeded sequence (the same seed, the same lengths), and they vary.
#include <algorithm>
#include <set>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perf/profiles.h"
#include "profiles_fixture.h"
#include "workload/length.h"

namespace sb::perf {
namespace {

using fixture::Fixture;
using nlohmann::json;

sim::SimOptions Fast() {
  sim::SimOptions o = fixture::Quiet();
  o.ttft_ms = 2;
  o.itl_ms = 0.5;
  o.concurrency_slowdown = 0;
  return o;
}

TEST(LengthsTest, DrawnInputAndOutputLengthsAreSentExactlyInSeedOrder) {
  Fixture f(Fast());
  Session s = f.MakeSession();
  ProfileOptions po;
  po.warmup = 0;
  po.runs = 3;
  po.args.SetInts("--levels", {4});
  po.rate.rates = {50};
  po.rate.requests = 6;
  po.rate.seed = 11;
  po.input_lengths = *workload::ParseLengthSpec("uniform:80-400");
  po.output_lengths = *workload::ParseLengthSpec("normal:12,4");
  s.Decode(po);
  s.Concurrency(po);
  s.Rate(po);
  // Every measured request, in the order its body was built (ids are assigned in that order).
  std::vector<json> reqs;
  for (const json& x : f.samples) {
    if (x.value("warmup", false) == false) {
      reqs.push_back(x);
    }
  }
  std::sort(reqs.begin(), reqs.end(),
            [](const json& a, const json& b) { return a["id"] < b["id"]; });
  ASSERT_EQ(reqs.size(), 3U + 4U + 6U);
  workload::LengthSampler in(*po.input_lengths, 11), out(*po.output_lengths, 12);
  std::set<int> sizes, lengths;
  for (const json& r : reqs) {
    const int want_out = out.Next();
    const int want_in = in.Next();
    EXPECT_EQ(r["status"], "ok") << r.dump();
    EXPECT_EQ(r["prompt_tokens"], want_in) << r["profile"] << " " << r["label"];
    EXPECT_EQ(r["completion_tokens"], want_out) << r["profile"] << " " << r["label"];
    sizes.insert(want_in);
    lengths.insert(want_out);
  }
  EXPECT_GT(sizes.size(), 5U);
  EXPECT_GT(lengths.size(), 3U);
}

}  // namespace
}  // namespace sb::perf
