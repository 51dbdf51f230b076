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
//              COURSE_SANDBOX_UID=N  the uid the sandboxed processes run as (default: 1000000 + the judge's pid)
//              COURSE_SANDBOX_MEMORY_MB=N  RLIMIT_AS of a CPU-only worker (default 8192)
#pragma once
#include <filesystem>
#include <map>
#include "json.hpp"
#include <string>
#include <vector>

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
  std::string id;      // e.g. "no_network"
  std::string what;    // one line: what it stops
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

  const std::vector<Protection>& protections() const { return protections_; }
  bool all_on() const;
  nlohmann::json protections_json() const;
  bool bubblewrap() const { return use_bwrap_; }
  // After the judge's checking process died mid-run: kills what it had started that may still run (processes of
  // the sandbox uid, and of the judge's uid whose working folder is under `work_dir`).
  void kill_leftovers(const std::filesystem::path& work_dir) const;
  int uid() const { return drop_uid_ ? uid_ : -1; }  // -1: submission code runs as the judge's uid
  // Empties and discards the sandbox uid's kernel keyrings (done after every run; chapter 7 also before its first).
  void empty_keyrings() const;

 private:
  bool configured_ = false;
  bool use_bwrap_ = false, drop_uid_ = false, limit_memory_ = false, limit_nproc_ = false, limits_ = false;
  int uid_ = -1;
  unsigned long long memory_bytes_ = 0, fsize_bytes_ = 0, nproc_ = 0;
  std::string bwrap_, setpriv_, prlimit_;
  std::filesystem::path course_root_;
  std::vector<std::filesystem::path> system_ro_;  // read-only binds every sandboxed process gets
  std::vector<Protection> protections_;

  std::vector<std::string> command(const ProcessSpec& spec, const std::filesystem::path& scratch,
                                   const std::vector<std::filesystem::path>& read_only,
                                   const std::filesystem::path& compiler_cache = {}) const;
  void sweep_uid() const;
};

}  // namespace judge
