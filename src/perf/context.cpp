// The context-scaling profile (--profile context): a question with a known answer buried in
// filler text, at prompt sizes exact to the server's own tokenizer.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perf/metrics.h"
#include "perf/profiles.h"

namespace sb::perf {

using nlohmann::json;

namespace {

// A /tokenize request's own limit (--request-timeout-s and the client's first-byte and idle
// limits hold too).
constexpr std::chrono::milliseconds kTokenizeLimit{30'000};

// How prompt sizes are counted, best first.
enum class CountMode {
  kChatTokenize,      // POST /tokenize {model, messages}: vLLM, the simulator (template included)
  kTemplateTokenize,  // POST /apply-template, then /tokenize of its prompt: llama.cpp, exact
  kContentTokenize,   // POST /tokenize {content}: older llama.cpp (+ the template, measured)
  kUsage,             // no tokenizer endpoint: calibrated from usage.prompt_tokens of probes
};

const char* CountModeName(CountMode m) {
  switch (m) {
    case CountMode::kChatTokenize:
      return "tokenize";
    case CountMode::kTemplateTokenize:
      return "apply-template+tokenize";
    case CountMode::kContentTokenize:
      return "tokenize+template";
    case CountMode::kUsage:
      return "usage-calibrated";
  }
  return "?";
}

// POST `body` to `path`; the answer's JSON object, or nullopt on any failure.
std::optional<json> PostForObject(client::Client& c, const std::string& path, const json& body,
                                  std::chrono::milliseconds limit) {
  auto r = c.Post(path, body.dump(), limit);
  if (!r || r->status != 200) {
    return std::nullopt;
  }
  json j = json::parse(r->body, nullptr, false);
  if (!j.is_object()) {
    return std::nullopt;
  }
  return j;
}

// The length of a llama.cpp /tokenize answer's "tokens" list.
std::optional<int> TokensCount(const std::optional<json>& j) {
  if (!j || !j->contains("tokens") || !(*j)["tokens"].is_array()) {
    return std::nullopt;
  }
  return static_cast<int>((*j)["tokens"].size());
}

std::optional<int> ChatTokenize(client::Client& c, const std::string& model,
                                const std::string& content, std::chrono::milliseconds limit) {
  const json body = {{"model", model}, {"messages", {{{"role", "user"}, {"content", content}}}}};
  const auto j = PostForObject(c, "/tokenize", body, limit);
  if (!j || !j->contains("count") || !(*j)["count"].is_number_integer()) {
    return std::nullopt;
  }
  return (*j)["count"].get<int>();
}

std::optional<int> ContentTokenize(client::Client& c, const std::string& content,
                                   std::chrono::milliseconds limit) {
  return TokensCount(
      PostForObject(c, "/tokenize", {{"content", content}, {"add_special", false}}, limit));
}

// llama.cpp: the chat template applied by the server (/apply-template), then that prompt's
// tokens with its special tokens parsed and added, as the server counts a chat's prompt. A
// plain /tokenize of the message alone misses by a token or two where the tokenizer treats the
// start of a text differently from the same words after the template's header.
std::optional<int> TemplateTokenize(client::Client& c, const std::string& content,
                                    std::chrono::milliseconds limit) {
  const json body = {{"messages", {{{"role", "user"}, {"content", content}}}}};
  const auto j = PostForObject(c, "/apply-template", body, limit);
  if (!j || !j->contains("prompt") || !(*j)["prompt"].is_string()) {
    return std::nullopt;
  }
  return TokensCount(PostForObject(
      c, "/tokenize", {{"content", (*j)["prompt"]}, {"add_special", true}, {"parse_special", true}},
      limit));
}

// The filler with the question inserted after `depth` of its words.
std::string BuildBody(int words, double depth, const std::string& question, std::uint64_t seed) {
  std::string filler = FillerText(words, seed);
  // Insert at a sentence boundary at or after the depth point.
  std::size_t target =
      static_cast<std::size_t>(std::clamp(depth, 0.0, 1.0) * static_cast<double>(filler.size()));
  std::size_t at = target == 0 ? 0 : filler.find(". ", target);
  at = at == std::string::npos ? filler.size() : (target == 0 ? 0 : at + 2);
  std::string body = filler.substr(0, at) + question + " " + filler.substr(at);
  body += "\n\nAnswer the question that appears in the text above. Reply with just the number.";
  return body;
}

bool ContainsNumber(const std::string& text, const std::string& number) {
  for (std::size_t pos = text.find(number); pos != std::string::npos;
       pos = text.find(number, pos + 1)) {
    bool left = pos == 0 || !std::isdigit(static_cast<unsigned char>(text[pos - 1]));
    std::size_t end = pos + number.size();
    bool right = end >= text.size() || !std::isdigit(static_cast<unsigned char>(text[end]));
    if (left && right) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::chrono::milliseconds ScaledFirstByteTimeout(std::chrono::milliseconds base,
                                                 int prompt_tokens) {
  if (base.count() <= 0 || prompt_tokens <= 8000) {
    return base;
  }
  return std::chrono::milliseconds(
      static_cast<long long>(static_cast<double>(base.count()) * prompt_tokens / 8000.0));
}

int CachedPromptTokens(const client::ChatResponse& r) {
  if (r.usage.cached_tokens >= 0) {
    return r.usage.cached_tokens;
  }
  if (!r.timings_json.empty()) {
    json t = json::parse(r.timings_json, nullptr, /*allow_exceptions=*/false);
    if (t.is_object() && t.contains("cache_n") && t["cache_n"].is_number_integer()) {
      return t["cache_n"].get<int>();
    }
  }
  return -1;
}

void Session::ChooseCounter() {
  if (count_mode_ >= 0) {
    return;
  }
  // How to count: the server's chat tokenizer, its template and plain tokenizer, its plain
  // tokenizer plus the template's overhead measured once, or the usage of probe requests.
  CountMode mode = CountMode::kUsage;
  const std::string probe_text = "Calibration probe: " + FillerText(40, 3);
  if (ChatTokenize(client_, target_.model, probe_text, AuxLimit(kTokenizeLimit))) {
    mode = CountMode::kChatTokenize;
  } else if (TemplateTokenize(client_, probe_text, AuxLimit(kTokenizeLimit))) {
    mode = CountMode::kTemplateTokenize;
  } else if (auto plain = ContentTokenize(client_, probe_text, AuxLimit(kTokenizeLimit))) {
    mode = CountMode::kContentTokenize;
    client::ChatParams p;
    p.model = target_.model;
    p.messages.push_back({"user", probe_text, ""});
    p.max_tokens = 1;
    auto rs = Execute({p}, "warmup", {"tokenizer calibration"});
    if (rs.front().usage.prompt_tokens > 0) {
      template_overhead_ = rs.front().usage.prompt_tokens - *plain;
    }
  } else {
    Warn(
        "The server has no /tokenize endpoint: prompt sizes (context profile, --input-tokens) "
        "are estimated and may miss the requested size by a few tokens.");
  }
  count_mode_ = static_cast<int>(mode);
}

std::optional<int> Session::CountPromptTokens(const std::string& content) {
  ChooseCounter();
  const auto mode = static_cast<CountMode>(count_mode_);
  if (mode == CountMode::kChatTokenize) {
    return ChatTokenize(client_, target_.model, content, AuxLimit(kTokenizeLimit));
  }
  if (mode == CountMode::kTemplateTokenize) {
    return TemplateTokenize(client_, content, AuxLimit(kTokenizeLimit));
  }
  if (mode == CountMode::kContentTokenize) {
    auto n = ContentTokenize(client_, content, AuxLimit(kTokenizeLimit));
    return n ? std::optional<int>(*n + template_overhead_) : std::nullopt;
  }
  return std::nullopt;
}

std::string Session::CounterName() const {
  return count_mode_ < 0 ? "" : CountModeName(static_cast<CountMode>(count_mode_));
}

std::pair<int, std::optional<int>> Session::FitWords(
    int size, int words, const std::function<std::string(int)>& content_for) {
  if (words < 0) {
    words = std::max(0, static_cast<int>(size / tokens_per_word_) - 40);
  }
  std::optional<int> tokens = CountPromptTokens(content_for(words));
  for (int step = 0; step < 12 && tokens && *tokens != size; ++step) {
    if (words > 20) {
      tokens_per_word_ = std::max(0.2, static_cast<double>(*tokens - 30) / words);
    }
    int delta = static_cast<int>(std::lround((size - *tokens) / tokens_per_word_));
    if (delta == 0) {
      delta = size > *tokens ? 1 : -1;
    }
    if (words + delta < 0) {
      break;  // the fixed text alone is longer than `size`
    }
    int next_words = words + delta;
    auto next = CountPromptTokens(content_for(next_words));
    if (!next) {
      break;
    }
    // Stop when a single word overshoots: keep the closer of the two.
    if (std::abs(delta) == 1 && ((*tokens < size) != (*next < size)) && *next != size) {
      if (std::abs(*next - size) < std::abs(*tokens - size)) {
        words = next_words;
        tokens = next;
      }
      break;
    }
    words = next_words;
    tokens = next;
  }
  return {words, tokens};
}

client::ChatParams Session::LoadParams(const ProfileOptions& options, const std::string& task,
                                       int max_tokens) {
  if (dataset_active_) {
    client::ChatParams p = DatasetParams(options, max_tokens);
    ApplySharedPrefix(options, p.messages.front().content);
    return p;
  }
  const int context = target_.max_model_len > 0
                          ? static_cast<int>(std::min<std::int64_t>(target_.max_model_len, 1 << 30))
                          : std::numeric_limits<int>::max();
  if (options.output_lengths) {
    if (!output_sampler_) {
      output_sampler_ = std::make_unique<workload::LengthSampler>(
          *options.output_lengths, options.rate.seed + 1, std::max(1, context / 2));
    }
    max_tokens = output_sampler_->Next();
  }
  int size = options.input_tokens;
  if (options.input_lengths) {
    if (!input_sampler_) {
      input_sampler_ =
          std::make_unique<workload::LengthSampler>(*options.input_lengths, options.rate.seed);
    }
    size = input_sampler_->Next();
    if (context != std::numeric_limits<int>::max()) {
      size = std::max(1, std::min(size, context - max_tokens));
    }
  }
  client::ChatParams params = Params(options, "", max_tokens, true);
  ApplySharedPrefix(options, params.messages[0].content);  // inside --input-tokens' count
  if (size <= 0) {
    params.messages[0].content += task;
    return WithImages(std::move(params));
  }
  const std::string prefix = params.messages[0].content;  // "[request N] "
  const std::uint64_t seed = 2000 + static_cast<std::uint64_t>(size);
  std::string pad;  // single-token words that close the last gap (to the token)
  auto content_for = [&](int words) {
    return prefix + (words > 0 ? FillerText(words, seed) + pad + "\n\n" : std::string()) + task;
  };
  // The words that fitted the previous request are the first guess: most requests then cost
  // one count.
  auto hint = fit_words_.find(size);
  auto [words, tokens] = FitWords(size, hint == fit_words_.end() ? -1 : hint->second, content_for);
  fit_words_[size] = words;
  // A filler word can be two tokens (a word and its full stop): when no word count hits the size
  // exactly, step back below it and pad with one-token words, counted. " and" is one token on
  // common tokenizers; on a small vocabulary it is more, and " a" is tried next.
  if (tokens && *tokens != size && words > 1) {
    const int w = *tokens > size ? words - 1 : words;
    const std::optional<int> base = w == words ? tokens : CountPromptTokens(content_for(w));
    std::string best_pad;
    for (const char* unit : {" and", " a"}) {
      if (!base || *base >= size || *tokens == size) {
        break;
      }
      pad.clear();
      std::optional<int> t = base;
      for (int attempt = 0; attempt < 3 && t && *t < size; ++attempt) {
        for (int k = *t; k < size; ++k) {
          pad += unit;
        }
        t = CountPromptTokens(content_for(w));
      }
      if (t && std::abs(*t - size) < std::abs(*tokens - size)) {
        words = w;
        tokens = t;
        best_pad = pad;
      }
    }
    pad = best_pad;
  }
  params.messages[0].content = content_for(words);
  if (tokens && *tokens != size) {
    Warn(fmt::format(
        "--input-tokens {}: the closest prompt the server's tokenizer allows is {} tokens{}.", size,
        *tokens,
        *tokens > size && words == 0 ? " (the fixed part of the prompt alone is longer)" : ""));
  }
  return WithImages(std::move(params));
}

client::ChatParams Session::WithImages(client::ChatParams params) const {
  if (images_.per_request > 0 && !params.messages.empty()) {
    params.messages.back().content_json =
        ImageContentJson(images_.data_uris, params.messages.back().content);
  }
  return params;
}

json Session::Context(const ProfileOptions& options) {
  WarmUp(options);
  json rows = json::array();
  if (Halted()) {
    return json{{"rows", rows}};
  }
  ChooseCounter();
  const std::int64_t limit = target_.max_model_len;
  int index = 0;
  const double depth = options.args.Number("--depth");
  for (int size : options.args.Ints("--sizes")) {
    ++index;
    if (Halted()) {
      break;
    }
    if (limit > 0 && size + options.context_max_tokens > limit) {
      rows.push_back(json{{"size", size},
                          {"skipped", fmt::format("over the server's max model length ({} "
                                                  "tokens incl. {} for the answer)",
                                                  limit, options.context_max_tokens)}});
      if (on_progress_) {
        on_progress_(fmt::format("context {}: skipped (max model length {})", size, limit));
      }
      continue;
    }
    long long a = 3 + (index * 7) % 9, b = 4 + (index * 5) % 8;
    std::string expected = std::to_string(a * b);
    std::string question = fmt::format("What is {} \u00d7 {}?", a, b);
    std::uint64_t seed = 1000 + static_cast<std::uint64_t>(size);
    client::ChatParams params = Params(options, "", options.context_max_tokens, false);
    const std::string prefix = params.messages[0].content;  // "[request N] "
    auto content_for = [&](int words) { return prefix + BuildBody(words, depth, question, seed); };
    // Search the filler length whose prompt is `size` tokens.
    auto [words, tokens] = FitWords(size, -1, content_for);
    params.messages[0].content = content_for(words);
    std::string label = fmt::format("{} tokens", size);
    first_byte_override_ = ScaledFirstByteTimeout(options.first_byte_timeout, size);
    auto rs = Execute({params}, "context", {label});
    first_byte_override_ = std::chrono::milliseconds(0);
    const auto& r = rs.front();
    RequestMetrics m = ComputeMetrics(r);
    if (r.outcome != client::Outcome::kOk) {
      m = RequestMetrics{};  // a failed request has no figures (its partial stream would make up
                             // some)
    }
    const int cached = CachedPromptTokens(r);
    json row = {
        {"size", size},
        {"prompt_tokens_requested", size},
        {"prompt_tokens", r.usage.prompt_tokens >= 0 ? json(r.usage.prompt_tokens)
                                                     : (tokens ? json(*tokens) : json())},
        {"counted_by", CounterName()},
        {"depth", depth},
        {"expected", expected},
        {"answer", r.answer.substr(0, 200)},
        {"correct", r.outcome == client::Outcome::kOk && ContainsNumber(r.answer, expected)},
        {"ttft_ms", m.ttft_ms ? json(*m.ttft_ms) : json()},
        {"cached_prompt_tokens", cached >= 0 ? json(cached) : json()},
        // Only the tokens the server actually prefilled: a prefix it served from its cache
        // (llama.cpp's chat template, timings.cache_n) took no prefill time.
        {"prefill_tok_s",
         m.ttft_ms && r.usage.prompt_tokens > std::max(cached, 0)
             ? json((r.usage.prompt_tokens - std::max(cached, 0)) / (*m.ttft_ms / 1e3))
             : json()},
        {"decode_tok_s", m.decode_tok_s ? json(*m.decode_tok_s) : json()},
        {"status", std::string(client::OutcomeName(r.outcome))},
        {"request", Record(r, "context", label, false).ToJson()}};
    AttachResources(row);
    if (r.usage.prompt_tokens > 0 && tokens && *tokens != r.usage.prompt_tokens) {
      Warn(
          fmt::format("context {}: the tokenizer counted {} prompt tokens but the server billed "
                      "{}.",
                      size, *tokens, r.usage.prompt_tokens));
    }
    if (options.context_cached && r.outcome == client::Outcome::kOk) {
      // The same prompt again: what a warm prefix cache makes of it.
      first_byte_override_ = ScaledFirstByteTimeout(options.first_byte_timeout, size);
      auto again = Execute({params}, "context", {label + " (cached)"});
      first_byte_override_ = std::chrono::milliseconds(0);
      RequestMetrics mc = ComputeMetrics(again.front());
      row["cached"] = {{"ttft_ms", mc.ttft_ms ? json(*mc.ttft_ms) : json()},
                       {"cached_tokens", again.front().usage.cached_tokens >= 0
                                             ? json(again.front().usage.cached_tokens)
                                             : json()},
                       {"status", std::string(client::OutcomeName(again.front().outcome))}};
    }
    if (on_progress_) {
      const std::string counted =
          row["prompt_tokens"].is_null() ? std::string("?") : row["prompt_tokens"].dump();
      // A failed request has no answer to judge and no TTFT: say how it failed.
      on_progress_(
          r.outcome == client::Outcome::kOk
              ? fmt::format("context {}: {} prompt tokens, {}, TTFT {}", size, counted,
                            row["correct"].get<bool>() ? "correct" : "wrong",
                            m.ttft_ms ? fmt::format("{:.0f} ms", *m.ttft_ms) : "n/a")
              : fmt::format("context {}: {} prompt tokens, {}", size, counted, FailureNote(r)));
    }
    rows.push_back(std::move(row));
  }
  return json{
      {"max_tokens", options.context_max_tokens}, {"counted_by", CounterName()}, {"rows", rows}};
}

}  // namespace sb::perf
