#include "scaleout/scale_out.h"

#include <algorithm>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace sb::scaleout {

namespace {

Error Usage(std::string text) {
  return MakeError(ErrorCode::kUsage, std::move(text));
}

// Single-quoted for /bin/sh.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

void Volume(YAML::Emitter& y, const K8sOptions& o) {
  y << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "results";
  y << YAML::Key << "persistentVolumeClaim" << YAML::Value << YAML::BeginMap << YAML::Key
    << "claimName" << YAML::Value << o.volume_claim << YAML::EndMap;
  y << YAML::EndMap << YAML::EndSeq;
}

void Mount(YAML::Emitter& y) {
  y << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "results";
  y << YAML::Key << "mountPath" << YAML::Value << "/results";
  y << YAML::EndMap << YAML::EndSeq;
}

// One Job; `indexed`: N completions in Indexed mode.
void Job(YAML::Emitter& y, const K8sOptions& o, const std::string& name, bool indexed,
         const std::string& container, const std::vector<std::string>& command) {
  y << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "batch/v1";
  y << YAML::Key << "kind" << YAML::Value << "Job";
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << name;
  y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap << YAML::Key << "app" << YAML::Value
    << o.name << YAML::EndMap;
  y << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  if (indexed) {
    y << YAML::Key << "completionMode" << YAML::Value << "Indexed";
    y << YAML::Key << "completions" << YAML::Value << o.shards;
    y << YAML::Key << "parallelism" << YAML::Value << o.shards;
  }
  y << YAML::Key << "backoffLimit" << YAML::Value << 0;
  y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "labels"
    << YAML::Value << YAML::BeginMap << YAML::Key << "app" << YAML::Value << o.name << YAML::EndMap
    << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "restartPolicy" << YAML::Value << "Never";
  y << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << container;
  y << YAML::Key << "image" << YAML::Value << o.image;
  y << YAML::Key << "command" << YAML::Value << YAML::BeginSeq;
  for (const std::string& c : command) {
    y << YAML::DoubleQuoted << c;
  }
  y << YAML::EndSeq;
  Mount(y);
  y << YAML::EndMap << YAML::EndSeq;
  Volume(y, o);
  y << YAML::EndMap;  // pod spec
  y << YAML::EndMap;  // template
  y << YAML::EndMap;  // spec
  y << YAML::EndMap;
}

}  // namespace

Result<std::string> K8sManifest(const K8sOptions& o) {
  if (o.shards < 1 || o.shards > kMaxShards) {
    return Usage(fmt::format("--shards must be in 1..{}", kMaxShards));
  }
  if (o.image.empty()) {
    return Usage("--image: the container image that holds servebench");
  }
  // [a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?
  auto alnum = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); };
  const bool name_ok =
      !o.name.empty() && o.name.size() <= 42 && alnum(o.name.front()) && alnum(o.name.back()) &&
      std::all_of(o.name.begin(), o.name.end(), [&](char ch) { return alnum(ch) || ch == '-'; });
  if (!name_ok) {
    return Usage(
        fmt::format("--name {}: a Kubernetes name (lower-case letters, digits and '-', "
                    "at most 42 characters)",
                    o.name));
  }
  if (!o.out.starts_with("/results/")) {
    return Usage(fmt::format("--out {}: must lie under /results (the shared volume)", o.out));
  }
  bool endpoint = false;
  for (const std::string& a : o.perf_args) {
    const std::string flag = a.substr(0, a.find('='));
    if (flag == "--shard" || flag == "--shards" || flag == "--start-at" || flag == "--out") {
      return Usage(fmt::format("the perf arguments must not hold {}: the manifest sets it", flag));
    }
    endpoint = endpoint || flag == "--endpoint";
  }
  if (!endpoint) {
    return Usage(
        "the perf arguments need --endpoint URL (the server every shard loads; without it each "
        "pod would measure a built-in simulator of its own)");
  }
  std::vector<std::string> shard_cmd = {"servebench", "perf"};
  shard_cmd.insert(shard_cmd.end(), o.perf_args.begin(), o.perf_args.end());
  for (const std::string& a :
       {std::string("--shards"), std::to_string(o.shards), std::string("--start-at"),
        Rfc3339(o.start_at), std::string("--out"), o.out, std::string("--no-store")}) {
    shard_cmd.push_back(a);
  }
  std::string dirs;
  for (int i = 0; i < o.shards; ++i) {
    dirs += " " + ShellQuote(fmt::format("{}/shard-{}", o.out, i));
  }
  // report.md is written last, when a shard has finished (failed and interrupted ones too). A
  // shard whose pod died writes none: the wait is bounded and says which shard it waited for.
  const std::string script = fmt::format(
      "set -e\nwaited=0\nfor d in{0}; do\n  until [ -f \"$d/report.md\" ]; do\n"
      "    if [ \"$waited\" -ge {1} ]; then\n"
      "      echo \"servebench merge: no $d/report.md after {1} s: did that shard fail? "
      "(kubectl logs job/{3}-shards)\" >&2\n      exit 1\n    fi\n"
      "    sleep 1\n    waited=$((waited + 1))\n  done\ndone\n"
      "exec servebench merge{0} --out {2}\n",
      dirs, o.merge_wait_s, ShellQuote(o.out + "/merged"), o.name);

  YAML::Emitter y;
  y << YAML::Comment(fmt::format(
      "servebench scale-out k8s: one load as {} shards (an Indexed Job; JOB_COMPLETION_INDEX is "
      "each pod's shard), all starting at {}, then the merge into {}/merged. Apply before the "
      "start time: kubectl apply -f FILE. Both Jobs mount the ReadWriteMany volume claim '{}'. "
      "docs/scale-out.md",
      o.shards, Rfc3339(o.start_at), o.out, o.volume_claim));
  y << YAML::BeginDoc;
  Job(y, o, o.name + "-shards", true, "shard", shard_cmd);
  y << YAML::BeginDoc;
  Job(y, o, o.name + "-merge", false, "merge", {"/bin/sh", "-c", script});
  if (!y.good()) {
    return MakeError(ErrorCode::kInternal, std::string("YAML: ") + y.GetLastError());
  }
  return std::string(y.c_str()) + "\n";
}

}  // namespace sb::scaleout
