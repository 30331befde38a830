#include "workload/prompt.h"

#include <algorithm>
#include <array>

#include "workload/length.h"

namespace sb::workload {
namespace {

constexpr std::array<std::string_view, 128> kWords = {
    "time",     "year",    "people",   "way",    "day",    "man",     "thing",   "woman",
    "life",     "child",   "world",    "school", "state",  "family",  "student", "group",
    "country",  "problem", "hand",     "part",   "place",  "case",    "week",    "company",
    "system",   "program", "question", "work",   "number", "night",   "point",   "home",
    "water",    "room",    "mother",   "area",   "money",  "story",   "fact",    "month",
    "lot",      "right",   "study",    "book",   "eye",    "job",     "word",    "business",
    "issue",    "side",    "kind",     "head",   "house",  "service", "friend",  "father",
    "power",    "hour",    "game",     "line",   "end",    "member",  "law",     "car",
    "city",     "name",    "team",     "minute", "idea",   "kid",     "body",    "back",
    "parent",   "face",    "others",   "level",  "office", "door",    "health",  "person",
    "art",      "war",     "history",  "party",  "result", "change",  "morning", "reason",
    "research", "girl",    "guy",      "moment", "air",    "teacher", "force",   "order",
    "river",    "garden",  "window",   "table",  "music",  "paper",   "market",  "light",
    "voice",    "road",    "field",    "model",  "plan",   "stone",   "green",   "small",
    "large",    "early",   "young",    "clear",  "simple", "open",    "short",   "long",
    "north",    "south",   "east",     "west",   "blue",   "warm",    "quiet",   "bright"};

}  // namespace

std::string_view Word(std::uint64_t key) {
  return kWords[Mix64(key) % kWords.size()];
}

std::string BlockPromptText(std::span<const std::int64_t> hash_ids, int input_tokens,
                            int block_tokens, PromptShape shape, std::uint64_t unique_seed) {
  const int block = std::max(1, block_tokens);
  const int text_begin = shape.lead;
  const int text_end = std::max(text_begin + 1, input_tokens - (shape.overhead - shape.lead));
  std::string text;
  text.reserve(static_cast<std::size_t>(text_end - text_begin) * 7);
  for (int p = text_begin; p < text_end; ++p) {
    const auto k = static_cast<std::size_t>(p / block);
    const std::uint64_t key =
        k < hash_ids.size()
            ? Mix64(static_cast<std::uint64_t>(hash_ids[k]) * 0x9e3779b97f4a7c15ULL + 0x5bd1e995) ^
                  static_cast<std::uint64_t>(p % block)
            : Mix64(unique_seed + 0x632be59bd9b4e019ULL) ^ static_cast<std::uint64_t>(p);
    if (p > text_begin) {
      text += ' ';
    }
    text += Word(key);
  }
  return text;
}

}  // namespace sb::workload
