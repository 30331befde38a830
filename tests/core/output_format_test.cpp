// The one list of output formats: each name parses to its format only where a command accepts
// it, and the refusal names what the command does accept.
#include "core/output_format.h"

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(OutputFormat, EveryNameRoundTripsAndMarkdownIsAnAliasOfMd) {
  for (OutputFormat f : {OutputFormat::kMarkdown, OutputFormat::kHtml, OutputFormat::kCsv,
                         OutputFormat::kJson, OutputFormat::kJsonl, OutputFormat::kJunit}) {
    auto parsed = ParseOutputFormat(OutputFormatName(f), {f});
    ASSERT_TRUE(parsed) << OutputFormatName(f);
    EXPECT_EQ(*parsed, f);
  }
  EXPECT_EQ(*ParseOutputFormat("markdown", {OutputFormat::kMarkdown}), OutputFormat::kMarkdown);
}

TEST(OutputFormat, AFormatTheCommandDoesNotWriteIsRefusedNamingTheOnesItDoes) {
  auto html = ParseOutputFormat("html", {OutputFormat::kCsv, OutputFormat::kJunit});
  ASSERT_FALSE(html);
  EXPECT_EQ(html.error().code, ErrorCode::kUsage);
  EXPECT_EQ(html.error().message, "--format html: expected csv or junit");
  auto pdf =
      ParseOutputFormat("pdf", {OutputFormat::kMarkdown, OutputFormat::kHtml, OutputFormat::kJson});
  ASSERT_FALSE(pdf);
  EXPECT_EQ(pdf.error().message, "--format pdf: expected md, html or json");
  EXPECT_FALSE(ParseOutputFormat("", {OutputFormat::kMarkdown}));
}

}  // namespace
}  // namespace sb
