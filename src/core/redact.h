// Secrets that must never reach any output: the password (userinfo) of an endpoint URL such as
// http://user:password@host/v1 and the API key. The command line registers them once; every
// writer of user-visible bytes (stdout/stderr lines, results.json, samples.jsonl, reports)
// passes its text through Redact(). Thread safety: AddSecret before starting threads that call
// Redact; Redact may then be called from any thread.
#pragma once

#include <string>
#include <string_view>

namespace sb {

// Registers `secret` (ignored when shorter than 4 bytes: redacting "ab" would garble text).
void AddSecret(std::string secret);

// `text` with every registered secret replaced by "***" (moved through untouched when none is
// registered: it runs on every samples.jsonl line).
std::string Redact(std::string text);

// The URL's userinfo ("user:password@" in "http://user:password@host:8000/v1", or in
// "user:password@host/v1" written without its scheme) replaced by "***@", and each query value
// ("?key=SECRET" -> "?key=***"; the connection settings sslmode, connect_timeout,
// application_name, target_session_attrs, gssencmode and options stay); other URLs unchanged.
std::string RedactUrl(std::string_view url);

// Registers the userinfo of `url` (as written, and its password alone) and its query values
// (but those RedactUrl keeps) as secrets.
void AddUrlSecrets(std::string_view url);

}  // namespace sb
