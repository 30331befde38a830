// SseParser::FeedEach, the client's per-token path: the same events as Feed, a stop on request,
// and no heap allocation per event once the stream is warm (counted on this thread by a
// replaced global operator new; the count is kept only while a test turns it on).
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/sse_parser.h"

namespace {
thread_local bool g_counting = false;
thread_local long g_allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting) {
    ++g_allocations;
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) {
    return p;
  }
  throw std::bad_alloc();
}

void* operator new[](std::size_t n) {
  return ::operator new(n);
}

void operator delete(void* p) noexcept {
  std::free(p);
}

void operator delete[](void* p) noexcept {
  std::free(p);
}

void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace sb::client {
namespace {

// An OpenAI-style chat stream of `n` content chunks (each a little different, as a real one).
std::string ChatStream(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{"
         "\"index\":0,\"delta\":{\"content\":\"tok" +
         std::to_string(i) + "\"},\"finish_reason\":null}]}\n\n";
  }
  s += "data: [DONE]\n\n";
  return s;
}

TEST(SseParserFeedEach, GivesTheEventsFeedGivesHoweverTheBytesAreSplit) {
  const std::string body = ChatStream(200) + "event: x\nid: 7\ndata: a\ndata: b\n\n: ping\n\n";
  for (std::size_t piece : {1u, 7u, 64u, 1000u, 100000u}) {
    SseParser a, b;
    std::vector<SseEvent> want, got;
    for (std::size_t at = 0; at < body.size(); at += piece) {
      const std::string_view bytes = std::string_view(body).substr(at, piece);
      ASSERT_TRUE(a.Feed(bytes, want));
      ASSERT_TRUE(b.FeedEach(bytes, [&](const SseEvent& e) {
        got.push_back(e);
        return true;
      }));
    }
    EXPECT_EQ(got, want) << "pieces of " << piece;
    EXPECT_EQ(got.size(), 202u);
    EXPECT_EQ(got.back().data, "a\nb");
    EXPECT_EQ(got.back().id, "7");
  }
}

TEST(SseParserFeedEach, StopsAtTheEventTheCallerRefuses) {
  SseParser p;
  int seen = 0;
  const bool fed = p.FeedEach(ChatStream(5), [&](const SseEvent&) { return ++seen < 2; });
  EXPECT_FALSE(fed);
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(p.error(), "");  // a stop, not an overflow
}

TEST(SseParserFeedEach, AWarmStreamAllocatesNothingPerEvent) {
  const int kEvents = 2000;
  const std::string body = ChatStream(kEvents);
  // One event per read, as a token stream arrives; the offsets are computed before counting.
  std::vector<std::string_view> reads;
  for (std::size_t at = 0; at < body.size();) {
    const std::size_t end = body.find("\n\n", at) + 2;
    reads.push_back(std::string_view(body).substr(at, end - at));
    at = end;
  }
  ASSERT_EQ(reads.size(), static_cast<std::size_t>(kEvents + 1));
  SseParser p;
  std::size_t bytes_seen = 0;
  auto on_event = [&](const SseEvent& e) {
    bytes_seen += e.data.size();
    return true;
  };
  // Warm: the stream's longest event (the last token's) sizes the parser's buffers.
  ASSERT_TRUE(p.FeedEach(reads[reads.size() - 2], on_event));
  g_allocations = 0;
  g_counting = true;
  bool ok = true;
  for (const std::string_view read : reads) {
    ok = p.FeedEach(read, on_event) && ok;
  }
  g_counting = false;
  EXPECT_TRUE(ok);
  EXPECT_EQ(g_allocations, 0) << "over " << reads.size() << " events";
  EXPECT_GT(bytes_seen, static_cast<std::size_t>(kEvents) * 100);
  // The check can fail: the vector form copies each event out, and allocates for it.
  std::vector<SseEvent> out;
  out.reserve(8);
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 4; ++i) {
    p.Feed(reads[16 + static_cast<std::size_t>(i)], out);
  }
  g_counting = false;
  EXPECT_GE(g_allocations, 4);
}

}  // namespace
}  // namespace sb::client
