// Prompt text of a known length and block structure for replayed traces (docs/workloads.md).
// Text is plain English words separated by single spaces: on the simulator's tokenizer every
// word is exactly one token, on a BPE tokenizer usually one (perf fits the length to the
// server's own tokenizer where it has one). A Mooncake trace's hash_ids number the prompt's
// blocks of `block_tokens` tokens: the words of block k depend only on hash_ids[k] and the
// position in the block, so two requests that share leading hash ids share exactly those
// leading blocks of identical text. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace sb::workload {

// Where the message text sits in the server's token sequence: `lead` template tokens before it
// (the simulator: BOS, message start, role, separator = 4), `overhead` template tokens in all
// (the simulator: 6).
struct PromptShape {
  int lead = 0;
  int overhead = 0;
};

// One word (no spaces) of a fixed list of 128 common English words, chosen by `key`.
std::string_view Word(std::uint64_t key);

// The message text of a prompt whose whole token sequence (template included) is input_tokens
// long: the sequence's block k (positions [k B, (k+1) B)) holds, in its text positions, words of
// hash_ids[k]; positions past the hash ids get words unique to `unique_seed`. The text has
// input_tokens - overhead words (at least 1).
std::string BlockPromptText(std::span<const std::int64_t> hash_ids, int input_tokens,
                            int block_tokens, PromptShape shape, std::uint64_t unique_seed);

}  // namespace sb::workload
