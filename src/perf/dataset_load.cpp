// The dataset side of the load profiles (dataset_load.h): reading the file before the run, and
// one request per dataset entry (prompt, messages or images; output length from the entry, the
// ShareGPT reply, or --output-tokens).
#include "perf/dataset_load.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perf/profiles.h"

namespace sb::perf {

using nlohmann::json;

Result<void> PrepareDataset(DatasetOptions& o) {
  auto usage = [](const std::string& text) { return Error{ErrorCode::kUsage, text}; };
  std::optional<workload::DatasetFormat> format;
  if (!o.format.empty()) {
    format = workload::ParseDatasetFormat(o.format);
    if (!format) {
      return usage("--dataset-format must be sharegpt or jsonl, got '" + o.format + "'");
    }
  }
  if (o.order != "file" && o.order != "shuffle") {
    return usage("--dataset-order must be file or shuffle, got '" + o.order + "'");
  }
  if (o.max_requests < 0) {
    return usage(fmt::format("--max-requests must be >= 0, got {}", o.max_requests));
  }
  auto d = workload::ReadDataset(o.path, format, o.skip_bad);
  if (!d) {
    return d.error();
  }
  o.loaded = std::make_shared<const workload::Dataset>(std::move(d).value());
  return {};
}

std::vector<client::ChatMessage> ChatMessagesFromJson(const std::string& text) {
  std::vector<client::ChatMessage> out;
  const json j = json::parse(text, nullptr, false);
  if (!j.is_array()) {
    return out;
  }
  for (const json& m : j) {
    client::ChatMessage msg;
    msg.role = m.is_object() ? m.value("role", "user") : "user";
    if (m.is_object() && m.contains("content")) {
      if (m["content"].is_string()) {
        msg.content = m["content"].get<std::string>();
      } else {
        msg.content_json = m["content"].dump();
      }
    }
    out.push_back(std::move(msg));
  }
  return out;
}

void Session::StartDataset(const ProfileOptions& options) {
  dataset_next_ = 0;
  if (!options.dataset.loaded || !dataset_order_.empty()) {
    return;
  }
  const DatasetOptions& o = options.dataset;
  dataset_order_ =
      workload::DatasetOrder(o.loaded->entries.size(), o.order == "shuffle", options.rate.seed,
                             static_cast<std::size_t>(std::max(0, o.max_requests)));
}

int Session::ReplyTokens(const std::string& reply) {
  // The reply's length by the server's own tokenizer (less its chat template), else estimated.
  if (!reply_base_) {
    const auto one = CountPromptTokens("x");
    reply_base_ = one ? *one - 1 : -1;
  }
  if (*reply_base_ >= 0) {
    if (const auto n = CountPromptTokens(reply)) {
      return std::max(1, *n - *reply_base_);
    }
  }
  ++dataset_estimated_;
  const auto words = std::count(reply.begin(), reply.end(), ' ') + 1;
  return std::max(1, static_cast<int>(std::lround(static_cast<double>(words) * 1.3)));
}

client::ChatParams Session::DatasetParams(const ProfileOptions& options, int max_tokens) {
  const workload::Dataset& d = *options.dataset.loaded;
  const std::size_t pick = dataset_next_ % dataset_order_.size();
  if (dataset_next_ > 0 && pick == 0) {
    ++dataset_wraps_;
  }
  ++dataset_next_;
  ++dataset_sent_;
  const workload::DatasetEntry& e = d.entries[dataset_order_[pick]];
  const std::int64_t context = target_.max_model_len;
  if (options.output_lengths) {
    if (!output_sampler_) {
      const int cap = context > 0 ? static_cast<int>(std::min<std::int64_t>(context / 2, 1 << 30))
                                  : std::numeric_limits<int>::max();
      output_sampler_ = std::make_unique<workload::LengthSampler>(*options.output_lengths,
                                                                  options.rate.seed + 1, cap);
    }
    max_tokens = output_sampler_->Next();
  } else if (e.output_tokens > 0) {
    max_tokens = e.output_tokens;
  } else if (!e.reply.empty()) {
    max_tokens = ReplyTokens(e.reply);
  }
  if (context > 0) {
    max_tokens = static_cast<int>(std::clamp<std::int64_t>(max_tokens, 1, context / 2));
  }
  client::ChatParams p = Params(options, e.prompt, max_tokens, true);
  if (!e.messages_json.empty()) {
    // The nonce (unless --allow-cache) leads the first message whose content is text.
    const std::string nonce = p.messages[0].content;
    p.messages = ChatMessagesFromJson(e.messages_json);
    for (auto& m : p.messages) {
      if (m.content_json.empty()) {
        m.content = nonce + m.content;
        break;
      }
    }
  } else if (!e.image_urls.empty()) {
    json parts = json::array({{{"type", "text"}, {"text", p.messages[0].content}}});
    for (const std::string& url : e.image_urls) {
      parts.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
    }
    p.messages[0].content_json = parts.dump();
  }
  return p;
}

json Session::DatasetJson(const ProfileOptions& options) const {
  const workload::Dataset& d = *options.dataset.loaded;
  return {{"file", options.dataset.path},
          {"format", std::string(workload::DatasetFormatName(d.format))},
          {"order", options.dataset.order},
          {"entries", d.entries.size()},
          {"used_entries", dataset_order_.size()},
          {"max_requests", options.dataset.max_requests},
          {"requests", dataset_sent_},
          {"wrapped", dataset_wraps_},
          {"skipped_bad_lines", d.skipped_bad},
          {"skipped_without_reply", d.skipped_no_reply},
          {"output_tokens_estimated", dataset_estimated_}};
}

}  // namespace sb::perf
