// The unit of a results.json figure, read from its key (docs/results-schema.md: units are in
// the key names). One reading for every consumer: the CSV export, the run store, history.
#pragma once

#include <string>
#include <string_view>

namespace sb {

// "decode_tok_s", "tok_s", "tok_s_per_user" -> "tok/s"; "bandwidth_gb_s" -> "GB/s";
// "rate_rps" -> "req/s"; "_ms" -> "ms"; "_us" -> "us"; "_pct", "percent_of_ceiling" -> "%";
// "wall_s" -> "s"; "fraction", "acceptance_rate", "slo_fraction" -> "fraction"; "prompt_tokens",
// "max_tokens", "size" -> "tokens"; "bytes_sent", "image_bytes" -> "bytes"; "" when the key
// says nothing (counts: "ok", "errors").
std::string UnitOfKey(std::string_view key);

}  // namespace sb
