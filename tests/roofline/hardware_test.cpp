#include "roofline/hardware.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

namespace sb::roofline {
namespace {

double Bandwidth(const HardwareTable& t, const std::string& name) {
  auto h = t.Find(name);
  EXPECT_TRUE(h.has_value()) << name << ": " << (h ? "" : h.error().message);
  return h ? h->bandwidth_gb_s : -1;
}

std::string Id(const HardwareTable& t, const std::string& name) {
  auto h = t.Find(name);
  return h ? h->id : "(not found: " + h.error().message + ")";
}

// docs/roofline.md §4.
TEST(Hardware, BuiltinBandwidths) {
  HardwareTable t = HardwareTable::Builtin();
  const std::pair<const char*, double> table[] = {
      {"dgx-spark", 273}, {"jetson-agx-thor", 273}, {"h100-sxm", 3350}, {"h100-pcie", 2000},
      {"h200", 4800},     {"rtx-4090", 1008},       {"rtx-5090", 1792}, {"rtx-pro-6000", 1792},
      {"m1-max", 400},    {"m2-ultra", 800},        {"m3-max", 400},    {"m4-max", 546},
      {"m3-ultra", 819},
  };
  for (const auto& [id, gb_s] : table) {
    EXPECT_DOUBLE_EQ(Bandwidth(t, id), gb_s) << id;
  }
  ASSERT_GE(t.entries().size(), std::size(table));
  for (const Hardware& h : t.entries()) {
    EXPECT_GT(h.bandwidth_gb_s, 0) << h.id;
    EXPECT_FALSE(h.source.empty()) << h.id;
    EXPECT_FALSE(h.name.empty()) << h.id;
  }
}

TEST(Hardware, AliasesMatchCaseInsensitively) {
  HardwareTable t = HardwareTable::Builtin();
  for (const char* name : {"spark", "Spark", "GB10", "gb10", "DGX Spark", "dgx_spark", "DGX-SPARK",
                           "DGX Spark (GB10)"}) {
    EXPECT_EQ(Id(t, name), "dgx-spark") << name;
  }
  EXPECT_EQ(Id(t, "h100"), "h100-sxm");
  EXPECT_EQ(Id(t, "H100 PCIe"), "h100-pcie");
  EXPECT_EQ(Id(t, "4090"), "rtx-4090");
  EXPECT_EQ(Id(t, "RTX 4090"), "rtx-4090");
  EXPECT_EQ(Id(t, "5090"), "rtx-5090");
  EXPECT_EQ(Id(t, "rtx_pro_6000"), "rtx-pro-6000");
  EXPECT_EQ(Id(t, "RTX PRO 6000 Blackwell"), "rtx-pro-6000");
  EXPECT_EQ(Id(t, "thor"), "jetson-agx-thor");
  EXPECT_EQ(Id(t, "M3 Ultra"), "m3-ultra");
}

TEST(Hardware, UnknownNameIsAUsageErrorListingTheTable) {
  HardwareTable t = HardwareTable::Builtin();
  for (const char* name : {"tpu-v5", "", "---"}) {
    auto h = t.Find(name);
    ASSERT_FALSE(h) << name;
    EXPECT_EQ(h.error().code, ErrorCode::kUsage);
    EXPECT_NE(h.error().message.find("known: dgx-spark, "), std::string::npos);
    EXPECT_NE(h.error().message.find("--hardware-file"), std::string::npos);
  }
}

class HardwareFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("roofline_hw_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }

  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path Write(const std::string& text) {
    auto p = dir_ / "hardware.json";
    std::ofstream(p) << text;
    return p;
  }

  std::filesystem::path dir_;
};

TEST_F(HardwareFile, AddsEntriesWithAliases) {
  HardwareTable t = HardwareTable::Builtin();
  auto ok = t.LoadFile(Write(R"({"my-gpu": {"bandwidth_gb_s": 1000, "aliases": ["mine"]},
                                 "lab box": {"bandwidth_gb_s": 123.5, "name": "Lab box",
                                             "source": "measured with stream"}})"));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_DOUBLE_EQ(Bandwidth(t, "my-gpu"), 1000);
  EXPECT_DOUBLE_EQ(Bandwidth(t, "MY GPU"), 1000);
  EXPECT_DOUBLE_EQ(Bandwidth(t, "mine"), 1000);
  EXPECT_DOUBLE_EQ(Bandwidth(t, "lab-box"), 123.5);
  EXPECT_EQ(t.Find("lab box")->source, "measured with stream");
  EXPECT_EQ(t.Find("my-gpu")->name, "my-gpu");
  EXPECT_NE(t.Find("my-gpu")->source.find("hardware.json"), std::string::npos);
  EXPECT_DOUBLE_EQ(Bandwidth(t, "spark"), 273);  // built-ins stay
}

TEST_F(HardwareFile, SameNameUpdatesTheBuiltinAndKeepsItsAliases) {
  HardwareTable t = HardwareTable::Builtin();
  std::size_t before = t.entries().size();
  ASSERT_TRUE(t.AddJson(R"({"DGX-Spark": {"bandwidth_gb_s": 250, "aliases": ["desk"]}})", "f"));
  EXPECT_EQ(t.entries().size(), before);
  EXPECT_DOUBLE_EQ(Bandwidth(t, "spark"), 250);
  EXPECT_DOUBLE_EQ(Bandwidth(t, "desk"), 250);
  EXPECT_EQ(t.Find("spark")->name, "DGX Spark (GB10)");
}

TEST_F(HardwareFile, NewEntriesShadowBuiltinAliases) {
  HardwareTable t = HardwareTable::Builtin();
  ASSERT_TRUE(
      t.AddJson(R"({"h100-nvl-custom": {"bandwidth_gb_s": 3900, "aliases": ["h100"]}})", "f"));
  EXPECT_EQ(Id(t, "h100"), "h100-nvl-custom");
  EXPECT_EQ(Id(t, "h100-sxm"), "h100-sxm");
}

TEST_F(HardwareFile, Errors) {
  HardwareTable t = HardwareTable::Builtin();
  auto missing = t.LoadFile(dir_ / "absent.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kSetup);
  EXPECT_NE(missing.error().message.find("cannot read hardware file"), std::string::npos);

  auto no_bw = t.AddJson(R"({"x": {"name": "X"}})", "hw.json");
  ASSERT_FALSE(no_bw);
  EXPECT_EQ(no_bw.error().message, "hw.json: 'x': missing field 'bandwidth_gb_s'");
  EXPECT_EQ(t.AddJson(R"({"x": {"bandwidth_gb_s": -3}})", "hw.json").error().message,
            "hw.json: 'x': bandwidth_gb_s must be a positive number");
  EXPECT_EQ(t.AddJson(R"({"x": {"bandwidth_gb_s": "fast"}})", "hw.json").error().message,
            "hw.json: 'x': bandwidth_gb_s must be a positive number");
  EXPECT_EQ(t.AddJson(R"({"x": 5})", "hw.json").error().message,
            "hw.json: 'x': must be an object with bandwidth_gb_s");
  EXPECT_EQ(t.AddJson(R"({"x": {"bandwidth_gb_s": 5, "aliases": "y"}})", "hw.json").error().message,
            "hw.json: 'x': aliases must be an array of strings");
  auto bad = t.AddJson("{not json", "hw.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message.rfind("hw.json: a hardware file must be a JSON object", 0), 0u);
  EXPECT_FALSE(t.Find("x"));  // nothing half-added
}

}  // namespace
}  // namespace sb::roofline
