#include "sandbox/workdir.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sb::sandbox {

namespace {

Error IoError(const std::string& what, int err) {
  return MakeError(ErrorCode::kIo, fmt::format("{}: {}", what, std::strerror(err)));
}

std::vector<std::string> Split(std::string_view name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t slash = name.find('/', start);
    if (slash == std::string_view::npos) {
      slash = name.size();
    }
    parts.emplace_back(name.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

// Every directory from / down to path can be traversed by other users.
bool TraversableByOthers(const std::string& path) {
  std::string cur;
  for (const std::string& part : Split(path)) {
    if (part.empty()) {
      continue;
    }
    cur += "/" + part;

    struct stat st {};

    if (stat(cur.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_mode & S_IXOTH) == 0) {
      return false;
    }
  }
  return true;
}

std::string TempBase(bool for_other_uid) {
  const char* env = std::getenv("TMPDIR");
  if (env != nullptr && env[0] == '/') {
    std::string base(env);
    while (base.size() > 1 && base.back() == '/') {
      base.pop_back();
    }

    struct stat st {};

    if (stat(base.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
        (!for_other_uid || TraversableByOthers(base))) {
      return base;
    }
  }
  return "/tmp";
}

// The directory name in dir_fd, without following a symlink; makes it readable and writable
// for us when the program took that away (only matters when we are not root).
UniqueFd OpenDir(int dir_fd, const char* name) {
  UniqueFd fd(openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() && errno == EACCES) {
    struct stat st {};

    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
        fchmodat(dir_fd, name, 0700, 0) == 0) {
      fd.Reset(openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
  }
  if (fd.valid()) {
    struct stat st {};

    if (fstat(fd.get(), &st) == 0 && (st.st_mode & 0700) != 0700) {
      fchmod(fd.get(), 0700);  // so that its entries can be removed (non-root)
    }
  }
  return fd;
}

int Unlink(int dir_fd, const char* name, int flags) {
  if (unlinkat(dir_fd, name, flags) == 0 || errno == ENOENT) {
    return 0;
  }
  if (errno == EACCES || errno == EPERM) {
    fchmod(dir_fd, 0700);
    if (unlinkat(dir_fd, name, flags) == 0 || errno == ENOENT) {
      return 0;
    }
  }
  return -1;
}

// Unlinks every non-directory in dir_fd and returns the names of its subdirectories.
std::vector<std::string> Scan(int dir_fd, int* first_error) {
  std::vector<std::string> subdirs;
  int copy = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = copy >= 0 ? fdopendir(copy) : nullptr;
  if (dir == nullptr) {
    if (copy >= 0) {
      close(copy);
    }
    if (*first_error == 0) {
      *first_error = errno;
    }
    return subdirs;
  }
  while (struct dirent* e = readdir(dir)) {
    const char* n = e->d_name;
    if (std::strcmp(n, ".") == 0 || std::strcmp(n, "..") == 0) {
      continue;
    }
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};

      is_dir = fstatat(dir_fd, n, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) {
      subdirs.emplace_back(n);
    } else if (Unlink(dir_fd, n, 0) != 0 && *first_error == 0) {
      *first_error = errno;
    }
  }
  closedir(dir);
  return subdirs;
}

// Removes name (in parent_fd) and everything below it, depth first, holding one descriptor:
// a program may build a tree deeper than any path or descriptor limit.
Result<void> RemoveAt(int parent_fd, const std::string& name, const std::string& shown) {
  struct stat st {};

  if (fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Result<void>() : Result<void>(IoError("removing " + shown, errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (Unlink(parent_fd, name.c_str(), 0) != 0) {
      return IoError("removing " + shown, errno);
    }
    return {};
  }

  struct Frame {
    std::string name;
    std::vector<std::string> subdirs;
  };

  int first_error = 0;
  UniqueFd cur = OpenDir(parent_fd, name.c_str());
  if (!cur.valid()) {
    return IoError("removing " + shown, errno);
  }
  std::vector<Frame> frames;
  frames.push_back({name, Scan(cur.get(), &first_error)});
  while (true) {
    Frame& top = frames.back();
    if (!top.subdirs.empty()) {
      std::string sub = std::move(top.subdirs.back());
      top.subdirs.pop_back();
      UniqueFd next = OpenDir(cur.get(), sub.c_str());
      if (!next.valid()) {
        if (Unlink(cur.get(), sub.c_str(), 0) != 0 && first_error == 0) {
          first_error = errno;
        }
        continue;
      }
      cur = std::move(next);
      frames.push_back({std::move(sub), Scan(cur.get(), &first_error)});
      continue;
    }
    if (frames.size() == 1) {
      break;
    }
    UniqueFd up(openat(cur.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!up.valid()) {
      return IoError("removing " + shown, errno);
    }
    if (Unlink(up.get(), top.name.c_str(), AT_REMOVEDIR) != 0 && first_error == 0) {
      first_error = errno;
    }
    frames.pop_back();
    cur = std::move(up);
  }
  cur.Reset();
  if (Unlink(parent_fd, name.c_str(), AT_REMOVEDIR) != 0) {
    return IoError("removing " + shown, first_error != 0 ? first_error : errno);
  }
  return {};
}

}  // namespace

bool ValidRelativeName(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string_view::npos) {
    return false;
  }
  for (const std::string& part : Split(name)) {
    if (part.empty() || part == "." || part == "..") {
      return false;
    }
  }
  return true;
}

Result<void> RemoveTree(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  const std::string parent = slash == std::string::npos ? std::string(".")
                             : slash == 0               ? std::string("/")
                                                        : path.substr(0, slash);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") {
    return MakeError(ErrorCode::kUsage, "cannot remove " + path);
  }
  UniqueFd parent_fd(open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd.valid()) {
    return errno == ENOENT ? Result<void>() : Result<void>(IoError("opening " + parent, errno));
  }
  return RemoveAt(parent_fd.get(), base, path);
}

Result<WorkDir> WorkDir::Create(std::optional<std::pair<uid_t, gid_t>> owner) {
  std::string tmpl = TempBase(owner.has_value()) + "/servebench-sandbox-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return MakeError(ErrorCode::kSetup,
                     fmt::format("cannot create a directory {}: {}", tmpl, std::strerror(errno)));
  }
  WorkDir dir;
  dir.outer_path_ = tmpl;
  dir.work_path_ = tmpl + "/work";
  dir.owner_ = owner;
  if (owner && chmod(dir.outer_path_.c_str(), 0711) != 0) {
    return IoError("chmod " + dir.outer_path_, errno);
  }
  if (mkdir(dir.work_path_.c_str(), 0700) != 0) {
    return IoError("mkdir " + dir.work_path_, errno);
  }
  if (owner && chown(dir.work_path_.c_str(), owner->first, owner->second) != 0) {
    return IoError("chown " + dir.work_path_, errno);
  }
  dir.work_fd_.Reset(open(dir.work_path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir.work_fd_.valid()) {
    return IoError("opening " + dir.work_path_, errno);
  }
  return dir;
}

WorkDir::WorkDir(WorkDir&& other) noexcept
    : outer_path_(std::exchange(other.outer_path_, std::string())),
      work_path_(std::exchange(other.work_path_, std::string())),
      work_fd_(std::move(other.work_fd_)),
      owner_(other.owner_) {}

WorkDir::~WorkDir() {
  (void)Remove();
}

Result<void> WorkDir::Remove() {
  work_fd_.Reset();
  if (outer_path_.empty()) {
    return {};
  }
  std::string outer = std::exchange(outer_path_, std::string());
  return RemoveTree(outer);
}

Result<void> WorkDir::Write(const File& file) {
  std::vector<std::string> parts = Split(file.name);
  UniqueFd held;
  int cur = work_fd_.get();
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const char* part = parts[i].c_str();
    if (mkdirat(cur, part, 0755) == 0) {
      if (owner_ && fchownat(cur, part, owner_->first, owner_->second, AT_SYMLINK_NOFOLLOW) != 0) {
        return IoError("chown " + parts[i], errno);
      }
    } else if (errno != EEXIST) {
      return IoError("mkdir " + parts[i], errno);
    }
    UniqueFd next(openat(cur, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      return IoError("opening " + parts[i], errno);
    }
    held = std::move(next);
    cur = held.get();
  }
  const mode_t mode = file.executable ? 0755 : 0644;
  UniqueFd fd(openat(cur, parts.back().c_str(),
                     O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd.valid()) {
    return IoError("creating " + file.name, errno);
  }
  std::size_t done = 0;
  while (done < file.content.size()) {
    ssize_t n = write(fd.get(), file.content.data() + done, file.content.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return IoError("writing " + file.name, errno);
    }
    done += static_cast<std::size_t>(n);
  }
  if (fchmod(fd.get(), mode) != 0) {
    return IoError("chmod " + file.name, errno);
  }
  if (owner_ && fchown(fd.get(), owner_->first, owner_->second) != 0) {
    return IoError("chown " + file.name, errno);
  }
  return {};
}

namespace {

// Opens the regular file name beneath dir_fd without following any symlink.
UniqueFd OpenRegular(int dir_fd, std::string_view name) {
  if (!ValidRelativeName(name)) {
    return UniqueFd();
  }
  std::vector<std::string> parts = Split(name);
  UniqueFd held;
  int cur = dir_fd;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    UniqueFd next(openat(cur, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      return UniqueFd();
    }
    held = std::move(next);
    cur = held.get();
  }
  UniqueFd fd(
      openat(cur, parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));

  struct stat st {};

  if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return UniqueFd();
  }
  return fd;
}

}  // namespace

bool WorkDir::HasRegularFile(std::string_view name) const {
  return OpenRegular(work_fd_.get(), name).valid();
}

std::optional<std::string> WorkDir::Read(std::string_view name, std::uint64_t max_bytes) const {
  UniqueFd fd = OpenRegular(work_fd_.get(), name);
  if (!fd.valid()) {
    return std::nullopt;
  }
  std::string out;
  char buf[65536];
  while (out.size() < max_bytes) {
    std::size_t want = std::min<std::uint64_t>(sizeof buf, max_bytes - out.size());
    ssize_t n = read(fd.get(), buf, want);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace sb::sandbox
