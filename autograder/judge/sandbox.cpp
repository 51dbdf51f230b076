// The sandbox around everything the submission makes run (sandbox.hpp): the command that wraps a process in it, its
// environment, a run and the worker server, the disk a run may fill, and what is left of them afterwards. Its
// set-up, once per judge, is sandbox_setup.cpp.
#include "sandbox.hpp"

#include <grp.h>
#include <linux/keyctl.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <thread>

namespace judge {
namespace fs = std::filesystem;
using json = nlohmann::json;

bool host_variable_allowed(const std::string& name) {
  static const char* const names[] = {
      // the search path (gcc finds `as` and `ld` on it) and the locale
      "PATH", "LANG", "LANGUAGE", "TZ", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY",
      "LC_MESSAGES", "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION",
      // where the CUDA driver library is (some GPU images) and which devices the grade may use
      "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_PATH", "CUDA_MODULE_LOADING",
      "TRITON_LIBCUDA_PATH",
      // where the course's Python finds torch (an installed torch outside a venv), and its text encoding
      "PYTHONPATH", "PYTHONHOME", "PYTHONIOENCODING", "PYTHONUTF8",
      // thread counts the grading host chose (parallel grades share its cores)
      "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool judge_variable_allowed(const std::string& name) {
  static const char* const names[] = {
      "HOME", "USER", "LOGNAME", "TMPDIR", "XDG_CACHE_HOME", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR",
      "CCACHE_DIR", "CCACHE_BASEDIR", "CCACHE_NOHASHDIR", "CCACHE_SLOPPINESS", "CUDA_VISIBLE_DEVICES",
      "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED",
      // a Python-defined exercise's CPU runs: Triton kernels run through Triton's interpreter (chapter 11)
      "TRITON_INTERPRET",
      // memcheck's runs: every tensor its own allocation, so a read past one is outside it (mm16_plan.cpp)
      "PYTORCH_NO_CUDA_MEMORY_CACHING"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

std::map<std::string, std::string> submission_environment() {
  std::map<std::string, std::string> env;
  for (auto& [k, v] : current_environment())
    if (host_variable_allowed(k)) env[k] = v;
  return env;
}

std::vector<std::string> Sandbox::bwrap_prefix(const ProcessSpec& spec, const fs::path& scratch,
                                               const std::vector<fs::path>& read_only, const fs::path& compiler_cache,
                                               bool as_init) const {
  std::vector<std::string> argv = {bwrap_, "--die-with-parent", "--new-session"};
  if (as_init) argv.push_back("--as-pid-1");
  if (geteuid() == 0)
    argv.insert(argv.end(),
                {"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"});
  else
    argv.push_back("--unshare-all");
  // Folders bwrap would create on the way to a mount point copy the host's mode (/root is 0700): create them
  // first, 0755, so the unprivileged uid can reach what is mounted below them.
  std::vector<fs::path> mounted, made;
  auto mount = [&](std::vector<std::string> how, const fs::path& dest) {
    fs::path cur = "/";
    for (auto it = dest.begin(); it != dest.end(); ++it) {
      if (*it == "/") continue;
      cur /= *it;
      if (cur == dest) break;
      bool exists = std::find(made.begin(), made.end(), cur) != made.end();
      for (auto& m : mounted) exists = exists || inside(cur, m);
      if (!exists) {
        argv.insert(argv.end(), {"--perms", "0755", "--dir", cur.string()});
        made.push_back(cur);
      }
    }
    argv.insert(argv.end(), how.begin(), how.end());
    // a bound folder brings its contents; a fresh tmpfs/proc/dev mount point is empty below itself
    if (how[0] == "--ro-bind" || how[0] == "--bind")
      mounted.push_back(dest);
    else
      made.push_back(dest);
  };
  // The fresh /proc, /dev and /tmp first: a toolchain folder under /tmp (a clone in /tmp) is bound over them.
  mount({"--proc", "/proc"}, "/proc");
  mount({"--dev", "/dev"}, "/dev");
  // writable by the sandbox uid (nvcc's temp files), and bounded: a tmpfs lives in the host's memory, which every
  // grade of a batch shares
  mount({"--perms", "01777", "--size", std::to_string(tmp_bytes_), "--tmpfs", "/tmp"}, "/tmp");
  std::error_code ec;
  for (auto& p : system_ro_) {
    if (fs::is_symlink(p, ec))
      mount({"--symlink", fs::read_symlink(p, ec).string(), p.string()}, p);
    else
      mount({"--ro-bind", p.string(), p.string()}, p);
  }
  if (fs::exists("/sys", ec)) mount({"--ro-bind", "/sys", "/sys"}, "/sys");
  for (auto& e : fs::directory_iterator("/dev", ec))
    if (e.path().filename().string().rfind("nvidia", 0) == 0)
      argv.insert(argv.end(), {"--dev-bind", e.path().string(), e.path().string()});
  for (auto& p : read_only) mount({"--ro-bind", p.string(), p.string()}, p);
  mount({"--bind", scratch.string(), scratch.string()}, scratch);
  if (!compiler_cache.empty()) mount({"--bind", compiler_cache.string(), compiler_cache.string()}, compiler_cache);
  argv.insert(argv.end(), {"--chdir", spec.cwd.empty() ? scratch.string() : spec.cwd, "--"});
  return argv;
}

std::vector<std::string> Sandbox::limits_prefix(const ProcessSpec& spec) const {
  std::vector<std::string> argv;
  argv.push_back(prlimit_);
  if (limit_nproc_) argv.push_back("--nproc=" + std::to_string(nproc_));
  argv.push_back("--fsize=" + std::to_string(fsize_bytes_));
  argv.push_back("--core=0");
  // a compiler never initialises CUDA: its address space is capped on every machine
  if (spec.compiler)
    argv.push_back("--as=" + std::to_string(compile_memory_bytes_));
  else if (limit_memory_)
    argv.push_back("--as=" + std::to_string(memory_bytes_));
  argv.push_back("--");
  return argv;
}

std::vector<std::string> Sandbox::command(const ProcessSpec& spec, const fs::path& scratch,
                                          const std::vector<fs::path>& read_only, const fs::path& compiler_cache,
                                          int uid, bool as_init) const {
  if (uid < 0) uid = uid_;
  std::vector<std::string> argv;
  if (use_bwrap_) argv = bwrap_prefix(spec, scratch, read_only, compiler_cache, as_init);
  if (drop_uid_)
    argv.insert(argv.end(), {setpriv_, "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
                             "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"});
  if (limits_) {
    auto bounds = limits_prefix(spec);
    argv.insert(argv.end(), bounds.begin(), bounds.end());
  }
  auto first = spec.argv.begin();
  // The shared compiler cache is not writable from inside (one submission could poison another's build); a
  // submission's own cache is (its regrades then recompile only what changed).
  if ((use_bwrap_ || drop_uid_) && compiler_cache.empty() && first != spec.argv.end() &&
      fs::path(*first).filename() == "ccache")
    ++first;
  argv.insert(argv.end(), first, spec.argv.end());
  return argv;
}

namespace {
// Whether any process (a zombie included) belongs to `uid`: /proc/PID is owned by the process's uid.
bool any_process_of(int uid) {
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat st;
    if (::stat(e.path().c_str(), &st) == 0 && static_cast<int>(st.st_uid) == uid) return true;
  }
  return false;
}
}  // namespace

void Sandbox::sweep_uid(int uid) const {
  if (!drop_uid_) return;
  if (uid < 0) uid = uid_;
  // kill(-1) reports success while any other process exists at all, so "none left" is read from /proc instead.
  // Until none is left: hundreds of killed processes (a fork bomb) can take a moment to finish dying.
  for (int round = 0; round < 500 && any_process_of(uid); ++round) {
    pid_t pid = fork();
    if (pid == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(1);
      kill(-1, SIGKILL);
      _exit(0);
    }
    if (pid > 0) waitpid(pid, nullptr, 0);
    usleep(10000);
  }
  empty_keyrings_of(uid);  // after every run: nothing of it is left for the next one, of any exercise
}

// Keyrings belong to a uid, not to a process or a mount namespace: a key left by one run could be read by the next,
// through any sandbox (chapter 7's harness would tell its runs apart by it). Nothing to do when submission code
// runs as the judge's own uid (those keys are the user's, and the protections list says the uid protection is off).
void Sandbox::empty_keyrings() const {
  empty_keyrings_of(uid_);
  empty_keyrings_of(server_uid_);
}

void Sandbox::empty_keyrings_of(int uid) const {
  if (!drop_uid_) return;
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(1);
    long persistent = syscall(SYS_keyctl, KEYCTL_GET_PERSISTENT, -1L, static_cast<long>(KEY_SPEC_USER_KEYRING));
    if (persistent > 0) {
      syscall(SYS_keyctl, KEYCTL_CLEAR, persistent);
      syscall(SYS_keyctl, KEYCTL_INVALIDATE, persistent);
    }
    for (long ring : {static_cast<long>(KEY_SPEC_USER_KEYRING), static_cast<long>(KEY_SPEC_USER_SESSION_KEYRING)}) {
      syscall(SYS_keyctl, KEYCTL_CLEAR, ring);
      syscall(SYS_keyctl, KEYCTL_INVALIDATE, ring);  // the kernel makes a new, empty one if the uid asks again
    }
    _exit(0);
  }
  if (pid > 0) waitpid(pid, nullptr, 0);
}

void Sandbox::kill_leftovers(const fs::path& work_dir) const {
  sweep_uid();
  sweep_uid(server_uid_);  // the worker server's
  if (work_dir.empty()) return;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == getpid()) continue;
    struct stat st;
    if (::stat(e.path().c_str(), &st) != 0 || st.st_uid != geteuid()) continue;
    std::error_code link_ec;
    fs::path cwd = fs::read_symlink(e.path() / "cwd", link_ec);
    if (!link_ec && inside(cwd, work_dir)) kill(pid, SIGKILL);
  }
}

ProcessResult Sandbox::run(ProcessSpec spec, const fs::path& scratch, const std::vector<fs::path>& read_only,
                           const fs::path& compiler_cache) {
  std::error_code ec;
  if (!use_bwrap_) fs::create_directories(scratch / ".cache", ec);  // the run's caches without bubblewrap (below)
  if (drop_uid_) {
    for (const fs::path& own : {scratch, compiler_cache}) {
      if (own.empty()) continue;
      lchown(own.c_str(), uid_, uid_);
      for (auto& e : fs::recursive_directory_iterator(own, ec)) lchown(e.path().c_str(), uid_, uid_);
    }
  }
  spec.env = environment(spec.env, scratch);
  if (compiler_cache.empty())
    spec.env.erase("CCACHE_DIR");
  else
    spec.env["CCACHE_DIR"] = compiler_cache.string();
  spec.argv = command(spec, scratch, read_only, compiler_cache);
  MemoryCgroups::Run cgroup;  // a worker's host memory (a compiler's is capped by RLIMIT_AS on every machine)
  if (!spec.compiler) {
    cgroup = cgroups_.open();
    spec.watch = disk_watch(scratch);
  }
  spec.cgroup_procs_fd = cgroup.procs_fd;
  ProcessResult r = run_process(spec);
  // bubblewrap reports a child killed by signal N as exit status 128+N: say it as the signal it was.
  if (use_bwrap_ && r.exited && r.exit_code > 128 && r.exit_code < 128 + 65) {
    r.exited = false;
    r.term_signal = r.exit_code - 128;
  }
  sweep_uid();
  r.memory_limit = cgroups_.oom_kills(cgroup) > 0;
  cgroups_.close(cgroup);
  remove_odd_files(scratch);  // the judge reads files from here next
  return r;
}

std::function<std::string()> Sandbox::disk_watch(const fs::path& folder) const {
  const unsigned long long left = grade_disk_bytes_ > grade_disk_used_ ? grade_disk_bytes_ - grade_disk_used_ : 0;
  const bool grade_binds = left < disk_bytes_;
  const unsigned long long limit = std::min(disk_bytes_, left);
  const unsigned long long grade_mib = grade_disk_bytes_ >> 20;
  return [folder, limit, grade_binds, grade_mib]() -> std::string {
    unsigned long long bytes = 0;
    std::size_t entries = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (++entries > 10000)
        return "it made more than 10,000 files and folders in its run folder (the limit of a worker run)";
      struct stat st;
      if (::lstat(it->path().c_str(), &st) == 0) bytes += static_cast<unsigned long long>(st.st_blocks) * 512;
      if (bytes > limit)
        return grade_binds ? "the worker runs of this grade wrote more than " + std::to_string(grade_mib) +
                                 " MiB to their folders together (the limit of a grade, every run counted)"
                           : "it wrote more than " + std::to_string(limit >> 20) +
                                 " MiB to its run folder (the limit of a worker run, all files together)";
    }
    return "";
  };
}

unsigned long long Sandbox::folder_bytes(const fs::path& folder) {
  unsigned long long bytes = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) == 0) bytes += static_cast<unsigned long long>(st.st_blocks) * 512;
  }
  return bytes;
}

void Sandbox::remove_odd_files(const fs::path& folder) {
  std::error_code ec;
  std::vector<fs::path> odd;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    auto st = it->symlink_status(ec);
    if (!fs::is_regular_file(st) && !fs::is_directory(st)) odd.push_back(it->path());
  }
  for (auto& p : odd) fs::remove(p, ec);
}

std::map<std::string, std::string> Sandbox::environment(const std::map<std::string, std::string>& requested,
                                                        const fs::path& scratch) const {
  // The allowlist, then the caller's settings (allowed names only), then the folders of this run.
  std::map<std::string, std::string> env = submission_environment();
  for (auto& [k, v] : requested)
    if (host_variable_allowed(k) || judge_variable_allowed(k)) env[k] = v;
  env["HOME"] = scratch.string();
  // The sandbox uid has no passwd entry: tools that ask for a user name (torch.compile's cache) read these first.
  env["USER"] = env["LOGNAME"] = "grader";
  // Caches live in the run's own folders: nothing one run writes there is read by another run or another
  // submission (torch.compile's default is /tmp/torchinductor_USER, shared where /tmp is the host's).
  // (TMPDIR: bubblewrap's /tmp is a tmpfs of the run's own; without it, the host's /tmp, as a short path for the
  // sockets some tools make there.)
  fs::path cache = use_bwrap_ ? fs::path("/tmp") : scratch / ".cache";
  env["TMPDIR"] = "/tmp";
  env["XDG_CACHE_HOME"] = (cache / "xdg").string();
  env["TORCHINDUCTOR_CACHE_DIR"] = (cache / "torchinductor").string();
  env["TRITON_CACHE_DIR"] = (cache / "triton").string();
  return env;
}

bool Sandbox::start_server(ServerProcess& server, ProcessSpec spec, const fs::path& live,
                           const std::vector<fs::path>& read_only) {
  if (!use_bwrap_ || !drop_uid_) return false;
  std::error_code ec;
  fs::create_directories(live, ec);
  fs::permissions(live,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                      fs::perms::others_exec,
                  ec);
  sweep_uid(server_uid_);  // a server of an earlier judge with this pid, long gone, left nothing running
  spec.env = environment(spec.env, live);
  spec.env.erase("CCACHE_DIR");
  spec.argv = command(spec, live, read_only, {}, server_uid_, true);
  cgroups_.close(server_cgroup_);
  server_cgroup_ = cgroups_.open();
  spec.cgroup_procs_fd = server_cgroup_.procs_fd;
  return server.start(spec);
}

std::map<std::string, std::string> Sandbox::server_folder(const fs::path& folder,
                                                          const std::map<std::string, std::string>& env) const {
  std::error_code ec;
  lchown(folder.c_str(), server_uid_, server_uid_);
  for (auto& e : fs::recursive_directory_iterator(folder, ec)) lchown(e.path().c_str(), server_uid_, server_uid_);
  auto out = environment(env, folder);
  out.erase("CCACHE_DIR");
  return out;
}

void Sandbox::stop_server(ServerProcess& server, double grace_s) const {
  server.stop(grace_s);
  sweep_uid(server_uid_);
  cgroups_.close(server_cgroup_);
}

}  // namespace judge
