#include "client/server_info.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "core/printable.h"

namespace sb::client {

namespace {

using json = nlohmann::json;

constexpr std::chrono::milliseconds kModelsTimeout{10'000};
constexpr std::chrono::milliseconds kProbeTimeout{5'000};
constexpr std::string_view kSimMarker = "servebench-sim";

// GET path; the parsed JSON object when the server answered 200 with one.
std::optional<json> GetJsonObject(Client& client, std::string_view path) {
  auto resp = client.Get(path, kProbeTimeout);
  if (!resp || resp->status != 200) {
    return std::nullopt;
  }
  json doc = json::parse(resp->body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return std::nullopt;
  }
  return doc;
}

std::string StringAt(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t PositiveIntAt(const json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) {
    return 0;
  }
  if (it->is_number_float()) {
    const double d = it->get<double>();
    return d >= 1 && d < 9e18 ? static_cast<std::int64_t>(d) : 0;
  }
  if (it->is_number_unsigned()) {
    const std::uint64_t u = it->get<std::uint64_t>();
    return u <= static_cast<std::uint64_t>(INT64_MAX) ? static_cast<std::int64_t>(u) : 0;
  }
  const std::int64_t v = it->get<std::int64_t>();
  return v > 0 ? v : 0;
}

// "servebench-sim/0.1.0" -> "0.1.0".
std::string SimVersion(const std::string& v) {
  const std::size_t at = v.find(kSimMarker);
  if (at == std::string::npos) {
    return v;
  }
  std::string rest = v.substr(at + kSimMarker.size());
  if (!rest.empty() && (rest.front() == '/' || rest.front() == ' ')) {
    rest.erase(0, 1);
  }
  return rest;
}

bool ProbeVllmOrSim(Client& client, bool sim_hint, ServerInfo& info) {
  const auto doc = GetJsonObject(client, "/version");
  if (!doc) {
    return false;
  }
  const std::string version = StringAt(*doc, "version");
  if (version.empty()) {
    return false;
  }
  if (sim_hint || version.find(kSimMarker) != std::string::npos) {
    info.kind = ServerKind::kSim;
    info.version = SimVersion(version);
  } else {
    info.kind = ServerKind::kVllm;
    info.version = version;
  }
  return true;
}

bool ProbeLlamaCpp(Client& client, ServerInfo& info) {
  const auto doc = GetJsonObject(client, "/props");
  if (!doc) {
    return false;
  }
  const auto settings = doc->find("default_generation_settings");
  const bool has_settings = settings != doc->end() && settings->is_object();
  if (!has_settings && !doc->contains("build_info")) {
    return false;
  }
  info.kind = ServerKind::kLlamaCpp;
  info.version = StringAt(*doc, "build_info");
  if (has_settings) {
    if (const std::int64_t n_ctx = PositiveIntAt(*settings, "n_ctx"); n_ctx > 0) {
      info.max_model_len = n_ctx;
    }
  }
  return true;
}

bool ProbeSglang(Client& client, ServerInfo& info) {
  for (const std::string_view path : {"/server_info", "/get_server_info"}) {
    const auto doc = GetJsonObject(client, path);
    if (!doc) {
      continue;
    }
    const std::string version = StringAt(*doc, "version");
    if (version.empty()) {
      continue;
    }
    info.kind = ServerKind::kSglang;
    info.version = version;
    if (info.max_model_len == 0) {
      info.max_model_len = PositiveIntAt(*doc, "context_length");
    }
    return true;
  }
  return false;
}

bool ProbeOllama(Client& client, ServerInfo& info) {
  const auto doc = GetJsonObject(client, "/api/version");
  if (!doc) {
    return false;
  }
  const std::string version = StringAt(*doc, "version");
  if (version.empty()) {
    return false;
  }
  info.kind = ServerKind::kOllama;
  info.version = version;
  return true;
}

}  // namespace

Result<ServerInfo> DetectServer(Client& client) {
  auto models = client.Get("/v1/models", kModelsTimeout);
  if (!models) {
    // Strip the "GET <url>: " prefix: the one line names the endpoint and curl's reason.
    std::string why = models.error().message;
    if (const std::size_t colon = why.find(": "); colon != std::string::npos) {
      why.erase(0, colon + 2);
    }
    return MakeError(ErrorCode::kSetup, "cannot reach " + client.root() + ": " + why);
  }
  const std::string models_url = client.root() + "/v1/models";
  if (models->status != 200) {
    std::string msg =
        "GET " + models_url + " answered " + HttpErrorReason(models->status, models->body);
    if (models->status == 401 || models->status == 403) {
      msg += " (is the API key set?)";
    }
    return MakeError(ErrorCode::kSetup, msg);
  }
  const json doc = json::parse(models->body, nullptr, false);
  const auto data = doc.is_object() ? doc.find("data") : doc.end();
  if (doc.is_discarded() || !doc.is_object() || data == doc.end() || !data->is_array()) {
    return MakeError(ErrorCode::kSetup,
                     "GET " + models_url + " did not return a model list (no \"data\" array)");
  }
  ServerInfo info;
  std::string owned_by;
  std::int64_t meta_n_ctx = 0;
  for (const json& m : *data) {
    if (!m.is_object()) {
      continue;
    }
    const std::string id = StringAt(m, "id");
    if (id.empty()) {
      continue;
    }
    info.models.push_back(id);
    if (owned_by.empty()) {
      owned_by = StringAt(m, "owned_by");
    }
    if (info.max_model_len == 0) {
      info.max_model_len = PositiveIntAt(m, "max_model_len");  // vLLM, SGLang
    }
    if (const auto meta = m.find("meta"); meta_n_ctx == 0 && meta != m.end() && meta->is_object()) {
      meta_n_ctx = PositiveIntAt(*meta, "n_ctx");  // llama.cpp
    }
  }

  const bool sim_hint = models->server_header.find(kSimMarker) != std::string::npos ||
                        models->body.find(kSimMarker) != std::string::npos;
  const bool llama_hint = owned_by == "llamacpp" || models->server_header == "llama.cpp";
  bool found = false;
  // The model list's owner and Server header point at the right probe first; the rest follow
  // in a fixed order, so an unknown proxy in front of a server still gets identified.
  if (owned_by == "sglang") {
    found = ProbeSglang(client, info);
  } else if (llama_hint) {
    found = ProbeLlamaCpp(client, info);
  }
  if (!found) {
    found = ProbeVllmOrSim(client, sim_hint, info);
  }
  if (!found && sim_hint) {
    info.kind = ServerKind::kSim;
    found = true;
  }
  if (!found && !llama_hint) {
    found = ProbeLlamaCpp(client, info);
  }
  if (!found && owned_by != "sglang") {
    found = ProbeSglang(client, info);
  }
  if (!found) {
    found = ProbeOllama(client, info);
  }
  if (info.max_model_len == 0) {
    info.max_model_len = meta_n_ctx;
  }
  // Shown and recorded, never sent back: one printable line, like an error reason.
  info.version = PrintableLine(info.version, 200);
  return info;
}

Result<std::string> ChooseModel(const ServerInfo& info, const std::string& requested) {
  std::string served;
  for (const std::string& m : info.models) {
    served += served.empty() ? "" : ", ";
    served += PrintableLine(m, 200);  // the server's ids, printed: no ESC, CR or LF
  }
  if (requested.empty()) {
    if (info.models.empty()) {
      return MakeError(ErrorCode::kSetup, "the server lists no models; pass --model");
    }
    return info.models.front();
  }
  for (const std::string& m : info.models) {
    if (m == requested) {
      return m;
    }
  }
  return MakeError(ErrorCode::kSetup, "model '" + PrintableLine(requested, 200) +
                                          "' is not served; served: " +
                                          (served.empty() ? std::string("(none)") : served));
}

}  // namespace sb::client
