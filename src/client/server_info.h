// Which server is behind an endpoint (kind, version), what it serves (/v1/models), and the
// model's context length when the server tells.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/chat.h"
#include "core/result.h"

namespace sb::client {

class Client;

struct ServerInfo {
  ServerKind kind = ServerKind::kUnknown;
  std::string version;              // "" when unknown
  std::vector<std::string> models;  // ids from /v1/models, in the server's order
  std::int64_t max_model_len = 0;   // 0 when unknown
};

// Probes /v1/models, then /version (vLLM, sim), /props (llama.cpp), /server_info (SGLang),
// /api/version (Ollama). kSetup error (one clear line) when the endpoint is unreachable or
// /v1/models does not answer 200 with a model list.
Result<ServerInfo> DetectServer(Client& client);

// Picks the model: requested if non-empty (kSetup error naming the served ids if it is not
// served), else the only/first served model.
Result<std::string> ChooseModel(const ServerInfo& info, const std::string& requested);

}  // namespace sb::client
