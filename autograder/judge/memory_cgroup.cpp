#include "memory_cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace judge {

namespace {
std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_file(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  ::close(fd);
  return ok;
}

// "oom_kill N" in memory.events (v2) or memory.oom_control (v1, kernel 4.13 and later)
long oom_kill_line(const std::string& text) {
  std::istringstream in(text);
  std::string key;
  long value;
  while (in >> key >> value)
    if (key == "oom_kill") return value;
  return -1;
}

// This process's cgroup path in the v2 hierarchy ("0::/path") or in v1's memory hierarchy ("N:memory:/path").
std::string own_path(bool v2) {
  std::istringstream in(read_all("/proc/self/cgroup"));
  for (std::string line; std::getline(in, line);) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    if (v2 ? line.compare(0, a, "0") == 0 && controllers.empty()
           : ("," + controllers + ",").find(",memory,") != std::string::npos)
      return line.substr(b + 1);
  }
  return "";
}
}  // namespace

bool process_alive(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  std::string stat = read_all("/proc/" + std::to_string(pid) + "/stat");  // "pid (comm) S ...": comm may hold ") "
  auto close = stat.rfind(") ");
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

int remove_stale_judge_cgroups(const std::string& folder, const std::function<bool(pid_t)>& alive) {
  const std::string prefix = "course-judge-";
  auto subfolders = [](const std::string& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.is_directory(ec) && !e.is_symlink(ec)) names.push_back(e.path().filename().string());
    return names;
  };
  int removed = 0;
  for (const std::string& name : subfolders(folder)) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == getpid() || alive(pid)) continue;
    const std::string base = folder + "/" + name;
    for (const std::string& run : subfolders(base)) ::rmdir((base + "/" + run).c_str());
    if (::rmdir(base.c_str()) == 0) ++removed;
  }
  return removed;
}

bool MemoryCgroups::configure(unsigned long long limit_bytes, std::string& reason) {
  limit_ = limit_bytes;
  if (const char* v = getenv("COURSE_SANDBOX_CGROUP"); v && std::string(v) == "off") {
    reason = "switched off by COURSE_SANDBOX_CGROUP=off";
    return false;
  }
  std::vector<std::pair<std::string, bool>> candidates;  // (folder, v2)
  if (access("/sys/fs/cgroup/cgroup.controllers", R_OK) == 0) {
    std::string own = own_path(true);
    // a cgroup whose children get the memory controller: the judge's own (when delegated), else the root
    if (!own.empty() && own != "/") candidates.push_back({"/sys/fs/cgroup" + own, true});
    candidates.push_back({"/sys/fs/cgroup", true});
  } else if (std::string own = own_path(false); !own.empty()) {
    candidates.push_back({"/sys/fs/cgroup/memory" + (own == "/" ? std::string() : own), false});
  }
  reason = candidates.empty() ? "no cgroup file system is mounted here" : "";
  for (auto& [folder, v2] : candidates) {
    if (v2 && read_all(folder + "/cgroup.subtree_control").find("memory") == std::string::npos) {
      reason += (reason.empty() ? "" : "; ") + folder + " does not delegate the memory controller";
      continue;
    }
    remove_stale_judge_cgroups(folder, process_alive);
    std::string base = folder + "/course-judge-" + std::to_string(getpid());
    if (::mkdir(base.c_str(), 0755) != 0 && errno != EEXIST) {
      reason += (reason.empty() ? "" : "; ") + ("cannot make a cgroup in " + folder + ": " + strerror(errno));
      continue;
    }
    if (v2 && !write_file(base + "/cgroup.subtree_control", "+memory")) {
      ::rmdir(base.c_str());
      reason += (reason.empty() ? "" : "; ") + ("cannot delegate memory below " + base + ": " + strerror(errno));
      continue;
    }
    base_ = base;
    v2_ = v2;
    // the real thing once, a process moved in included: a limit that cannot be set, or a cgroup no process can
    // enter, is no protection (and a worker that could not enter would not run at all)
    Run probe = open();
    bool works = false;
    if (probe.procs_fd >= 0) {
      pid_t pid = fork();
      if (pid == 0) _exit(::write(probe.procs_fd, "0", 1) == 1 ? 0 : 1);
      int status = 0;
      works = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    close(probe);
    if (works) return true;
    ::rmdir(base.c_str());
    base_.clear();
    reason += (reason.empty() ? "" : "; ") + ("cannot set a memory limit in " + base);
  }
  return false;
}

MemoryCgroups::Run MemoryCgroups::open() {
  Run run;
  if (base_.empty()) return run;
  run.dir = base_ + "/run-" + std::to_string(next_++);
  if (::mkdir(run.dir.c_str(), 0755) != 0 && errno != EEXIST) {
    run.dir.clear();
    return run;
  }
  const std::string limit = std::to_string(limit_);
  bool ok = v2_ ? write_file(run.dir + "/memory.max", limit) : write_file(run.dir + "/memory.limit_in_bytes", limit);
  if (ok) {  // no swap to escape into, where the kernel accounts it
    if (v2_)
      write_file(run.dir + "/memory.swap.max", "0");
    else
      write_file(run.dir + "/memory.memsw.limit_in_bytes", limit);
    run.procs_fd = ::open((run.dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  }
  run.oom_kills_before = oom_kills(run);
  if (run.procs_fd < 0) close(run);
  return run;
}

long MemoryCgroups::oom_kills(const Run& run) const {
  if (run.dir.empty()) return 0;
  long n = oom_kill_line(read_all(run.dir + (v2_ ? "/memory.events" : "/memory.oom_control")));
  return n < 0 ? 0 : n - run.oom_kills_before;
}

void MemoryCgroups::close(Run& run) {
  if (run.procs_fd >= 0) ::close(run.procs_fd);
  run.procs_fd = -1;
  if (run.dir.empty()) return;
  if (v2_) write_file(run.dir + "/cgroup.kill", "1");
  // (v1: the run's pid namespace or uid sweep has killed its processes; they may take a moment to be gone)
  for (int i = 0; i < 200 && ::rmdir(run.dir.c_str()) != 0 && errno == EBUSY; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  run.dir.clear();
}

MemoryCgroups::~MemoryCgroups() {
  if (!base_.empty()) ::rmdir(base_.c_str());
}

}  // namespace judge
