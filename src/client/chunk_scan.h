// Fast path for the hot SSE payload: one chat.completion.chunk carrying a delta. A single pass
// over the JSON text, no allocation, that validates the whole document and picks out the few
// fields ApplyStreamEvent uses (model, choices[0].delta.content / reasoning_content /
// reasoning, choices[0].finish_reason, usage). Anything it does not fully understand -- an
// error object, tool calls, llama.cpp timings, the simulator's "sim" object, completions
// "text", a repeated field, a key written with escapes, a number that is not a plain integer
// where we read one, an exponent anywhere, nesting over 32 levels, or JSON that may be
// invalid -- makes it decline, and the caller uses the full parser (nlohmann::json). When it
// accepts, the result is the one the full parser gives: tests/client/chunk_scan_test.cpp and
// the chunk fuzz target (fuzz/chunk_fuzz.cpp) compare the two on every input.
// Internal to src/client; REQUIRES: the text is valid UTF-8 (chat.cpp repairs it first).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "client/chat.h"

namespace sb::client::detail {

// A JSON string as it appears between its quotes; escaped: it holds at least one backslash.
struct JsonText {
  std::string_view raw;
  bool present = false;  // the field was there and was a string
  bool escaped = false;
};

// An integer field (usage counts): present when the value was a JSON integer.
struct JsonInt {
  int value = 0;  // clamped to int's range, as the full parser's IntField does
  bool present = false;
};

struct ChunkFields {
  JsonText model;
  bool has_choice = false;  // choices[0] exists (an object with index 0 or none)
  JsonText content;
  JsonText reasoning_content;
  JsonText reasoning;
  JsonText finish_reason;
  bool has_usage = false;  // "usage" was an object
  JsonInt prompt_tokens;
  JsonInt completion_tokens;
  JsonInt reasoning_tokens;          // usage.reasoning_tokens (SGLang)
  bool completion_details = false;   // usage.completion_tokens_details was an object
  JsonInt details_reasoning_tokens;  // usage.completion_tokens_details.reasoning_tokens
  bool prompt_details = false;       // usage.prompt_tokens_details was an object
  JsonInt cached_tokens;             // usage.prompt_tokens_details.cached_tokens
};

// True when json (a trimmed SSE data payload) is a chunk the fast path handles; fields then
// describe it. False: use the full parser (fields are then unspecified).
bool ScanChunk(std::string_view json, ChunkFields& fields);

// Appends the decoded value of a string ScanChunk accepted (escapes resolved, \uXXXX and
// surrogate pairs as UTF-8).
void AppendJsonText(const JsonText& text, std::string& out);

// ApplyStreamEvent with the fast path allowed or not (allow_fast = false: the full parser
// only, what the tests compare against). ApplyStreamEvent(d, t, r) == ...(d, t, r, true).
bool ApplyStreamEventImpl(std::string_view data, std::int64_t t_ns, ChatResponse& r,
                          bool allow_fast);

}  // namespace sb::client::detail
