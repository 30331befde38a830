// `servebench roofline` through its CLI11 wiring (src/cli/roofline_command.cpp is compiled into
// this test, so the flags are checked without the rest of the binary) and the inputs it fills
// (roofline/inputs.h).
#include "cli/roofline_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "roofline/inputs.h"

namespace sb::cli {
namespace {

using nlohmann::json;
using roofline::RooflineArgs;
using roofline::RooflineOutput;
using roofline::RooflineResultsJson;

std::string DataPath(const std::string& name) {
  return std::string(SB_SOURCE_DIR) + "/tests/roofline/data/" + name;
}

// Parses `servebench roofline ARGS...` and returns the output or the error.
Result<std::string> Roofline(std::vector<std::string> args) {
  CLI::App app{"test", "servebench"};
  RooflineArgs a;
  CLI::App* cmd = AddRooflineCommand(app, a);
  args.insert(args.begin(), "roofline");
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  app.parse(args);
  EXPECT_TRUE(cmd->parsed());
  return RooflineOutput(a);
}

TEST(RooflineCommand, PrintsTheTable) {
  auto out = Roofline({"--model-config", DataPath("qwen3_moe_config.json"), "--weight-format",
                       "nvfp4", "--hardware", "spark", "--measured", "76.7"});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_NE(out->find("ceiling   125.44 tok/s"), std::string::npos) << *out;
  EXPECT_NE(out->find("measured  76.70 tok/s = 61.1% of the ceiling"), std::string::npos);
  EXPECT_NE(out->find("2,176,323,584"), std::string::npos);
}

TEST(RooflineCommand, JsonWithEveryOption) {
  auto out = Roofline({"--model-config", DataPath("qwen3_moe_config.json"), "--weight-format",
                       "NVFP4", "--hardware", "GB10", "--context", "4096", "--tokens-per-step", "2",
                       "--kv-cache-dtype", "fp8", "--lm-head-bits", "4.5", "--draft-bytes", "1000",
                       "--json"});
  ASSERT_TRUE(out) << out.error().message;
  json j = json::parse(*out);
  EXPECT_EQ(j["context_tokens"], 4096);
  EXPECT_EQ(j["tokens_per_step"], 2.0);
  EXPECT_EQ(j["kv_bytes_per_element"], 1.0);
  EXPECT_EQ(j["weight_format"]["lm_head_bits"], 4.5);
  EXPECT_EQ(j["bytes_per_step"]["kv_cache"], 201'326'592);
  // 1,528,823,808 + 25,165,824 + 311,164,928 x 4.5/8 + 4,096 + kv + draft.
  EXPECT_EQ(j["bytes_per_step"]["total"],
            1'528'823'808LL + 25'165'824 + 175'030'272 + 4'096 + 201'326'592 + 1'000);
}

TEST(RooflineCommand, DefaultsToTheDeclaredFormat) {
  auto out = Roofline(
      {"--model-config", DataPath("gpt_oss_20b_config.json"), "--hardware", "rtx-5090", "--json"});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(json::parse(*out)["weight_format"]["name"], "mxfp4");
  auto bf16 = Roofline(
      {"--model-config", DataPath("llama3_8b_config.json"), "--hardware", "h100", "--json"});
  ASSERT_TRUE(bf16);
  EXPECT_EQ(json::parse(*bf16)["weight_format"]["name"], "bf16");
}

TEST(RooflineCommand, BandwidthAloneOrOverridingTheTable) {
  auto alone = Roofline(
      {"--model-config", DataPath("llama3_8b_config.json"), "--bandwidth-gb-s", "300", "--json"});
  ASSERT_TRUE(alone) << alone.error().message;
  EXPECT_EQ(json::parse(*alone)["hardware"]["bandwidth_gb_s"], 300.0);
  auto over = Roofline({"--model-config", DataPath("llama3_8b_config.json"), "--hardware", "spark",
                        "--bandwidth-gb-s", "250", "--json"});
  ASSERT_TRUE(over);
  EXPECT_EQ(json::parse(*over)["hardware"]["name"], "DGX Spark (GB10)");
  EXPECT_EQ(json::parse(*over)["hardware"]["bandwidth_gb_s"], 250.0);
}

TEST(RooflineCommand, Lists) {
  auto hw = Roofline({"--list-hardware"});
  ASSERT_TRUE(hw);
  EXPECT_NE(hw->find("dgx-spark"), std::string::npos);
  EXPECT_NE(hw->find("spark, gb10"), std::string::npos);
  auto formats = Roofline({"--list-formats"});
  ASSERT_TRUE(formats);
  EXPECT_NE(formats->find("Q6_K"), std::string::npos);
  EXPECT_NE(formats->find("6.5625"), std::string::npos);
}

TEST(RooflineCommand, Errors) {
  auto no_config = Roofline({"--hardware", "spark"});
  ASSERT_FALSE(no_config);
  EXPECT_EQ(no_config.error().code, ErrorCode::kUsage);
  auto no_hw = Roofline({"--model-config", DataPath("llama3_8b_config.json")});
  ASSERT_FALSE(no_hw);
  EXPECT_EQ(no_hw.error().code, ErrorCode::kUsage);
  auto missing = Roofline({"--model-config", "/nonexistent.json", "--hardware", "spark"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kSetup);
  auto format = Roofline({"--model-config", DataPath("llama3_8b_config.json"), "--hardware",
                          "spark", "--weight-format", "fp3"});
  ASSERT_FALSE(format);
  EXPECT_EQ(format.error().code, ErrorCode::kUsage);
  auto hw_file = Roofline({"--model-config", DataPath("llama3_8b_config.json"), "--hardware",
                           "spark", "--hardware-file", "/nonexistent.json"});
  ASSERT_FALSE(hw_file);
  EXPECT_EQ(hw_file.error().code, ErrorCode::kSetup);
  auto measured = Roofline({"--model-config", DataPath("llama3_8b_config.json"), "--hardware",
                            "spark", "--measured", "0"});
  ASSERT_FALSE(measured);
  EXPECT_EQ(measured.error().code, ErrorCode::kUsage);
  EXPECT_THROW(Roofline({"--tokens-per-step", "0.5"}), CLI::ValidationError);
  EXPECT_THROW(Roofline({"--kv-cache-dtype", "int3"}), CLI::ValidationError);
}

TEST(RooflineCommand, SpeedCommandInputs) {
  CLI::App app{"test", "servebench"};
  RooflineArgs a;
  CLI::App* perf = app.add_subcommand("perf", "");
  AddRooflineInputs(perf, a, RooflineFlags::kSpeedCommand);
  std::vector<std::string> args = {"perf",
                                   "--model-config",
                                   DataPath("qwen3_moe_config.json"),
                                   "--weight-format",
                                   "nvfp4",
                                   "--hardware",
                                   "spark",
                                   "--roofline-context",
                                   "300"};
  std::reverse(args.begin(), args.end());
  app.parse(args);
  auto j = RooflineResultsJson(a, 76.7);
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ((*j)["context_tokens"], 300);
  EXPECT_NEAR((*j)["percent_of_ceiling"].get<double>(),
              100 * 76.7 / (*j)["ceiling_tok_s"].get<double>(), 1e-9);
}

}  // namespace
}  // namespace sb::cli
