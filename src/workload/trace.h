// Request traces for `servebench perf --profile replay` (docs/workloads.md), read exactly as
// published:
//   mooncake  JSONL: {"timestamp": ms, "input_length": N, "output_length": N, "hash_ids": [...]}
//             (kvcache-ai/Mooncake, FAST'25 traces); hash_ids number the prompt's blocks
//   burstgpt  CSV: Timestamp (s),Model,Request tokens,Response tokens,Total tokens,Log Type
//             (HPMLL/BurstGPT); failed requests (Response tokens 0) are skipped and counted
//   azure     CSV: TIMESTAMP (2023-11-16 18:15:46.6805900),ContextTokens,GeneratedTokens
//             (Azure/AzurePublicDataset, the 2023 LLM inference traces); rows with 0 generated
//             tokens are skipped and counted
//   jsonl     servebench's plain JSONL: {"timestamp_ms", "input_tokens", "output_tokens",
//             optional "prompt" (a string) or "messages" (a chat array)}
// Times become offsets from the earliest request; requests are kept in time order (stable).
// Every error names FILE:LINE. Nothing is read from the network. Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sb::workload {

enum class TraceFormat { kMooncake, kBurstGpt, kAzure, kJsonl };

// "mooncake", "burstgpt", "azure", "jsonl".
std::string_view TraceFormatName(TraceFormat format);
std::optional<TraceFormat> ParseTraceFormat(std::string_view name);

struct TraceRequest {
  std::int64_t at_us = 0;  // offset from the earliest request in the trace
  int input_tokens = 0;
  int output_tokens = 0;
  std::vector<std::int64_t> hash_ids;  // mooncake: the prompt's block ids, in order
  std::string prompt;                  // jsonl: the prompt text, when given
  std::string messages_json;           // jsonl: the chat array as JSON text, when given
  int line = 0;                        // where it came from (1-based)
};

struct Trace {
  TraceFormat format = TraceFormat::kJsonl;
  std::vector<TraceRequest> requests;
  long long skipped = 0;  // failed requests the trace recorded (burstgpt, azure)
};

// The format told by the first non-empty line, nullopt when it is none of the four.
std::optional<TraceFormat> DetectTraceFormat(std::string_view first_line);

// Parses trace text; `name` is the file name errors start with. max_requests > 0 keeps the
// first that many requests (by time). kUsage error "NAME:LINE: what" for a bad line.
Result<Trace> ParseTrace(std::string_view text, const std::string& name,
                         std::optional<TraceFormat> format, std::size_t max_requests = 0);

// Reads and parses a trace file (kSetup error when it cannot be read).
Result<Trace> ReadTrace(const std::string& path, std::optional<TraceFormat> format,
                        std::size_t max_requests = 0);

}  // namespace sb::workload
