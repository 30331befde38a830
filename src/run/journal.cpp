#include "run/journal.h"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/output_file.h"

namespace sb::run {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string Reason(int err) {
  return std::error_code(err, std::generic_category()).message();
}

Result<std::string> Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    if (!fs::exists(p)) {
      return std::string();
    }
    return MakeError(ErrorCode::kIo, fmt::format("cannot read {}: {}", p.string(), Reason(errno)));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces `p` with `text` through a temp file and rename: never half-written.
Result<void> Replace(const fs::path& p, const std::string& text) {
  return WriteOutputFile(p, text);
}

// Whole lines of `text` (a cut last line, from a process killed mid-write, is dropped), each with
// the offset just past its newline.
std::vector<std::pair<std::string_view, std::size_t>> Lines(std::string_view text) {
  std::vector<std::pair<std::string_view, std::size_t>> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      break;
    }
    out.emplace_back(text.substr(pos, nl - pos), nl + 1);
    pos = nl + 1;
  }
  return out;
}

// Marks every samples.jsonl line past `keep` as superseded; returns how many there were.
Result<std::uint64_t> SupersedeSamples(const fs::path& samples, std::uint64_t keep) {
  auto text = Slurp(samples);
  if (!text) {
    return text.error();
  }
  if (keep > text->size()) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{} is shorter than its journal says ({} < {} bytes): it was "
                                 "changed after the run stopped",
                                 samples.string(), text->size(), keep));
  }
  std::string out = text->substr(0, keep);
  std::uint64_t n = 0;
  for (auto [line, end] : Lines(std::string_view(*text).substr(keep))) {
    json rec = json::parse(line, nullptr, false);
    if (!rec.is_object()) {
      continue;
    }
    rec["superseded"] = true;
    out += rec.dump(-1, ' ', false, json::error_handler_t::replace);
    out += '\n';
    ++n;
  }
  if (out != *text) {
    if (auto ok = Replace(samples, out); !ok) {
      return ok.error();
    }
  }
  return n;
}

}  // namespace

Result<std::unique_ptr<FileJournal>> FileJournal::Open(const fs::path& dir, bool resume) {
  std::unique_ptr<FileJournal> j(new FileJournal());
  j->path_ = dir / std::string(kJournalFile);
  std::size_t keep_bytes = 0;
  if (resume) {
    auto text = Slurp(j->path_);
    if (!text) {
      return text.error();
    }
    std::uint64_t samples_keep = 0;
    std::map<int, Unit> open;                         // units begun and not (yet) ended
    std::map<int, std::vector<std::uint64_t>> parts;  // their committed parts' call ids
    std::map<int, int> part_lines;                    // and how many parts
    for (auto [line, end] : Lines(*text)) {
      json rec = json::parse(line, nullptr, false);
      if (!rec.is_object() || !rec.contains("u")) {
        break;  // the rest cannot be trusted
      }
      const int u = rec["u"].get<int>();
      if (rec.contains("begin")) {
        if (u != static_cast<int>(j->finished_.size())) {
          break;
        }
        open[u].name = rec["begin"].get<std::string>();
      } else if (rec.contains("chat")) {
        const auto id = rec["chat"].value("id", std::uint64_t{0});
        open[u].chats[id] = std::move(rec["chat"]);
      } else if (rec.contains("part")) {
        for (const json& id : rec.value("ids", json::array())) {
          parts[u].push_back(id.get<std::uint64_t>());
        }
        ++part_lines[u];
        j->last_t_ = std::max(j->last_t_, rec.value("t", std::int64_t{0}));
      } else if (rec.contains("aux")) {
        open[u].aux[rec["aux"].get<std::string>()].push_back(std::move(rec["r"]));
      } else if (rec.contains("end")) {
        if (!open.contains(u) || u != static_cast<int>(j->finished_.size())) {
          break;
        }
        j->finished_.push_back(std::move(open[u]));
        open.erase(u);
        parts.erase(u);
        samples_keep = rec.value("samples_bytes", std::uint64_t{0});
        j->last_t_ = std::max(j->last_t_, rec.value("t", std::int64_t{0}));
        keep_bytes = end;
      }
    }
    if (!open.empty()) {
      auto& [u, unit] = *open.begin();
      j->resumed_.unfinished = unit.name;
      j->partial_.name = unit.name;
      for (std::uint64_t id : parts[u]) {
        if (auto it = unit.chats.find(id); it != unit.chats.end()) {
          j->partial_.chats[id] = std::move(it->second);
        }
      }
      j->resumed_.parts = part_lines[u];
    }
    j->resumed_.units = static_cast<int>(j->finished_.size());
    auto superseded = SupersedeSamples(dir / "samples.jsonl", samples_keep);
    if (!superseded) {
      return superseded.error();
    }
    j->resumed_.superseded_samples = *superseded;
    // Cut the unfinished unit: a later resume must not see its lines.
    if (keep_bytes < text->size()) {
      if (::truncate(j->path_.c_str(), static_cast<off_t>(keep_bytes)) != 0) {
        return MakeError(ErrorCode::kIo,
                         fmt::format("cannot truncate {}: {}", j->path_.string(), Reason(errno)));
      }
    }
  }
  j->file_ = std::fopen(j->path_.c_str(), resume ? "ae" : "we");
  if (j->file_ == nullptr) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("cannot open {}: {}", j->path_.string(), Reason(errno)));
  }
  std::setvbuf(j->file_, nullptr, _IONBF, 0);
  return j;
}

FileJournal::~FileJournal() {
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

void FileJournal::SetClock(std::int64_t t0_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  t0_ = t0_ns;
}

std::int64_t FileJournal::ResumeT0(std::int64_t now_ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_ns - last_t_ - 1'000'000;
}

void FileJournal::SetSamplesSize(std::function<std::uint64_t()> size) {
  std::lock_guard<std::mutex> lock(mu_);
  samples_size_ = std::move(size);
}

void FileJournal::SetOnFatal(std::function<void(const std::string&)> on_fatal) {
  std::lock_guard<std::mutex> lock(mu_);
  on_fatal_ = std::move(on_fatal);
}

bool FileJournal::replaying_parts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return partial_live_;
}

int FileJournal::replayed_units() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replayed_;
}

void FileJournal::Write(const json& line) {
  if (failed_) {
    return;
  }
  std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace);
  text.push_back('\n');
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) {
    const int err = errno;
    std::clearerr(file_);
    Fatal(fmt::format("cannot append to {}: {}", path_.string(), Reason(err)));
  }
}

void FileJournal::Fatal(const std::string& why) {
  if (failed_) {
    return;
  }
  failed_ = true;
  replaying_ = false;
  if (on_fatal_) {
    on_fatal_(why);
  }
}

void FileJournal::SetOnBeginUnit(std::function<void(std::string_view)> on_begin) {
  std::lock_guard<std::mutex> lock(mu_);
  on_begin_unit_ = std::move(on_begin);
}

void FileJournal::BeginUnit(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (depth_++ > 0) {
    return;  // nested: part of the outermost unit
  }
  unit_ = next_unit_++;
  replaying_ = false;
  if (on_begin_unit_) {
    on_begin_unit_(name);
  }
  if (failed_) {
    return;
  }
  if (unit_ < static_cast<int>(finished_.size())) {
    if (finished_[unit_].name != name) {
      Fatal(
          fmt::format("the resumed run no longer matches its journal at unit {} ('{}' where "
                      "the journal has '{}'): the plan or servebench changed; start a new run",
                      unit_ + 1, std::string(name), finished_[unit_].name));
      return;
    }
    replaying_ = true;
    ++replayed_;
    return;
  }
  partial_live_ = unit_ == static_cast<int>(finished_.size()) && !partial_.chats.empty() &&
                  partial_.name == name;
  Write(json{{"u", unit_}, {"begin", name}});
}

void FileJournal::EndUnit() {
  std::lock_guard<std::mutex> lock(mu_);
  if (depth_ == 0 || --depth_ > 0) {
    return;
  }
  if (!replaying_ && !failed_ && !cut_) {
    // The unit's answers are serialised now, after its measurement, never between its requests
    // (a rate point's workers send again as soon as an answer is in).
    for (const client::ChatResponse& r : pending_chats_) {
      Write(json{{"u", unit_}, {"chat", client::ResponseToJson(r, t0_)}});
    }
    for (json& aux : pending_aux_) {
      Write(json{{"u", unit_}, {"aux", std::move(aux["key"])}, {"r", std::move(aux["r"])}});
    }
    const std::uint64_t samples = samples_size_ ? samples_size_() : 0;
    const std::int64_t now = ToNanos(std::chrono::steady_clock::now());
    Write(json{{"u", unit_}, {"end", true}, {"samples_bytes", samples}, {"t", now - t0_}});
  }
  pending_chats_.clear();
  pending_aux_.clear();
  replaying_ = false;
  cut_ = false;
  if (partial_live_) {
    partial_live_ = false;
    partial_ = Unit{};
  }
}

void FileJournal::CommitPart(std::string_view name, std::span<const std::uint64_t> ids) {
  std::lock_guard<std::mutex> lock(mu_);
  if (depth_ == 0 || replaying_ || failed_ || cut_) {
    return;  // a replayed unit is in the journal already; a cut one is measured again
  }
  std::vector<client::ChatResponse> rest;
  for (client::ChatResponse& r : pending_chats_) {
    if (std::find(ids.begin(), ids.end(), r.id) != ids.end()) {
      Write(json{{"u", unit_}, {"chat", client::ResponseToJson(r, t0_)}});
    } else {
      rest.push_back(std::move(r));
    }
  }
  pending_chats_ = std::move(rest);
  const std::int64_t now = ToNanos(std::chrono::steady_clock::now());
  Write(json{{"u", unit_},
             {"part", name},
             {"ids", std::vector<std::uint64_t>(ids.begin(), ids.end())},
             {"t", now - t0_}});
}

std::vector<client::ChatResponse> FileJournal::RunChats(std::span<const client::ChatCall> calls,
                                                        const client::RunHooks& hooks,
                                                        std::stop_token stop,
                                                        const LiveChats& live) {
  std::vector<client::ChatResponse> out;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (replaying_) {
      const Unit& unit = finished_[unit_];
      for (const auto& call : calls) {
        auto it = unit.chats.find(call.id);
        auto r = it == unit.chats.end()
                     ? Result<client::ChatResponse>(MakeError(ErrorCode::kSetup, "no such request"))
                     : client::ResponseFromJson(it->second, t0_);
        if (!r) {
          Fatal(
              fmt::format("the resumed run no longer matches its journal: unit {} ('{}') "
                          "has no request {} ({})",
                          unit_ + 1, unit.name, call.id, r.error().message));
          break;
        }
        r->replayed = true;
        out.push_back(std::move(r.value()));
      }
      if (out.size() == calls.size()) {
        lock.unlock();
        client::ReplayHooks(out, hooks);
        return out;
      }
    }
    if (partial_live_ && !failed_ && !calls.empty() &&
        std::all_of(calls.begin(), calls.end(),
                    [&](const client::ChatCall& c) { return partial_.chats.contains(c.id); })) {
      // A finished part of the unit the earlier process was cut off in: replayed, and recorded
      // again so that the part is committed again.
      for (const auto& call : calls) {
        auto r = client::ResponseFromJson(partial_.chats[call.id], t0_);
        if (!r) {
          Fatal(
              fmt::format("the journal's record of request {} in unit {} ('{}') is unreadable "
                          "({})",
                          call.id, unit_ + 1, partial_.name, r.error().message));
          out.clear();
          break;
        }
        r->replayed = true;
        out.push_back(std::move(r.value()));
      }
      if (out.size() == calls.size()) {
        pending_chats_.insert(pending_chats_.end(), out.begin(), out.end());
        lock.unlock();
        client::ReplayHooks(out, hooks);
        return out;
      }
    }
    if (failed_ && unit_ >= 0 && unit_ < static_cast<int>(finished_.size())) {
      // Nothing may be sent for a unit the journal cannot vouch for: the run is stopping.
      out.assign(calls.size(), client::ChatResponse{});
      for (std::size_t i = 0; i < calls.size(); ++i) {
        out[i].id = calls[i].id;
        out[i].outcome = client::Outcome::kCancelled;
        out[i].reason = "cancelled before send: the resumed run no longer matches its journal";
        if (hooks.on_done) {
          hooks.on_done(out[i]);
        }
      }
      return out;
    }
  }
  const bool stopping_before = stop.stop_requested();
  std::stop_token seen = stop;
  out = live(calls, hooks, std::move(stop));
  std::lock_guard<std::mutex> lock(mu_);
  // Stopped while this batch ran, and some of it was cancelled for that: the unit is partial.
  if (depth_ > 0 && (stopping_before || seen.stop_requested()) &&
      std::any_of(out.begin(), out.end(), [](const client::ChatResponse& r) {
        return r.outcome == client::Outcome::kCancelled;
      })) {
    cut_ = true;
  }
  if (depth_ > 0 && !failed_) {
    pending_chats_.insert(pending_chats_.end(), out.begin(), out.end());
  }
  return out;
}

Result<client::HttpResponse> FileJournal::Plain(std::string_view method, std::string_view path,
                                                const LivePlain& live) {
  const std::string key = fmt::format("{} {}", method, path);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (replaying_) {
      auto& queue = finished_[unit_].aux[key];
      if (queue.empty()) {
        Fatal(
            fmt::format("the resumed run no longer matches its journal: unit {} ('{}') has no "
                        "more answers to {}",
                        unit_ + 1, finished_[unit_].name, key));
        return MakeError(ErrorCode::kCancelled, "the resumed run no longer matches its journal");
      }
      json rec = std::move(queue.front());
      queue.pop_front();
      if (rec.contains("error")) {
        return MakeError(static_cast<ErrorCode>(rec["error"].value("code", 0)),
                         rec["error"].value("message", std::string()));
      }
      return client::HttpResponseFromJson(rec);
    }
  }
  auto r = live();
  std::lock_guard<std::mutex> lock(mu_);
  if (depth_ > 0 && !failed_) {
    json rec =
        r ? client::HttpResponseToJson(*r)
          : json{{"error",
                  {{"code", static_cast<int>(r.error().code)}, {"message", r.error().message}}}};
    pending_aux_.push_back(json{{"key", key}, {"r", std::move(rec)}});
  }
  return r;
}

}  // namespace sb::run
