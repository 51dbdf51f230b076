// The sandbox's set-up (Sandbox::configure): what every sandboxed process may read (the system and the toolchain,
// never the course's secrets), whether bubblewrap can start here, the uid submission code runs as, the limits, and
// the list of protections the reports show (on or off, and why).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "sandbox.hpp"

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

// Whether a uid that owns nothing could reach `p` (every folder above it searchable by others, `p` readable).
bool world_reachable(const fs::path& p) {
  std::error_code ec;
  fs::path real = fs::canonical(p, ec);
  if (ec) return false;
  fs::path cur;
  for (auto& part : real) {
    cur /= part;
    struct stat st{};
    if (stat(cur.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH)) return false;
  }
  struct stat st{};
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

Sandbox& Sandbox::get() {
  static Sandbox s;
  return s;
}

bool Sandbox::inside(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_normal().lexically_relative(dir.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
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
  const std::string refused = mount_toolchain(tc);
  const std::string bwrap_reason = start_bubblewrap(tc);
  const std::string uid_reason = choose_uid(tc, work_dir, root);
  const std::string cgroup_reason = set_limits(root);
  list_protections(refused, bwrap_reason, uid_reason, cgroup_reason, root);
}

// What the sandboxed processes may read: the system and the toolchain, never the course's secrets. The folders
// refused because they hold the course (" PATH" each), or "".
std::string Sandbox::mount_toolchain(const json& tc) {
  std::vector<fs::path> wanted;
  for (const char* p : {"/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"})
    wanted.push_back(p);
  auto add_tree_of = [&](const std::string& exe, int up) {
    if (exe.empty()) return;
    fs::path p = fs::path(exe).lexically_normal();
    for (int i = 0; i < up && p.has_parent_path(); ++i) p = p.parent_path();
    wanted.push_back(p);
    std::error_code ec;
    fs::path real = fs::canonical(p, ec);
    if (!ec) wanted.push_back(real);
  };
  // a venv: bin/python in a folder with pyvenv.cfg; otherwise the python's prefix. The worker's python, and the older
  // torch's that abi.cross_version runs it with.
  for (const char* key : {"python", "older_torch_python"}) {
    const std::string python = tc.value(key, "");
    if (python.empty()) continue;
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
  return refused;
}

// bubblewrap, when it is installed, allowed and can start a sandbox here; else why not.
std::string Sandbox::start_bubblewrap(const json& tc) {
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
  return bwrap_reason;
}

// The uid submission code runs as: one of the sandbox's own where the judge is root and can drop to it; what the
// reports say of it.
std::string Sandbox::choose_uid(const json& tc, const fs::path& work_dir, bool root) {
  const std::string python = tc.value("python", "");
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
    if (unreachable.empty())
      drop_uid_ = true;
    else
      uid_reason = "submission code runs as root: an unprivileged uid cannot read" + unreachable;
  } else {
    drop_uid_ = true;
  }
  if (drop_uid_) uid_reason = "uid " + std::to_string(uid_) + " (setpriv), no capabilities, no new privileges";
  return uid_reason;
}

// The limits of every sandboxed process; why the memory cgroups are off, if they are.
std::string Sandbox::set_limits(bool root) {
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
  return cgroup_reason;
}

void Sandbox::list_protections(const std::string& refused, const std::string& bwrap_reason,
                               const std::string& uid_reason, const std::string& cgroup_reason, bool root) {
  auto add = [&](std::string id, std::string what, bool on, std::string reason) {
    protections_.push_back({std::move(id), std::move(what), on, std::move(reason)});
  };
  std::string no_bwrap = "no sandbox: " + bwrap_reason;
  add("sandbox", "bubblewrap sandbox around the compiler and the worker", use_bwrap_,
      use_bwrap_
          ? bwrap_ + (root ? ": pid, net, ipc, uts namespaces; no user namespace (the uid drop needs the real uid)"
                           : ": --unshare-all")
          : bwrap_reason);
  add("no_network", "submission code cannot open network connections", use_bwrap_,
      use_bwrap_ ? "own network namespace (loopback only)" : no_bwrap);
  add("solutions_hidden", "reference solutions, planted cases and hidden tests are not mounted at compile or run time",
      use_bwrap_ && refused.empty(),
      !use_bwrap_       ? no_bwrap
      : refused.empty() ? "only the system, the toolchain and a scratch folder are mounted"
                        : "a toolchain folder contains the course:" + refused + " (not mounted)");
  add("read_only_system", "only a scratch folder is writable", use_bwrap_,
      use_bwrap_ ? "system and toolchain mounted read-only" : no_bwrap);
  add("unprivileged_uid", "submission code does not run as root", drop_uid_ || !root, uid_reason);
  add("kill_process_tree", "nothing the submission starts outlives its run", use_bwrap_ || drop_uid_,
      use_bwrap_  ? "pid namespace (dies with its first process) + process group + uid sweep"
      : drop_uid_ ? "process group + kill every process of the sandbox uid"
                  : "process group only: a process that calls setsid() can escape");
  add("environment_allowlist", "submission code sees only allowlisted variables of the grading host's environment",
      true,
      "PATH, the locale, CUDA device and driver paths, PYTHONPATH, thread counts; HOME, TMPDIR, USER and the "
      "caches are folders of the run");
  add("wall_clock_timeout", "a run that does not finish is killed", true, "per compile and per worker run");
  add("output_cap", "captured output is capped", true, "64 KiB per stream kept, the rest read and dropped");
  add("limit_processes", "a fork bomb is stopped (RLIMIT_NPROC)", limit_nproc_,
      limit_nproc_       ? std::to_string(nproc_) + " processes/threads"
      : prlimit_.empty() ? "prlimit (util-linux) is not installed"
                         : "RLIMIT_NPROC is ignored for root and there is no uid of the sandbox's own");
  add("limit_file_size", "a file larger than the limit cannot be written (RLIMIT_FSIZE)", limits_,
      limits_ ? std::to_string(fsize_bytes_ >> 20) + " MiB" +
                    (use_bwrap_ ? "; /tmp (in memory) holds " + std::to_string(tmp_bytes_ >> 20) + " MiB in all" : "")
              : "prlimit (util-linux) is not installed");
  const std::string compilers = "; the compiler and linker: " + std::to_string(compile_memory_bytes_ >> 20) + " MiB";
  add("limit_disk", "the bytes a worker run writes to its folder are capped in all, not only per file", true,
      std::to_string(disk_bytes_ >> 20) + " MiB and 10,000 entries per run, " +
          std::to_string(grade_disk_bytes_ >> 20) +
          " MiB for every run of a grade together, looked at 4 times a second (a run is stopped past it, having "
          "written at most what it writes between two looks); after the grade, what the runs wrote is removed");
  add("limit_host_memory", "host memory of every worker run, a CUDA worker's included, is capped (a memory cgroup)",
      cgroups_.on(),
      cgroups_.on() ? std::to_string(cgroups_.limit_bytes() >> 20) + " MiB per run (" + cgroups_.where() +
                          "); the OOM killer stops the run's own processes only"
                    : cgroup_reason);
  add("limit_memory", "address space of a CPU-only worker is capped (RLIMIT_AS)", limit_memory_,
      limit_memory_ ? std::to_string(memory_bytes_ >> 20) + " MiB" + compilers
      : !limits_    ? "prlimit (util-linux) is not installed"
                    : "a CUDA device is visible: torch reserves ~18 GB of address space at CUDA init, so "
                      "RLIMIT_AS cannot be used for a worker" +
                          compilers);
}

bool Sandbox::all_on() const {
  return std::all_of(protections_.begin(), protections_.end(), [](const Protection& p) { return p.on; });
}

json Sandbox::protections_json() const {
  json out = json::array();
  for (auto& p : protections_) out.push_back({{"id", p.id}, {"what", p.what}, {"on", p.on}, {"detail", p.reason}});
  return out;
}

}  // namespace judge
