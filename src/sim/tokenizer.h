// The simulator's tokenizer: simple, documented and exact, so tests and users can predict
// every count.
//   - A token is a maximal run of ASCII letters/digits [A-Za-z0-9], or one other non-whitespace
//     character (a UTF-8 code point; an invalid byte counts as one). ASCII whitespace separates
//     tokens and is never a token. "Hello, world!" -> [Hello] [,] [world] [!] = 4 tokens.
//   - prompt_tokens of a chat = sum over messages of (tokens of its text parts + 4) + 2; each
//     image/video/audio part counts kMediaPartTokens (64). Text parts are tokenized separately.
//   - Token ids are stable: a 30-bit hash of the token text (>= kFirstTextId), so equal text
//     gives equal ids across runs. The chat template uses ids below kFirstTextId.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sb::sim {

inline constexpr int kMessageOverheadTokens = 4;  // per message (template markers, role)
inline constexpr int kChatOverheadTokens = 2;     // per chat (BOS, assistant header)
inline constexpr int kMediaPartTokens = 64;       // per image/video/audio part

// Ids the chat template uses (see ChatTemplateIds in tokenizer.cpp and docs/simulator.md).
inline constexpr std::int64_t kBosId = 1;
inline constexpr std::int64_t kMessageStartId = 2;
inline constexpr std::int64_t kMessageSepId = 3;
inline constexpr std::int64_t kMessageEndId = 4;
inline constexpr std::int64_t kAssistantId = 5;
inline constexpr std::int64_t kImageId = 10;
inline constexpr std::int64_t kVideoId = 11;
inline constexpr std::int64_t kAudioId = 12;
inline constexpr std::int64_t kRoleSystemId = 20;
inline constexpr std::int64_t kRoleUserId = 21;
inline constexpr std::int64_t kRoleAssistantId = 22;
inline constexpr std::int64_t kRoleToolId = 23;
inline constexpr std::int64_t kRoleOtherId = 24;
inline constexpr std::int64_t kFirstTextId = 1000;

// Number of tokens in text. `chars_per_token` > 0 cuts each word into pieces of at most that
// many characters, as a small vocabulary does (SimOptions::chars_per_token); 0: a word is a token.
int CountTokens(std::string_view text, int chars_per_token = 0);

// The tokens of text, as views into it.
std::vector<std::string_view> SplitTokens(std::string_view text, int chars_per_token = 0);

// text cut into one piece per token, each with the whitespace before it (trailing whitespace
// joins the last piece), so the pieces concatenate to text exactly. Scripted answers stream
// one piece per token.
std::vector<std::string> AnswerPieces(std::string_view text);

// The id of one token's text: kFirstTextId + a 30-bit FNV-1a hash, so ids are >= kFirstTextId.
std::int64_t TokenId(std::string_view token);

// FNV-1a 64 over bytes; `seed` chains several calls.
std::uint64_t Fnv1a64(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ULL);

}  // namespace sb::sim
