// Where submission code runs: the compiler on the submission's sources and the worker that loads its library.
//
// Every such process is started through Sandbox::run, which (as far as this machine allows) puts it in a
// bubblewrap sandbox (no network, read-only system, only a scratch folder writable, the course's solutions, planted
// cases and hidden tests not mounted), as an unprivileged uid of its own, under limits (processes, file size,
// memory on CPU-only workers). What this machine does not allow is switched off LOUDLY: protections() lists every
// protection with on/off and the reason, and the table, rows.json and results.json print it.
//
// The environment of every process it starts is an explicit allowlist (submission_environment below): nothing else
// of the grading host's environment reaches submission code.
//
// Environment: COURSE_SANDBOX=off  grade without bubblewrap (to test the degraded path on a machine that has it)
//              COURSE_SANDBOX_UID=N  the uid the sandboxed processes run as (default: 1000000 + twice the judge's
//                                    pid); the worker server's sandbox runs as N + 1
//              COURSE_SANDBOX_MEMORY_MB=N  RLIMIT_AS of a CPU-only worker (default 8192)
//              COURSE_SANDBOX_COMPILE_MEMORY_MB=N  RLIMIT_AS of a compile or link, on every machine (default 8192)
//              COURSE_SANDBOX_TMP_MB=N  the size of the sandbox's /tmp, a tmpfs in the host's memory (default 1024)
//              COURSE_SANDBOX_DISK_MB=N  bytes a worker run may write to its folder, all files together (2048)
//              COURSE_SANDBOX_GRADE_DISK_MB=N  bytes the worker runs of one grade may write in all, every run's
//                                    folder together (4096): a run past it is stopped like one past its own limit
//              COURSE_SANDBOX_WORKER_MEMORY_MB=N  host memory of one worker run, CUDA workers included: a memory
//                                    cgroup of its own (default 16384); COURSE_SANDBOX_CGROUP=off: none
#pragma once
#include <filesystem>
#include <map>
#include "json.hpp"
#include <string>
#include <vector>
#include "memory_cgroup.hpp"

#include "process.hpp"

namespace judge {

// The variables of the grading host's environment that submission code may see (the compiler, the linker, nvcc,
// cuobjdump, the worker): the search path, the locale, where the CUDA driver and devices are, where Python finds its
// packages, the BLAS/OpenMP thread settings. Nothing else of the host is passed (no tokens, no credentials, no
// LD_PRELOAD, no NVCC_APPEND_FLAGS or CCACHE_PREFIX of the host's).
bool host_variable_allowed(const std::string& name);
// Variables the judge or the sandbox sets itself, per run (never taken from the host): HOME, USER, LOGNAME, TMPDIR,
// the caches (XDG_CACHE_HOME, TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR, CCACHE_*), CUDA_VISIBLE_DEVICES="" for a
// run that hides the GPU, PYTHONDONTWRITEBYTECODE, PYTHONUNBUFFERED.
bool judge_variable_allowed(const std::string& name);
// The allowlisted part of this process's environment: what a sandboxed run starts from.
std::map<std::string, std::string> submission_environment();

struct Protection {
  std::string id;    // e.g. "no_network"
  std::string what;  // one line: what it stops
  bool on = false;
  std::string reason;  // why it is off (or how it is done, when on)
};

class Sandbox {
 public:
  static Sandbox& get();
  // Decides, once, which protections this machine allows. `toolchain` is build/toolchain.json; `course_root` is
  // the checkout whose solutions/ and autograder/planted/ must never be mounted.
  // `work_dir` (where the scratch folders go) matters only without bubblewrap: the uid must be able to reach it.
  void configure(const nlohmann::json& toolchain, const std::filesystem::path& course_root,
                 const std::filesystem::path& work_dir = {});

  // Runs `spec` (a compiler, linker or the worker) with `scratch` as its only writable folder and `read_only` as
  // extra read-only folders, then kills whatever it left running and removes anything in `scratch` that is not a
  // plain file or folder (a FIFO or symlink planted to hang or mislead the judge). `compiler_cache`, if given, is
  // this submission's own ccache folder, mounted writable: without it a compile runs without ccache.
  // Its environment is submission_environment() with spec.env's entries on top, only the names that
  // host_variable_allowed or judge_variable_allowed accept (any other is dropped); then HOME, USER, TMPDIR and the
  // caches are set to folders of this run.
  ProcessResult run(ProcessSpec spec, const std::filesystem::path& scratch,
                    const std::vector<std::filesystem::path>& read_only = {},
                    const std::filesystem::path& compiler_cache = {});

  // The worker server (worker_server.py) of one grade: a sandbox like run()'s, as a uid of its own (uid() + 1, so the
  // sweeps after compiles and cold workers never reach it) and as the init of its pid namespace. `live` is the only
  // writable folder it gets (root's, not writable itself: each request's folder inside it is made the server uid's by
  // server_folder()). False where this machine lacks bubblewrap or a uid of the sandbox's own: a server could not
  // keep one group's leftovers from the next, so every group then runs in a fresh sandbox (run()).
  bool start_server(ServerProcess& server, ProcessSpec spec, const std::filesystem::path& live,
                    const std::vector<std::filesystem::path>& read_only);
  // Makes `folder` (inside the server's live folder) the server uid's, and gives the environment a worker in it would
  // have had from run().
  std::map<std::string, std::string> server_folder(const std::filesystem::path& folder,
                                                   const std::map<std::string, std::string>& env) const;
  // After each request: the server uid's keyrings emptied. Stopping: the server (given `grace_s` to end on its own
  // once its stdin closes), then every process of its uid.
  void after_server_request() const { empty_keyrings_of(server_uid_); }
  void stop_server(ServerProcess& server, double grace_s = 0) const;
  // Watches a worker's writable folder (ProcessSpec::watch): "" while its files take at most the bytes a run may
  // write (COURSE_SANDBOX_DISK_MB, 2048) in at most 10,000 entries, else why it must stop. RLIMIT_FSIZE bounds one
  // file, the tmpfs /tmp bounds itself; this bounds the sum on disk, up to what is written between two looks.
  // The grade's budget (COURSE_SANDBOX_GRADE_DISK_MB) bounds every run's folder together: a run may write what is
  // left of it after the runs before it (count_run_bytes), if that is less than its own limit.
  std::function<std::string()> disk_watch(const std::filesystem::path& folder) const;
  // After a run: what its folder holds counts against the grade's budget (even once pruned: it was written).
  void count_run_bytes(const std::filesystem::path& folder) { grade_disk_used_ += folder_bytes(folder); }
  // The bytes on disk of every file below `folder` (blocks, not sizes: a sparse file counts what it holds).
  static unsigned long long folder_bytes(const std::filesystem::path& folder);
  // The kernel's OOM kills inside the worker server's memory cgroup so far (a request's child over the limit).
  long server_oom_kills() const { return cgroups_.oom_kills(server_cgroup_); }
  unsigned long long worker_memory_mb() const { return cgroups_.limit_bytes() >> 20; }
  // Removes anything in `folder` that is not a plain file or folder (a FIFO or symlink planted to hang or mislead).
  static void remove_odd_files(const std::filesystem::path& folder);

  const std::vector<Protection>& protections() const { return protections_; }
  unsigned long long compile_memory_mb() const { return compile_memory_bytes_ >> 20; }
  bool all_on() const;
  nlohmann::json protections_json() const;
  bool bubblewrap() const { return use_bwrap_; }
  // After the judge's checking process died mid-run: kills what it had started that may still run (processes of
  // the sandbox uid, and of the judge's uid whose working folder is under `work_dir`).
  void kill_leftovers(const std::filesystem::path& work_dir) const;
  int uid() const { return drop_uid_ ? uid_ : -1; }  // -1: submission code runs as the judge's uid
  int server_uid() const { return drop_uid_ && use_bwrap_ ? server_uid_ : -1; }  // the worker server's, if it can run
  // Empties and discards the sandbox uid's kernel keyrings (done after every run; chapter 7 also before its first).
  void empty_keyrings() const;  // of both uids (run()'s and the worker server's)

 private:
  bool configured_ = false;
  bool use_bwrap_ = false, drop_uid_ = false, limit_memory_ = false, limit_nproc_ = false, limits_ = false;
  int uid_ = -1;
  int server_uid_ = -1;  // the worker server's: uid_ + 1 (configure)
  unsigned long long memory_bytes_ = 0, compile_memory_bytes_ = 0, fsize_bytes_ = 0, tmp_bytes_ = 0, nproc_ = 0,
                     disk_bytes_ = 0, grade_disk_bytes_ = 0, grade_disk_used_ = 0;
  std::string bwrap_, setpriv_, prlimit_;
  std::filesystem::path course_root_;
  std::vector<std::filesystem::path> system_ro_;  // read-only binds every sandboxed process gets
  std::vector<Protection> protections_;
  mutable MemoryCgroups cgroups_;             // host memory of every worker run (memory_cgroup.hpp)
  mutable MemoryCgroups::Run server_cgroup_;  // the worker server's, for its whole life

  std::vector<std::string> command(const ProcessSpec& spec, const std::filesystem::path& scratch,
                                   const std::vector<std::filesystem::path>& read_only,
                                   const std::filesystem::path& compiler_cache = {}, int uid = -1,
                                   bool as_init = false) const;
  // The parts of command(): bubblewrap's mounts, and prlimit's bounds.
  std::vector<std::string> bwrap_prefix(const ProcessSpec& spec, const std::filesystem::path& scratch,
                                        const std::vector<std::filesystem::path>& read_only,
                                        const std::filesystem::path& compiler_cache, bool as_init) const;
  std::vector<std::string> limits_prefix(const ProcessSpec& spec) const;
  std::map<std::string, std::string> environment(const std::map<std::string, std::string>& requested,
                                                 const std::filesystem::path& scratch) const;
  // The steps of configure() (sandbox_setup.cpp), each returning what the reports say of it when it is off.
  std::string mount_toolchain(const nlohmann::json& tc);
  std::string start_bubblewrap(const nlohmann::json& tc);
  std::string choose_uid(const nlohmann::json& tc, const std::filesystem::path& work_dir, bool root);
  std::string set_limits(bool root);
  void list_protections(const std::string& refused, const std::string& bwrap_reason, const std::string& uid_reason,
                        const std::string& cgroup_reason, bool root);
  // True when `p` is inside `dir` (or is it), lexically.
  static bool inside(const std::filesystem::path& p, const std::filesystem::path& dir);
  void sweep_uid(int uid = -1) const;
  void empty_keyrings_of(int uid) const;
};

}  // namespace judge
