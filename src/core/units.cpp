#include "core/units.h"

namespace sb {

std::string UnitOfKey(std::string_view key) {
  // Longest suffixes first: "_gb_s" and "tok_s" end in "_s" too.
  if (key.ends_with("tok_s") || key.starts_with("tok_s_per_") || key.ends_with("tok_s_per_gpu") ||
      key.ends_with("tok_s_per_user")) {
    return "tok/s";
  }
  if (key.ends_with("_gb_s")) {
    return "GB/s";
  }
  if (key.ends_with("_rps")) {
    return "req/s";
  }
  if (key.ends_with("_ms")) {
    return "ms";
  }
  if (key.ends_with("_us")) {
    return "us";
  }
  if (key.ends_with("_pct") || key == "percent_of_ceiling") {
    return "%";
  }
  if (key.ends_with("_s")) {
    return "s";
  }
  if (key == "fraction" || key == "acceptance_rate" || key == "slo_fraction") {
    return "fraction";
  }
  if (key.ends_with("tokens") || key == "size" || key == "mean_acceptance_length") {
    return "tokens";
  }
  if (key.ends_with("bytes") || key.starts_with("bytes_")) {
    return "bytes";
  }
  return "";
}

}  // namespace sb
