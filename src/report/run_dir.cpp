#include "report/run_dir.h"

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "core/output_file.h"
#include "core/redact.h"

namespace sb::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string SystemReason(int err) {
  return std::error_code(err, std::generic_category()).message();
}

Error IoError(const std::string& what, const fs::path& path, int err) {
  return MakeError(ErrorCode::kIo,
                   fmt::format("{} {}: {}", what, path.string(), SystemReason(err)));
}

// Serialises without throwing on invalid UTF-8 (server text can hold anything).
std::string Dump(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

// Writes `data` to dir/name through a temp file in the same directory (core/output_file.h):
// write, fsync, rename, fsync the directory. On any failure the old file is untouched.
Result<void> AtomicWrite(const fs::path& dir, std::string_view name, std::string_view data) {
  return WriteOutputFile(dir / std::string(name), data);
}

bool NonEmptyFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && fs::file_size(p, ec) > 0 && !ec;
}

Result<std::string> ReadFile(const fs::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "rbe");
  if (f == nullptr) {
    return IoError("cannot read", path, errno);
  }
  std::string text;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
  }
  bool failed = std::ferror(f) != 0;
  int err = errno;
  std::fclose(f);
  if (failed) {
    return IoError("cannot read", path, err);
  }
  return text;
}

}  // namespace

struct RunDir::Samples {
  std::mutex mu;
  std::FILE* file = nullptr;  // guarded by mu
  fs::path path;
  std::string error;        // guarded by mu: the first failed append ("" = none)
  std::uint64_t bytes = 0;  // guarded by mu: the file's size (only this RunDir appends to it)

  ~Samples() {
    if (file != nullptr) {
      std::fclose(file);
    }
  }
};

RunDir::RunDir(fs::path dir, std::unique_ptr<Samples> samples)
    : dir_(std::move(dir)), samples_(std::move(samples)) {}

RunDir::RunDir(RunDir&&) noexcept = default;
RunDir& RunDir::operator=(RunDir&&) noexcept = default;
RunDir::~RunDir() = default;

Result<RunDir> RunDir::Create(const fs::path& dir, RunDirMode mode) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("cannot create run directory {}: {}", dir.string(), ec.message()));
  }
  if (!fs::is_directory(dir, ec)) {
    return MakeError(
        ErrorCode::kIo,
        fmt::format("cannot use {} as a run directory: it is not a directory", dir.string()));
  }
  fs::path results = dir / std::string(kResultsFile);
  fs::path samples = dir / std::string(kSamplesFile);
  bool has_results = fs::exists(results, ec);
  bool has_samples = NonEmptyFile(samples);
  const char* open_mode = "ae";
  switch (mode) {
    case RunDirMode::kNew:
      if (has_results || has_samples) {
        return MakeError(
            ErrorCode::kSetup,
            fmt::format("{} already holds a run ({}); choose another output "
                        "directory, pass --overwrite to replace it, or continue it "
                        "with --resume {}",
                        dir.string(), has_results ? kResultsFile : kSamplesFile, dir.string()));
      }
      break;
    case RunDirMode::kOverwrite:
      for (std::string_view name : {kResultsFile, kReportFile, std::string_view("report.html")}) {
        fs::path p = dir / std::string(name);
        if (fs::exists(p, ec) && !fs::remove(p, ec)) {
          return MakeError(ErrorCode::kIo, fmt::format("cannot remove {}: {}", p.string(),
                                                       ec ? ec.message() : "unknown error"));
        }
      }
      open_mode = "we";
      break;
    case RunDirMode::kResume:
      // A run killed right after it began has only its plan.
      if (!has_results && !has_samples && !fs::exists(dir / "plan.json", ec)) {
        return MakeError(ErrorCode::kSetup,
                         fmt::format("{} holds no run to resume (no {}, {} or plan.json)",
                                     dir.string(), kResultsFile, kSamplesFile));
      }
      break;
  }
  auto state = std::make_unique<Samples>();
  state->path = samples;
  state->file = std::fopen(samples.c_str(), open_mode);
  if (state->file == nullptr) {
    return IoError("cannot open", samples, errno);
  }
  // Unbuffered: each line goes to the kernel in one write, and a failed append leaves no
  // half line in a user-space buffer to be flushed in front of the next one.
  std::setvbuf(state->file, nullptr, _IONBF, 0);

  struct stat st {};

  if (::fstat(::fileno(state->file), &st) == 0 && S_ISREG(st.st_mode)) {
    state->bytes = static_cast<std::uint64_t>(st.st_size);
  }
  return RunDir(dir, std::move(state));
}

Result<void> RunDir::AppendSample(const json& record) {
  std::string line = Redact(Dump(record, -1));
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(samples_->mu);
  if (!samples_->error.empty()) {
    // After a failed append the journal ends at the last whole line; nothing goes after a gap.
    return MakeError(ErrorCode::kIo, samples_->error);
  }
  if (std::fwrite(line.data(), 1, line.size(), samples_->file) != line.size() ||
      std::fflush(samples_->file) != 0) {
    int err = errno;
    std::clearerr(samples_->file);
    // A short write (disk full) would leave a cut line: take it back.
    [[maybe_unused]] int rc =
        ::ftruncate(::fileno(samples_->file), static_cast<off_t>(samples_->bytes));
    samples_->error =
        fmt::format("cannot append to {}: {}", samples_->path.string(), SystemReason(err));
    return MakeError(ErrorCode::kIo, samples_->error);
  }
  samples_->bytes += line.size();
  return {};
}

std::uint64_t RunDir::samples_bytes() const {
  std::lock_guard<std::mutex> lock(samples_->mu);
  return samples_->bytes;
}

Result<void> RunDir::WriteResults(const json& results) {
  std::string text = Redact(Dump(results, 2));
  text.push_back('\n');
  return AtomicWrite(dir_, kResultsFile, text);
}

Result<void> RunDir::RestatusResults(const std::string& status, const std::string& stop_reason,
                                     const std::string& finished_at, const std::string& note) {
  auto prior = LoadResults(dir_);
  if (!prior) {
    return prior.error();
  }
  json& r = prior.value();
  r["status"] = status;
  r["stop_reason"] = stop_reason;
  r["finished_at"] = finished_at;
  if (!r["warnings"].is_array()) {
    r["warnings"] = json::array();
  }
  r["warnings"].push_back(note);
  return WriteResults(r);
}

Result<void> RunDir::WriteText(std::string_view name, std::string_view text) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return MakeError(
        ErrorCode::kInternal,
        fmt::format("\"{}\" is not a plain file name inside the run directory", std::string(name)));
  }
  return AtomicWrite(dir_, name, Redact(std::string(text)));
}

Result<json> LoadResults(const fs::path& run_dir_or_file) {
  std::error_code ec;
  fs::path file = run_dir_or_file;
  if (fs::is_directory(file, ec)) {
    file /= std::string(kResultsFile);
  }
  auto text = ReadFile(file);
  if (!text) {
    return text.error();
  }
  json doc;
  try {
    doc = json::parse(*text);
  } catch (const json::parse_error& e) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{} is not valid JSON: {}", file.string(), e.what()));
  }
  const json* schema = doc.is_object() && doc.contains("schema") ? &doc["schema"] : nullptr;
  if (schema == nullptr || !schema->is_string() ||
      !schema->get_ref<const std::string&>().starts_with(kResultsSchemaPrefix)) {
    std::string found = schema == nullptr ? "no \"schema\" field"
                                          : fmt::format("\"schema\" is {}", Dump(*schema, -1));
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{} is not a servebench results file ({})", file.string(), found));
  }
  return doc;
}

std::string DefaultRunDirName(const std::string& utc_compact, const std::string& model) {
  std::string clean;
  for (char c : model) {
    if (c == '/' || c == ' ') {
      clean.push_back('_');
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-') {
      clean.push_back(c);
    }
    if (clean.size() == 100) {
      break;
    }
  }
  // No leading dots: the name must never read as "." or ".." or a hidden file.
  clean.erase(0, clean.find_first_not_of('.'));
  if (clean.empty()) {
    return utc_compact;
  }
  if (utc_compact.empty()) {
    return clean;
  }
  return utc_compact + "-" + clean;
}

}  // namespace sb::report
