// The speed profiles, each registered once (the way ninja lists its tools in one table): the
// name users type and every output shows, the key of its section in results.json, the rows it
// writes there, the flags only it reads, and whether `run` runs it by default. Everything that
// names a profile reads this table: perf's dispatch, the plan's checks, `--help`, completion,
// the suite runner, the CSV export, the resource rows and the store. An unknown name is an
// error wherever one is given. How to add a profile: docs/architecture.md.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace sb {

enum class ProfileId {
  kDecode,
  kConcurrency,
  kMaxTokens,
  kTtft,
  kContext,
  kRate,
  kReplay,
  kSessions
};

struct ProfileSpec {
  ProfileId id;
  // The one spelling on the command line, in reports, the CSV export and the store
  // ("max-tokens").
  std::string_view name;
  // Its section of results.json, perf.<key>: "max_tokens" for max-tokens (results.json schema
  // 1 spelled it so; the schema is kept, docs/results-schema.md).
  std::string_view key;
  // The array of rows inside that section ("levels", "lengths" ...), and the field of each row
  // that says where it sits in the sweep ("concurrency", "max_tokens" ...; "" for none).
  std::string_view rows;
  std::string_view dim;
  // The unit of dim in the CSV export ("streams", "tokens" ...; "" for none).
  std::string_view dim_unit;
  // `run` runs it when no --profiles is given.
  bool in_default_run;
  // A suite's `profile:` test may name it (rate needs a schedule and SLOs: perf only).
  bool in_suites;
  // One line for --help and completion.
  std::string_view summary;
  // The options only this profile reads (a comma-separated list, "" for none).
  std::string_view flags;
};

// Every profile, in the order `run` runs them.
std::span<const ProfileSpec> Profiles();

// The profile called `name` (its name; its results.json key is accepted too, so files written
// before the table still load); nullptr when there is none.
const ProfileSpec* FindProfile(std::string_view name);

// The table's entry for id.
const ProfileSpec& Profile(ProfileId id);

// The table's name of the profile called `name` or keyed so ("max_tokens" -> "max-tokens");
// `name` itself when the table has no such profile ("suite", "resources").
std::string ProfileDisplayName(std::string_view name);

// "decode, concurrency, max-tokens, ttft, context, rate" (for messages and --help).
std::string ProfileNameList(bool suites_only = false);

}  // namespace sb
