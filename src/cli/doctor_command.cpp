// `servebench doctor` (doctor_command.h).
#include "cli/doctor_command.h"

#include <cstdio>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/redact.h"
#include "media/media.h"
#include "run/exit_codes.h"
#include "run/target.h"

namespace sb::cli {

CLI::App* AddDoctorCommand(CLI::App& app, DoctorCommand& cmd) {
  CLI::App* c = app.add_subcommand(
      "doctor", "Say what will work here (sandbox, compilers, media, limits, clock, a server)");
  doctor::Options& o = cmd.options;
  c->add_option("--endpoint", o.endpoint, "Also check this server (kind, modalities, /tokenize..)");
  c->add_option("--model", o.model, "Model id (default: the only/first served model)");
  c->add_option("--api-key-env", cmd.api_key_env,
                "Environment variable holding the API key (default: OPENAI_API_KEY if set)");
  c->add_option("--api-key-file", cmd.api_key_file,
                "File holding the API key (at most 64 KiB; one trailing newline allowed, no "
                "other control character)");
  c->add_option("--ca-cert", o.ca_cert, "HTTPS: trust this CA certificate (PEM file)");
  c->add_flag("--insecure,-k", o.insecure, "HTTPS: do not check the server's certificate");
  c->add_option("--concurrency", o.concurrency, "Streams a run will hold open at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  c->add_option("--python", o.python, "Interpreter for model-written Python (as `run --python`)");
  c->add_option("--cxx", o.cxx, "Compiler for model-written C++ (as `run --cxx`)");
  c->add_option("--timeout-s", o.timeout_s, "Time limit of each request to the endpoint")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  c->add_flag("--json", cmd.json, "Print the checks as JSON");
  return c;
}

int RunDoctorCommand(const DoctorCommand& cmd) {
  doctor::Options o = cmd.options;
  if (!o.endpoint.empty()) {
    run::TargetOptions t;
    t.api_key_env = cmd.api_key_env;
    t.api_key_file = cmd.api_key_file;
    auto key = run::ResolveApiKey(t);
    if (!key) {
      return run::Fail(key.error());
    }
    o.api_key = *key;
    if (!key->empty()) {
      AddSecret(*key);
    }
  }
  // Media timings are of real encodes, not of reads from the disk cache.
  media::SetCacheDir("");
  const std::vector<doctor::Check> checks = doctor::RunAll(o);
  std::string out = cmd.json ? doctor::ToJson(checks).dump(2) + "\n" : doctor::RenderText(checks);
  out = Redact(out);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return doctor::ExitCode(checks);
}

}  // namespace sb::cli
