// The target of a run: a server given by --endpoint, or the built-in simulator started
// in-process; its client's options and time limits (docs/bounds.md). Thread safety: used from
// the run's thread; a Target's client is thread-safe as client::Client is.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "client/server_info.h"
#include "core/result.h"
#include "sim/sim_server.h"

namespace sb::run {

// --endpoint, --model, the API key and the time limits.
struct TargetOptions {
  std::string endpoint;
  std::string model;
  std::string api_key_env;
  std::string api_key_file;
  // Time limits (docs/bounds.md). Defaults end a dead server in tens of seconds.
  double connect_timeout_s = 10;
  double first_byte_timeout_s = 60;
  double idle_timeout_s = 30;
  double request_timeout_s = 0;  // whole request; 0 = none (the other limits still hold)
  // Retries of 429/503 and of connections refused or reset before the first byte (--retries).
  int retries = 0;
  std::string ca_cert;    // --ca-cert: trust this CA instead of the system's
  bool insecure = false;  // --insecure: no TLS certificate check
  int io_threads = 0;     // perf --io-threads: the client's I/O threads per batch, 0 = automatic
  // --http-transport: "auto", "native" or "curl" (client::ClientOptions::transport).
  std::string http_transport = "auto";
};

// `seconds` rounded to whole milliseconds.
std::chrono::milliseconds Millis(double seconds);

// The client's options for the server root or API base `endpoint`.
client::ClientOptions MakeClientOptions(const TargetOptions& o, const std::string& endpoint,
                                        const std::string& api_key);

// The longest time limit a flag may give (about 11.6 days): far beyond any run, and far below
// the clock's range (nanoseconds in 64 bits).
inline constexpr double kMaxLimitS = 1e6;

// A limit must be a finite number of seconds above 0 (or exactly 0 where `zero_means_none`) and
// at most kMaxLimitS: 0, negative or NaN silently turning a limit off is how a run hangs. kUsage
// error naming `flag` and the value otherwise.
Result<void> CheckSeconds(const char* flag, double v, bool zero_means_none);

// The four limits of `o`, each named by its flag; kUsage error for the first bad one.
Result<void> CheckTimeouts(const TargetOptions& o);

// An opened target: its client, what it is and the model measured.
struct Target {
  std::unique_ptr<sim::SimServer> sim;  // set when the built-in simulator is the target
  std::unique_ptr<client::Client> client;
  client::ServerInfo info;
  std::string endpoint;  // as shown to the user (".../v1")
  std::string model;
};

// The API key: the --api-key-file's contents (one trailing line break and surrounding spaces
// removed), else the --api-key-env variable (an error when it is not set), else
// $OPENAI_API_KEY, else "" (no key). A key holding a control character (CR, LF, NUL, DEL, ...:
// it would forge HTTP headers) is a kSetup error naming its source, never the key.
Result<std::string> ResolveApiKey(const TargetOptions& o);

// The contents of the secret file `path` (`flag` names it in errors): kSetup error when it is
// over 64 KiB ("is it a secret file?"), unreadable, or a pipe that delivers nothing for 30 s.
Result<std::string> ReadSecretFile(const std::string& flag, const std::string& path);

// Settings of the simulator that `run` and `perf` start when no --endpoint is given: a fast,
// plausible server, so the whole product can be shown on a machine without a model.
sim::SimOptions EmbeddedSimOptions();

// Connects to o.endpoint, or starts `embedded` (the simulator to start when no --endpoint is
// given; `what` says what it plays) and says so on stdout; registers the API key and the URL's
// credentials as secrets, detects the server and chooses the model.
Result<Target> OpenTarget(const TargetOptions& o, const sim::SimOptions& embedded,
                          const std::string& what);

// The results.json "target" object.
nlohmann::json TargetJson(const Target& t);

}  // namespace sb::run
