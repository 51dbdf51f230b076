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

namespace {
bool is_executable(const std::string& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }

std::string find_tool(const char* name) {
  for (const char* dir : {"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"}) {
    std::string p = std::string(dir) + "/" + name;
    if (is_executable(p)) return p;
  }
  return "";
}

// True when `p` is inside `dir` (or is it).
bool inside(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_normal().lexically_relative(dir.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

// Whether a uid that owns nothing could reach `p` (every folder above it searchable by others, `p` readable).
bool world_reachable(const fs::path& p) {
  std::error_code ec;
  fs::path real = fs::canonical(p, ec);
  if (ec) return false;
  fs::path cur;
  for (auto& part : real) {
    cur /= part;
    struct stat st {};
    if (stat(cur.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH)) return false;
  }
  struct stat st {};
  return stat(real.c_str(), &st) == 0 && (st.st_mode & S_IROTH);
}

bool cuda_device_nodes() {
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/dev", ec))
    if (e.path().filename().string().rfind("nvidia", 0) == 0) return true;
  return false;
}

unsigned long long env_number(const char* name, unsigned long long fallback) {
  const char* v = getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  return (end && *end == 0) ? n : fallback;
}
}  // namespace

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

Sandbox& Sandbox::get() {
  static Sandbox s;
  return s;
}

void Sandbox::configure(const json& tc, const fs::path& course_root, const fs::path& work_dir) {
  if (configured_) return;
  configured_ = true;
  course_root_ = fs::weakly_canonical(course_root);
  const bool root = geteuid() == 0;
  setpriv_ = find_tool("setpriv");
  prlimit_ = find_tool("prlimit");
  tmp_bytes_ = std::max<unsigned long long>(1, env_number("COURSE_SANDBOX_TMP_MB", 1024)) << 20;  // (the probe uses it)
  // Two uids per judge (run()'s and its worker server's): twice the pid, so no two judges' uids meet.
  uid_ = static_cast<int>(env_number("COURSE_SANDBOX_UID", 1000000ull + 2ull * static_cast<unsigned>(getpid())));
  server_uid_ = uid_ + 1;

  // --- what the sandboxed processes may read: the system and the toolchain, never the course's secrets ---------
  std::vector<fs::path> wanted;
  for (const char* p : {"/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) wanted.push_back(p);
  auto add_tree_of = [&](const std::string& exe, int up) {
    if (exe.empty()) return;
    fs::path p = fs::path(exe).lexically_normal();
    for (int i = 0; i < up && p.has_parent_path(); ++i) p = p.parent_path();
    wanted.push_back(p);
    std::error_code ec;
    fs::path real = fs::canonical(p, ec);
    if (!ec) wanted.push_back(real);
  };
  std::string python = tc.value("python", "");
  {  // a venv: bin/python in a folder with pyvenv.cfg; otherwise the python's prefix
    fs::path prefix = fs::path(python).parent_path().parent_path();
    add_tree_of(prefix.string(), 0);
    std::error_code ec;  // the interpreter a venv points at (e.g. pyenv's, under /root/.pyenv): its prefix too
    fs::path real = fs::canonical(python, ec);
    if (!ec) add_tree_of(real.string(), 2);
  }
  add_tree_of(tc.value("nvcc", ""), 2);
  add_tree_of(tc.value("cxx", ""), 2);
  add_tree_of(tc.value("cuobjdump", ""), 2);  // reads libraries built from submissions
  add_tree_of(tc.value("worker", ""), 1);
  // the declarations the worker holds its answers to (autograder/schemas/worker/, beside the worker's own folder)
  if (std::string worker = tc.value("worker", ""); !worker.empty())
    add_tree_of((fs::path(worker).parent_path().parent_path() / "schemas" / "worker").string(), 0);
  add_tree_of(tc.value("pch_include", ""), 1);  // the precompiled torch headers submissions compile with
  for (const char* key : {"include_dirs", "link_dirs"})
    if (tc.contains(key))
      for (auto& d : tc[key]) add_tree_of(d.get<std::string>(), 0);
  const fs::path secrets[] = {course_root_ / "solutions", course_root_ / "autograder" / "planted",
                              course_root_ / "autograder" / "hidden"};
  std::string refused;
  for (auto& p : wanted) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(p, ec)) || p == "/" ||
        std::find(system_ro_.begin(), system_ro_.end(), p) != system_ro_.end())
      continue;
    bool covered = false;  // already inside a mounted folder (e.g. /usr/local/cuda inside /usr)
    for (auto& q : system_ro_) covered = covered || (!fs::is_symlink(q, ec) && inside(p, q));
    if (covered) continue;
    bool leaks = false;
    for (auto& s : secrets) leaks = leaks || inside(s, p);
    if (leaks) {
      refused += " " + p.string();
      continue;
    }
    system_ro_.push_back(p);
  }

  // --- bubblewrap -------------------------------------------------------------------------------------------------
  const char* mode = getenv("COURSE_SANDBOX");
  std::string bwrap_reason;
  bwrap_ = tc.value("bwrap", "");
  if (bwrap_.empty() && getenv("COURSE_BWRAP")) bwrap_ = getenv("COURSE_BWRAP");
  if (mode && std::string(mode) == "off") {
    bwrap_reason = "switched off by COURSE_SANDBOX=off";
  } else if (!is_executable(bwrap_)) {
    bwrap_reason = "bubblewrap (bwrap) is not installed here (Debian: apt-get install bubblewrap)";
  } else {
    use_bwrap_ = true;  // provisionally, for the probe
    ProcessSpec probe{{"/usr/bin/true"}, submission_environment(), "/", 30, 4096};
    auto r = run_process(ProcessSpec{command(probe, "/tmp", {}), probe.env, "/", 30, 4096});
    use_bwrap_ = r.exited && r.exit_code == 0;
    if (!use_bwrap_) bwrap_reason = bwrap_ + " is installed but cannot start a sandbox here: " + r.err.substr(0, 200);
  }

  // --- the uid -------------------------------------------------------------------------------------------------
  std::string uid_reason;
  if (!root) {
    uid_reason = "runs as your own uid " + std::to_string(geteuid()) + " (not root)";
  } else if (setpriv_.empty()) {
    uid_reason = "setpriv (util-linux) is not installed: submission code would run as root";
  } else if (!use_bwrap_) {
    // Without the sandbox's own mounts, the unprivileged uid must be able to reach the toolchain itself.
    std::string unreachable;
    for (auto& p : {python, tc.value("worker", std::string()), work_dir.string()})
      if (!p.empty() && !world_reachable(p)) unreachable += " " + p;
    if (unreachable.empty()) drop_uid_ = true;
    else uid_reason = "submission code runs as root: an unprivileged uid cannot read" + unreachable;
  } else {
    drop_uid_ = true;
  }
  if (drop_uid_) uid_reason = "uid " + std::to_string(uid_) + " (setpriv), no capabilities, no new privileges";

  // --- limits --------------------------------------------------------------------------------------------------
  limits_ = !prlimit_.empty();
  nproc_ = std::max<unsigned long long>(256, 16ull * std::max(1u, std::thread::hardware_concurrency()));
  fsize_bytes_ = env_number("COURSE_SANDBOX_FSIZE_MB", 512) << 20;
  disk_bytes_ = std::max<unsigned long long>(1, env_number("COURSE_SANDBOX_DISK_MB", 2048)) << 20;
  grade_disk_bytes_ = std::max<unsigned long long>(1, env_number("COURSE_SANDBOX_GRADE_DISK_MB", 4096)) << 20;
  memory_bytes_ = env_number("COURSE_SANDBOX_MEMORY_MB", 8192) << 20;
  compile_memory_bytes_ = std::max<unsigned long long>(1, env_number("COURSE_SANDBOX_COMPILE_MEMORY_MB", 8192)) << 20;
  const char* cvd = getenv("CUDA_VISIBLE_DEVICES");
  bool no_cuda = !cuda_device_nodes() || (cvd && (std::string(cvd).empty() || std::string(cvd) == "-1"));
  limit_memory_ = limits_ && no_cuda;
  std::string cgroup_reason;
  cgroups_.configure(std::max<unsigned long long>(64, env_number("COURSE_SANDBOX_WORKER_MEMORY_MB", 16384)) << 20,
                     cgroup_reason);
  // RLIMIT_NPROC counts the processes of a uid and root ignores it: it needs a uid of the sandbox's own (root +
  // setpriv) or a user namespace (bubblewrap run by an ordinary user counts only the sandbox's processes).
  limit_nproc_ = limits_ && (drop_uid_ || (!root && use_bwrap_));

  auto add = [&](std::string id, std::string what, bool on, std::string reason) {
    protections_.push_back({std::move(id), std::move(what), on, std::move(reason)});
  };
  std::string no_bwrap = "no sandbox: " + bwrap_reason;
  add("sandbox", "bubblewrap sandbox around the compiler and the worker", use_bwrap_,
      use_bwrap_ ? bwrap_ + (root ? ": pid, net, ipc, uts namespaces; no user namespace (the uid drop needs the real uid)"
                                  : ": --unshare-all")
                 : bwrap_reason);
  add("no_network", "submission code cannot open network connections", use_bwrap_,
      use_bwrap_ ? "own network namespace (loopback only)" : no_bwrap);
  add("solutions_hidden", "reference solutions, planted cases and hidden tests are not mounted at compile or run time",
      use_bwrap_ && refused.empty(),
      !use_bwrap_ ? no_bwrap
                  : refused.empty() ? "only the system, the toolchain and a scratch folder are mounted"
                                    : "a toolchain folder contains the course:" + refused + " (not mounted)");
  add("read_only_system", "only a scratch folder is writable", use_bwrap_,
      use_bwrap_ ? "system and toolchain mounted read-only" : no_bwrap);
  add("unprivileged_uid", "submission code does not run as root", drop_uid_ || !root, uid_reason);
  add("kill_process_tree", "nothing the submission starts outlives its run", use_bwrap_ || drop_uid_,
      use_bwrap_ ? "pid namespace (dies with its first process) + process group + uid sweep"
                 : drop_uid_ ? "process group + kill every process of the sandbox uid"
                             : "process group only: a process that calls setsid() can escape");
  add("environment_allowlist", "submission code sees only allowlisted variables of the grading host's environment",
      true, "PATH, the locale, CUDA device and driver paths, PYTHONPATH, thread counts; HOME, TMPDIR, USER and the "
            "caches are folders of the run");
  add("wall_clock_timeout", "a run that does not finish is killed", true, "per compile and per worker run");
  add("output_cap", "captured output is capped", true, "64 KiB per stream kept, the rest read and dropped");
  add("limit_processes", "a fork bomb is stopped (RLIMIT_NPROC)", limit_nproc_,
      limit_nproc_ ? std::to_string(nproc_) + " processes/threads"
                   : prlimit_.empty() ? "prlimit (util-linux) is not installed"
                                      : "RLIMIT_NPROC is ignored for root and there is no uid of the sandbox's own");
  add("limit_file_size", "a file larger than the limit cannot be written (RLIMIT_FSIZE)", limits_,
      limits_ ? std::to_string(fsize_bytes_ >> 20) + " MiB" +
                    (use_bwrap_ ? "; /tmp (in memory) holds " + std::to_string(tmp_bytes_ >> 20) + " MiB in all" : "")
              : "prlimit (util-linux) is not installed");
  const std::string compilers = "; the compiler and linker: " + std::to_string(compile_memory_bytes_ >> 20) + " MiB";
  add("limit_disk", "the bytes a worker run writes to its folder are capped in all, not only per file", true,
      std::to_string(disk_bytes_ >> 20) + " MiB and 10,000 entries per run, " + std::to_string(grade_disk_bytes_ >> 20) +
          " MiB for every run of a grade together, looked at 4 times a second (a run is stopped past it, having "
          "written at most what it writes between two looks); after the grade, what the runs wrote is removed");
  add("limit_host_memory", "host memory of every worker run, a CUDA worker's included, is capped (a memory cgroup)",
      cgroups_.on(), cgroups_.on() ? std::to_string(cgroups_.limit_bytes() >> 20) + " MiB per run (" +
                                         cgroups_.where() + "); the OOM killer stops the run's own processes only"
                                   : cgroup_reason);
  add("limit_memory", "address space of a CPU-only worker is capped (RLIMIT_AS)", limit_memory_,
      limit_memory_ ? std::to_string(memory_bytes_ >> 20) + " MiB" + compilers
                    : !limits_ ? "prlimit (util-linux) is not installed"
                               : "a CUDA device is visible: torch reserves ~18 GB of address space at CUDA init, so "
                                 "RLIMIT_AS cannot be used for a worker" + compilers);
}

bool Sandbox::all_on() const {
  return std::all_of(protections_.begin(), protections_.end(), [](const Protection& p) { return p.on; });
}

json Sandbox::protections_json() const {
  json out = json::array();
  for (auto& p : protections_)
    out.push_back({{"id", p.id}, {"what", p.what}, {"on", p.on}, {"detail", p.reason}});
  return out;
}

std::vector<std::string> Sandbox::command(const ProcessSpec& spec, const fs::path& scratch,
                                          const std::vector<fs::path>& read_only,
                                          const fs::path& compiler_cache, int uid, bool as_init) const {
  if (uid < 0) uid = uid_;
  std::vector<std::string> argv;
  if (use_bwrap_) {
    argv = {bwrap_, "--die-with-parent", "--new-session"};
    if (as_init) argv.push_back("--as-pid-1");
    if (geteuid() == 0)
      argv.insert(argv.end(), {"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                               "--unshare-cgroup-try"});
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
      if (how[0] == "--ro-bind" || how[0] == "--bind") mounted.push_back(dest);
      else made.push_back(dest);
    };
    // The fresh /proc, /dev and /tmp first: a toolchain folder under /tmp (a clone in /tmp) is bound over them.
    mount({"--proc", "/proc"}, "/proc");
    mount({"--dev", "/dev"}, "/dev");
    // writable by the sandbox uid (nvcc's temp files), and bounded: a tmpfs lives in the host's memory, which every
    // grade of a batch shares
    mount({"--perms", "01777", "--size", std::to_string(tmp_bytes_), "--tmpfs", "/tmp"}, "/tmp");
    std::error_code ec;
    for (auto& p : system_ro_) {
      if (fs::is_symlink(p, ec)) mount({"--symlink", fs::read_symlink(p, ec).string(), p.string()}, p);
      else mount({"--ro-bind", p.string(), p.string()}, p);
    }
    if (fs::exists("/sys", ec)) mount({"--ro-bind", "/sys", "/sys"}, "/sys");
    for (auto& e : fs::directory_iterator("/dev", ec))
      if (e.path().filename().string().rfind("nvidia", 0) == 0)
        argv.insert(argv.end(), {"--dev-bind", e.path().string(), e.path().string()});
    for (auto& p : read_only) mount({"--ro-bind", p.string(), p.string()}, p);
    mount({"--bind", scratch.string(), scratch.string()}, scratch);
    if (!compiler_cache.empty()) mount({"--bind", compiler_cache.string(), compiler_cache.string()}, compiler_cache);
    argv.insert(argv.end(), {"--chdir", spec.cwd.empty() ? scratch.string() : spec.cwd, "--"});
  }
  if (drop_uid_)
    argv.insert(argv.end(), {setpriv_, "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
                             "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"});
  if (limits_) {
    argv.push_back(prlimit_);
    if (limit_nproc_) argv.push_back("--nproc=" + std::to_string(nproc_));
    argv.push_back("--fsize=" + std::to_string(fsize_bytes_));
    argv.push_back("--core=0");
    // a compiler never initialises CUDA: its address space is capped on every machine
    if (spec.compiler) argv.push_back("--as=" + std::to_string(compile_memory_bytes_));
    else if (limit_memory_) argv.push_back("--as=" + std::to_string(memory_bytes_));
    argv.push_back("--");
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
  if (compiler_cache.empty()) spec.env.erase("CCACHE_DIR");
  else spec.env["CCACHE_DIR"] = compiler_cache.string();
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
  fs::permissions(live, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec, ec);
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
