#include "report/format.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/html.h"
#include "report/markdown.h"

namespace sb::report {
namespace {

using nlohmann::json;

TEST(FormatTest, ThousandsSeparators) {
  EXPECT_EQ(Thousands(0), "0");
  EXPECT_EQ(Thousands(999), "999");
  EXPECT_EQ(Thousands(1000), "1,000");
  EXPECT_EQ(Thousands(47716), "47,716");
  EXPECT_EQ(Thousands(1234567), "1,234,567");
  EXPECT_EQ(Thousands(-4000), "-4,000");
  EXPECT_EQ(FormatCount(47716.4), "47,716");
  EXPECT_EQ(FormatCount(std::nullopt), "—");
}

TEST(FormatTest, TokPerSecondOneDecimal) {
  EXPECT_EQ(FormatFixed1(107.34), "107.3");
  EXPECT_EQ(FormatFixed1(98.0), "98.0");
  EXPECT_EQ(FormatFixed1(-0.04), "0.0");
  EXPECT_EQ(FormatFixed1(1119.84), "1,119.8");
  EXPECT_EQ(FormatFixed1(-1234567.0), "-1,234,567.0");
  EXPECT_EQ(FormatFixed1(std::nullopt), "—");
}

TEST(FormatTest, MillisecondsIntegerFromTen) {
  EXPECT_EQ(FormatMs(41.2), "41");
  EXPECT_EQ(FormatMs(98.0), "98");
  EXPECT_EQ(FormatMs(5.01), "5.0");
  EXPECT_EQ(FormatMs(9.94), "9.9");
  EXPECT_EQ(FormatMs(9.96), "10");
  EXPECT_EQ(FormatMs(1500.4), "1,500");
  EXPECT_EQ(FormatMs(std::nullopt), "—");
}

TEST(FormatTest, SecondsTwoDecimalsBelowOne) {
  EXPECT_EQ(FormatSeconds(444.83), "444.8");
  EXPECT_EQ(FormatSeconds(1.0), "1.0");
  EXPECT_EQ(FormatSeconds(0.82), "0.82");
  EXPECT_EQ(FormatSeconds(0.7), "0.7");
  EXPECT_EQ(FormatSeconds(0.001), "0.00");
  EXPECT_EQ(FormatSeconds(1234.56), "1,234.6");
  EXPECT_EQ(FormatSeconds(0.04), "0.04");
  EXPECT_EQ(FormatSeconds(std::nullopt), "—");
}

TEST(FormatTest, Percent) {
  EXPECT_EQ(FormatPercent(1.0), "100%");
  EXPECT_EQ(FormatPercent(0.909), "90.9%");
  EXPECT_EQ(FormatPercent(0.5), "50%");
  EXPECT_EQ(FormatPercent(0.0), "0%");
  EXPECT_EQ(FormatPercent(std::nullopt), "—");
}

TEST(FormatTest, RatioKeepsSmallDifferencesVisible) {
  EXPECT_EQ(FormatRatio(3.93), "3.9×");
  EXPECT_EQ(FormatRatio(2.714), "2.7×");
  EXPECT_EQ(FormatRatio(1.04), "1.04×");
  EXPECT_EQ(FormatRatio(1.1), "1.1×");
}

TEST(FormatTest, MarkdownCellEscapesAndCuts) {
  EXPECT_EQ(MarkdownCell("a|b"), "a\\|b");
  EXPECT_EQ(MarkdownCell("<think>"), "\\<think>");
  EXPECT_EQ(MarkdownCell("line1\r\nline2"), "line1 line2");
  EXPECT_EQ(MarkdownCell("abcdef", 3), "abc…");
  EXPECT_EQ(MarkdownCell("ééé", 2), "éé…");  // counts characters, never splits one
  EXPECT_EQ(MarkdownCell("abc", 3), "abc");
}

TEST(FormatTest, MarkdownInlineKeepsEmphasisAndCodeOut) {
  EXPECT_EQ(MarkdownInline("q4_k_m *fast*"), "q4\\_k\\_m \\*fast\\*");
  EXPECT_EQ(MarkdownInline("[link](x) `c` a\\b"), "\\[link\\](x) \\`c\\` a\\\\b");
  EXPECT_EQ(MarkdownInline("a|b <i>"), "a\\|b \\<i>");  // MarkdownCell's escapes, not doubled
  EXPECT_EQ(MarkdownInline("plain"), "plain");
  EXPECT_EQ(MarkdownCode("tp=2"), "`tp=2`");
  EXPECT_EQ(MarkdownCode("a`b"), "`` a`b ``");
  EXPECT_EQ(MarkdownCode("x``y"), "``` x``y ```");
}

TEST(FormatTest, HtmlEscape) {
  EXPECT_EQ(XmlEscape("<b>\"x\" & 'y'</b>"), "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;");
}

TEST(FormatTest, NullSafeReads) {
  json j = {{"a", {{"b", 2.5}, {"n", nullptr}, {"s", "x"}, {"arr", {1, nullptr, "z", 3}}}}};
  EXPECT_EQ(NumberAt(j, {"a", "b"}), 2.5);
  EXPECT_EQ(NumberAt(j, {"a", "n"}), std::nullopt);
  EXPECT_EQ(NumberAt(j, {"a", "s"}), std::nullopt);
  EXPECT_EQ(NumberAt(j, {"a", "b", "deeper"}), std::nullopt);
  EXPECT_EQ(NumberAt(json::array(), {"a"}), std::nullopt);
  EXPECT_EQ(StringAt(j, {"a", "s"}), "x");
  EXPECT_EQ(StringAt(j, {"a", "b"}), std::nullopt);
  EXPECT_EQ(NumbersAt(j, {"a", "arr"}), (std::vector<double>{1, 3}));
  EXPECT_TRUE(ArrayAt(j, {"a", "b"}).empty());
}

TEST(FormatTest, TargetDescription) {
  json j = {{"target",
             {{"endpoint", "http://h:8000/v1"},
              {"model", "Qwen/Qwen3-8B"},
              {"server", {{"kind", "vllm"}, {"version", "0.11.0"}}}}}};
  EXPECT_EQ(DescribeTarget(j), "Qwen/Qwen3-8B at http://h:8000/v1 (vLLM 0.11.0)");
  j["target"]["server"]["version"] = nullptr;
  EXPECT_EQ(DescribeTarget(j), "Qwen/Qwen3-8B at http://h:8000/v1 (vLLM, version unknown)");
  j["target"]["simulated"] = true;
  EXPECT_EQ(DescribeTarget(j).rfind("the built-in simulator (no model server)", 0), 0u);
}

TEST(FormatTest, CategoryName) {
  EXPECT_EQ(CategoryName("tool_calling"), "Tool calling");
  EXPECT_EQ(CategoryName("image"), "Image");
  EXPECT_EQ(CategoryName("multi-image"), "Multi-image");
  EXPECT_EQ(CategoryName("ttft"), "TTFT");
  EXPECT_EQ(CategoryName("latency_throughput"), "Latency & throughput");
  EXPECT_EQ(CategoryName(""), "");
}

TEST(FormatTest, LabelsOfGivesTheLabelAndTheTagsAsRawText) {
  json j = json::parse(R"({"labels": {"label": "mtp <3>", "tags": {"hw": "spark", "n": 3,
                                                                   "spec": "a=b"}}})");
  RunLabels l = LabelsOf(j);
  ASSERT_TRUE(l.label.has_value());
  EXPECT_EQ(*l.label, "mtp <3>");                                         // unescaped
  EXPECT_EQ(l.tags, (std::vector<std::string>{"hw=spark", "spec=a=b"}));  // a number is no tag
  EXPECT_FALSE(l.empty());
  j["labels"]["label"] = "";
  l = LabelsOf(j);
  EXPECT_FALSE(l.label.has_value());
  EXPECT_EQ(l.tags.size(), 2u);
  EXPECT_TRUE(LabelsOf(json::parse(R"({"labels": null})")).empty());
  EXPECT_TRUE(LabelsOf(json::object()).empty());
}

// The same labels in both reports' header, each in its own markup.
TEST(FormatTest, ReportMdAndHtmlShowTheSameLabels) {
  const json doc = json::parse(R"({"target": {"model": "m"}, "status": "complete",
      "labels": {"label": "mtp 3", "tags": {"hw": "spark"}}})");
  const std::string md = RenderMarkdown(doc);
  EXPECT_NE(md.find("Label: **mtp 3** · `hw=spark`\n"), std::string::npos) << md;
  EXPECT_NE(RenderHtml(doc).find("Label: <strong>mtp 3</strong> · <code>hw=spark</code></p>"),
            std::string::npos);
}

}  // namespace
}  // namespace sb::report
