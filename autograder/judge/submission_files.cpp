#include "submission_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace judge {
namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device file";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Why the entry `entry` of the folder open as `dirfd` cannot be taken, or "" when it was read into `content`. `name`
// is how messages name it (the entry, or PACKAGE/ENTRY).
std::string read_entry(int dirfd, const std::string& entry, const std::string& name, const SubmissionLimits& limits,
                       std::string& content) {
  struct stat before{};
  if (fstatat(dirfd, entry.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? "missing" : name + " cannot be read: " + std::strerror(errno);
  if (S_ISLNK(before.st_mode)) return name + " is a symbolic link: submit the file itself, not a link to it";
  if (!S_ISREG(before.st_mode))
    return name + " is " + kind_of(before.st_mode) + ", not a regular file: submit the file itself";
  if (before.st_nlink > 1)
    return name + " is a hard link (its contents are shared with another file): submit a copy of the file itself";
  if (static_cast<std::size_t>(before.st_size) > limits.max_file_bytes)
    return name + " is " + std::to_string(before.st_size) + " bytes, more than the " +
           std::to_string(limits.max_file_bytes) + " allowed for one file";
  // O_NOFOLLOW and O_NONBLOCK: if the entry was swapped for a link or a FIFO since the look above, the open fails or
  // does not wait; the inode must still be the one that was looked at.
  Fd f(openat(dirfd, entry.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (f.fd < 0) return name + " cannot be opened: " + std::strerror(errno);
  struct stat now{};
  if (fstat(f.fd, &now) != 0 || !S_ISREG(now.st_mode) || now.st_ino != before.st_ino || now.st_dev != before.st_dev ||
      now.st_nlink > 1)
    return name + " changed while it was being read: grade a folder nothing else is writing to";
  content.clear();
  char buf[65536];
  for (;;) {
    ssize_t n = read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return name + " cannot be read: " + std::strerror(errno);
    }
    if (n == 0) break;
    content.append(buf, static_cast<std::size_t>(n));
    if (content.size() > limits.max_file_bytes)
      return name + " grew past the " + std::to_string(limits.max_file_bytes) + " bytes allowed for one file";
  }
  return "";
}

bool plain_name(const std::string& n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos && n.find('\0') == std::string::npos;
}

// A required file one folder down (a Python package's PACKAGE/NAME.py): the folder is opened without following a
// link, and the file read from it as any other. Why it cannot be taken, or "" (then `content` holds it).
std::string read_in_folder(int dirfd, const std::string& name, const SubmissionLimits& limits, std::string& content) {
  const std::string folder = name.substr(0, name.find('/')), entry = name.substr(name.find('/') + 1);
  Fd sub(openat(dirfd, folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (sub.fd < 0) {
    struct stat st{};
    if (errno == ENOENT) return "missing";
    if (fstatat(dirfd, folder.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
      return folder + " is " + kind_of(st.st_mode) + ", not a folder: submit the package folder itself, holding " +
             entry;
    return "the folder " + folder + " cannot be opened: " + std::strerror(errno);
  }
  return read_entry(sub.fd, entry, name, limits, content);
}

// Why the submission folder could not be opened (errno `e`), in words.
std::string unopened_folder(const std::string& where, int e) {
  struct stat st{};
  if (lstat(where.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    return "the submission folder " + where + " is a symbolic link: grade the folder itself, not a link to it";
  if (e == ENOENT) return "the submission folder " + where + " does not exist";
  if (e == ENOTDIR) return "the submission " + where + " is not a folder";
  return "cannot read the submission folder " + where + ": " + std::strerror(e);
}

// The optional files the folder holds (not the required ones), listed without reading more than the limit's
// entries; why the folder could not be listed, or "".
std::string list_optional(int dir_fd, const std::string& where, const std::vector<std::string>& required,
                          const std::function<bool(const std::string&)>& optional, const SubmissionLimits& limits,
                          std::vector<std::string>& extra) {
  int listing_fd = dup(dir_fd);
  DIR* d = listing_fd >= 0 ? fdopendir(listing_fd) : nullptr;
  if (!d) {
    if (listing_fd >= 0) close(listing_fd);
    return "cannot list the submission folder " + where + ": " + std::strerror(errno);
  }
  std::size_t seen = 0;
  bool too_many = false;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (++seen > limits.max_entries) {
      too_many = true;
      break;
    }
    if (std::find(required.begin(), required.end(), name) != required.end() || !optional(name)) continue;
    extra.push_back(name);
  }
  closedir(d);
  if (too_many)
    return "the submission folder " + where + " holds more than " + std::to_string(limits.max_entries) +
           " entries: submit the exercise's files only";
  return "";
}

}  // namespace

SubmissionRead read_submission(const std::filesystem::path& folder, const std::vector<std::string>& required,
                               const std::function<bool(const std::string&)>& optional,
                               const SubmissionLimits& limits) {
  SubmissionRead r;
  const std::string where = folder.string();
  Fd dir(open(where.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.fd < 0) {
    r.failure = unopened_folder(where, errno);
    return r;
  }
  std::size_t total = 0;
  auto take = [&](const std::string& name) -> std::string {
    std::string content;
    std::string why = name.find('/') == std::string::npos ? read_entry(dir.fd, name, name, limits, content)
                                                          : read_in_folder(dir.fd, name, limits, content);
    if (!why.empty()) return why;
    total += content.size();
    if (total > limits.max_total_bytes)
      return "the submission's files add up to more than the " + std::to_string(limits.max_total_bytes) +
             " bytes allowed (at " + name + ")";
    r.files.push_back({name, std::move(content)});
    return "";
  };
  for (auto& name : required) {
    const std::size_t slash = name.find('/');
    const bool one_folder_down =
        slash != std::string::npos && plain_name(name.substr(0, slash)) && plain_name(name.substr(slash + 1));
    if (!plain_name(name) && !one_folder_down) {
      r.failure = "the exercise names an invalid source file '" + name + "' (a course bug)";
      return r;
    }
    std::string why = take(name);
    if (why == "missing") why = "the submission has no " + name + " (expected in " + where + ")";
    if (!why.empty()) {
      r.failure = why;
      return r;
    }
  }
  // The optional files: list the folder (bounded), then take them in name order, so a grade does not depend on the
  // order the file system lists them in.
  std::vector<std::string> extra;
  if (std::string why = list_optional(dir.fd, where, required, optional, limits, extra); !why.empty()) {
    r.failure = why;
    return r;
  }
  if (extra.size() > limits.max_extra_files) {
    r.failure = "the submission folder holds " + std::to_string(extra.size()) + " headers, more than the " +
                std::to_string(limits.max_extra_files) + " allowed";
    return r;
  }
  std::sort(extra.begin(), extra.end());
  for (auto& name : extra) {
    std::string why = take(name);
    if (why == "missing") continue;  // removed since the listing: it is not part of the submission
    if (!why.empty()) {
      r.failure = why;
      return r;
    }
  }
  r.ok = true;
  return r;
}

}  // namespace judge
