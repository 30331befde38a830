#include "client/sse_parser.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace sb::client {
namespace {

namespace fs = std::filesystem;

struct Parsed {
  std::vector<SseEvent> events;
  bool clean = false;
};

// Feeds input cut at the given offsets (ascending, each in (0, size)).
Parsed ParseSplit(std::string_view input, const std::vector<std::size_t>& cuts) {
  SseParser parser;
  Parsed out;
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    parser.Feed(input.substr(at, cut - at), out.events);
    at = cut;
  }
  parser.Feed(input.substr(at), out.events);
  out.clean = parser.Finish(out.events);
  return out;
}

Parsed ParseWhole(std::string_view input) {
  return ParseSplit(input, {});
}

// Asserts that every two-piece split, 1-byte feeding and `random_rounds` random multi-splits
// give exactly the events of the one-piece parse.
void ExpectSplitIndependent(std::string_view input, int random_rounds = 50,
                            std::uint32_t seed = 1) {
  const Parsed whole = ParseWhole(input);
  for (std::size_t k = 1; k < input.size(); ++k) {
    const Parsed split = ParseSplit(input, {k});
    ASSERT_EQ(split.events, whole.events) << "split at offset " << k;
    ASSERT_EQ(split.clean, whole.clean) << "split at offset " << k;
  }
  std::vector<std::size_t> every;
  for (std::size_t k = 1; k < input.size(); ++k) {
    every.push_back(k);
  }
  const Parsed bytes = ParseSplit(input, every);
  ASSERT_EQ(bytes.events, whole.events) << "1-byte pieces";
  ASSERT_EQ(bytes.clean, whole.clean);
  std::mt19937 rng(seed);
  for (int round = 0; round < random_rounds && input.size() > 1; ++round) {
    std::uniform_int_distribution<std::size_t> pos(1, input.size() - 1);
    std::uniform_int_distribution<int> count(1, 12);
    std::vector<std::size_t> cuts;
    for (int i = count(rng); i > 0; --i) {
      cuts.push_back(pos(rng));
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    const Parsed split = ParseSplit(input, cuts);
    ASSERT_EQ(split.events, whole.events) << "random round " << round;
  }
}

using sb::testing::ReadFile;

// The SSE body of a captured response (some captures start with the HTTP head).
std::string StreamBody(std::string raw) {
  if (raw.rfind("HTTP/", 0) == 0) {
    const std::size_t at = raw.find("\r\n\r\n");
    raw.erase(0, at == std::string::npos ? raw.size() : at + 4);
  }
  return raw;
}

std::vector<fs::path> StreamFixtures() {
  std::vector<fs::path> out;
  for (const fs::path& dir :
       {fs::path(SB_FIXTURES_DIR) / "llama.cpp", fs::path(SB_SOURCE_DIR) / "tests/client/data"}) {
    if (!fs::exists(dir)) {
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) {
        continue;
      }
      const std::string body = StreamBody(ReadFile(entry.path()));
      if (body.rfind("data:", 0) == 0 || body.find("\ndata:") != std::string::npos) {
        out.push_back(entry.path());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SseParser, BasicFieldsAndDispatch) {
  const Parsed p = ParseWhole(
      "event: update\nid: 7\ndata: one\n\n"
      "data: two\nretry: 100\nunknown: x\n\n");
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[0].event, "update");
  EXPECT_EQ(p.events[0].id, "7");
  EXPECT_EQ(p.events[0].data, "one");
  EXPECT_EQ(p.events[1].event, "");
  EXPECT_EQ(p.events[1].id, "7");  // the last event ID persists
  EXPECT_EQ(p.events[1].data, "two");
  EXPECT_TRUE(p.clean);
}

TEST(SseParser, LineEndingsCrLfCrlfAreEquivalent) {
  const std::string lf = "data: a\ndata: b\n\ndata: c\n\n";
  std::string cr = lf;
  std::replace(cr.begin(), cr.end(), '\n', '\r');
  std::string crlf;
  for (char c : lf) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  }
  const Parsed a = ParseWhole(lf);
  ASSERT_EQ(a.events.size(), 2u);
  EXPECT_EQ(a.events[0].data, "a\nb");
  EXPECT_EQ(a.events[1].data, "c");
  EXPECT_EQ(ParseWhole(cr).events, a.events);
  EXPECT_EQ(ParseWhole(crlf).events, a.events);
  ExpectSplitIndependent(cr);
  ExpectSplitIndependent(crlf);
  // Mixed: a CR followed by LF in the next chunk is one line end, not two (which would
  // dispatch an event early).
  const Parsed mixed = ParseSplit("data: x\r\ndata: y\r\n\r\n", {8});
  ASSERT_EQ(mixed.events.size(), 1u);
  EXPECT_EQ(mixed.events[0].data, "x\ny");
}

TEST(SseParser, CommentsAndKeepAlivePingsAreIgnored) {
  const std::string input = ": ping\n\n:keep-alive\ndata: x\n: inside\ndata: y\n\n: bye\n";
  const Parsed p = ParseWhole(input);
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_EQ(p.events[0].data, "x\ny");
  EXPECT_TRUE(p.clean);
  ExpectSplitIndependent(input);
}

TEST(SseParser, MultiLineDataAndFieldWithoutColon) {
  const std::string input = "data\ndata:no-space\ndata:  two spaces\n\n";
  const Parsed p = ParseWhole(input);
  ASSERT_EQ(p.events.size(), 1u);
  // "data" alone is an empty data line; only one leading space is removed.
  EXPECT_EQ(p.events[0].data, "\nno-space\n two spaces");
  ExpectSplitIndependent(input);
}

TEST(SseParser, EventWithoutDataIsNotDispatched) {
  const Parsed p = ParseWhole("event: lonely\n\ndata: z\n\n");
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_EQ(p.events[0].event, "");  // the event name was reset by the empty dispatch
  EXPECT_EQ(p.events[0].data, "z");
}

TEST(SseParser, LeadingBomIsSkippedOnlyAtStreamStart) {
  const std::string input =
      "\xEF\xBB\xBF"
      "data: a\n\ndata: \xEF\xBB\xBF"
      "b\n\n";
  const Parsed p = ParseWhole(input);
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[0].data, "a");
  EXPECT_EQ(p.events[1].data,
            "\xEF\xBB\xBF"
            "b");  // not at the start: kept
  ExpectSplitIndependent(input);
  // A first line holding only the BOM is an empty line.
  const Parsed bom_only_line = ParseSplit("\xEF\xBB\xBF\ndata: q\n\n", {1, 2});
  ASSERT_EQ(bom_only_line.events.size(), 1u);
  EXPECT_EQ(bom_only_line.events[0].data, "q");
}

TEST(SseParser, MissingFinalBlankLineStillDeliversTheEvent) {
  Parsed p = ParseWhole("data: a\n\ndata: last\n");
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[1].data, "last");
  EXPECT_FALSE(p.clean);
  p = ParseWhole("data: a\n\ndata: partial");
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[1].data, "partial");
  EXPECT_FALSE(p.clean);
  EXPECT_TRUE(ParseWhole("data: a\n\n").clean);
  EXPECT_TRUE(ParseWhole("").clean);
  ExpectSplitIndependent("data: a\n\ndata: partial");
}

TEST(SseParser, SplitInsideMultiByteUtf8Character) {
  // "é" = C3 A9, "世" = E4 B8 96, "😀" = F0 9F 98 80.
  const std::string input = "data: {\"c\":\"h\xC3\xA9 \xE4\xB8\x96 \xF0\x9F\x98\x80\"}\n\n";
  const Parsed whole = ParseWhole(input);
  ASSERT_EQ(whole.events.size(), 1u);
  EXPECT_EQ(whole.events[0].data, "{\"c\":\"h\xC3\xA9 \xE4\xB8\x96 \xF0\x9F\x98\x80\"}");
  for (std::size_t k = 0; k < input.size(); ++k) {
    const auto byte = static_cast<unsigned char>(input[k]);
    if ((byte & 0xC0) == 0x80) {  // k is inside a character: cut right before this byte
      EXPECT_EQ(ParseSplit(input, {k}).events, whole.events) << "offset " << k;
    }
  }
}

TEST(SseParser, ReusableAfterFinish) {
  SseParser parser;
  std::vector<SseEvent> out;
  parser.Feed("data: a", out);
  EXPECT_FALSE(parser.Finish(out));
  parser.Feed("data: b\n\n", out);
  EXPECT_TRUE(parser.Finish(out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data, "a");
  EXPECT_EQ(out[1].data, "b");
}

TEST(SseParser, EveryFixtureStreamIsSplitIndependent) {
  const std::vector<fs::path> files = StreamFixtures();
  // 25 llama.cpp streams (5 server builds) plus our vLLM/SGLang bodies.
  ASSERT_GE(files.size(), 25u) << "fixtures missing under " << SB_FIXTURES_DIR;
  std::uint32_t seed = 1;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    const std::string body = StreamBody(ReadFile(file));
    const Parsed whole = ParseWhole(body);
    ASSERT_FALSE(whole.events.empty());
    EXPECT_TRUE(whole.clean);
    // Every offset of the whole stream for small captures; for the long ones (50-100 KB of
    // near-identical events) every offset of the first 6 KB, cut at an event boundary, and
    // 1-byte plus random splits of the whole stream.
    constexpr std::size_t kExhaustive = 6 * 1024;
    if (body.size() <= kExhaustive) {
      ExpectSplitIndependent(body, 50, seed++);
    } else {
      const std::size_t cut = body.rfind("\n\n", kExhaustive);
      ASSERT_NE(cut, std::string::npos);
      ExpectSplitIndependent(std::string_view(body).substr(0, cut + 2), 20, seed++);
      std::vector<std::size_t> every;
      for (std::size_t k = 1; k < body.size(); ++k) {
        every.push_back(k);
      }
      ASSERT_EQ(ParseSplit(body, every).events, whole.events);
      std::mt19937 rng(seed++);
      for (int round = 0; round < 20; ++round) {
        std::vector<std::size_t> cuts;
        std::uniform_int_distribution<std::size_t> pos(1, body.size() - 1);
        for (int i = 0; i < 64; ++i) {
          cuts.push_back(pos(rng));
        }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        ASSERT_EQ(ParseSplit(body, cuts).events, whole.events) << "round " << round;
      }
    }
  }
}

// ---- caps -------------------------------------------------------------------------------------

TEST(SseParserCap, GiantLineStopsTheParserWithBoundedMemory) {
  constexpr std::size_t kCap = 1 << 20;
  SseParser parser;  // the default cap: 1 MiB
  ASSERT_EQ(parser.max_line_bytes(), kCap);
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.Feed("data: before\n\ndata: {\"x\":\"", out));
  const std::string chunk(16 * 1024, 'x');
  std::size_t fed = 0;
  bool ok = true;
  std::size_t max_buffered = 0;
  // 64 MiB in 16 KiB pieces, as a server streaming one enormous line would send it.
  while (fed < (std::size_t{64} << 20)) {
    ok = parser.Feed(chunk, out);
    fed += chunk.size();
    max_buffered = std::max(max_buffered, parser.buffered_bytes());
    if (!ok) {
      break;
    }
  }
  EXPECT_FALSE(ok);
  EXPECT_LE(fed, kCap + chunk.size());      // it stopped as soon as the cap was crossed
  EXPECT_LE(max_buffered, kCap + 64);       // capacity never grew past the cap (plus SSO slack)
  EXPECT_LT(parser.buffered_bytes(), 64u);  // and was given back
  EXPECT_EQ(parser.error(), "SSE line over 1 MiB (cap: 1048576 bytes)");
  ASSERT_EQ(out.size(), 1u);  // the event before the giant line survives
  EXPECT_EQ(out[0].data, "before");
  EXPECT_FALSE(parser.Feed("\n\ndata: after\n\n", out));  // ignored from now on
  EXPECT_EQ(out.size(), 1u);
  EXPECT_FALSE(parser.Finish(out));
  EXPECT_EQ(out.size(), 1u);
  // Finish() resets: the parser works again, with a clean error.
  EXPECT_TRUE(parser.Feed("data: next\n\n", out));
  EXPECT_TRUE(parser.error().empty());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].data, "next");
}

TEST(SseParserCap, OneChunkHoldingAGiantLineIsRefusedWithoutCopying) {
  SseParser parser(1024);
  std::vector<SseEvent> out;
  const std::string body = "data: " + std::string(2000, 'y') + "\n\n";
  EXPECT_FALSE(parser.Feed(body, out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(parser.error(), "SSE line over 1 KiB (cap: 1024 bytes)");
  EXPECT_LT(parser.buffered_bytes(), 64u);
}

TEST(SseParserCap, ManyDataLinesOverTheCapAreOneEventOverIt) {
  SseParser parser(1000);
  std::vector<SseEvent> out;
  const std::string line = "data: " + std::string(90, 'z') + "\n";
  bool ok = true;
  for (int i = 0; i < 20 && ok; ++i) {  // 20 x 90 bytes joined: over 1000
    ok = parser.Feed(line, out);
    EXPECT_LE(parser.buffered_bytes(), 1000u + 64u);
  }
  EXPECT_FALSE(ok);
  EXPECT_EQ(parser.error(), "SSE event over 1000 bytes (cap: 1000 bytes)");
  EXPECT_TRUE(out.empty());
}

TEST(SseParserCap, ALineExactlyAtTheCapIsFine) {
  SseParser parser(100);
  std::vector<SseEvent> out;
  const std::string data(94, 'a');  // "data: " + 94 = 100 bytes
  const std::string body = "data: " + data + "\n\n";
  for (char c : body) {  // byte by byte: the buffered path
    ASSERT_TRUE(parser.Feed(std::string_view(&c, 1), out)) << parser.error();
  }
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, data);
  ASSERT_TRUE(parser.Feed(body, out));  // the unbuffered path
  EXPECT_EQ(out.size(), 2u);
  EXPECT_FALSE(parser.Feed("data: " + data + "b\n\n", out));
}

}  // namespace
}  // namespace sb::client
