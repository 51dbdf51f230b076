// The judge's model of one grading run: the exercise's metadata (from the course, never from the submission),
// the submission's build, the worker groups that ran it, and the rows (one per check) with their verdicts.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include "json.hpp"
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "machine_faults.hpp"
#include "process.hpp"
#include "safetensors.hpp"

namespace judge {
namespace fs = std::filesystem;
using json = nlohmann::json;

struct CheckSpec {
  std::string id, title, hint;
  double points = 1;
  bool cuda = false;          // needs a CUDA device: SKIPPED (not passed, not failed) without one
  bool toolkit = false;       // needs the CUDA toolkit (every cuda check does): SKIPPED where the course has none
  bool warms_worker = false;  // its worker run calls opcheck, torch.compile or a harness: the server starts warm
};

struct Exercise {
  std::string id, title, chapter, library;
  std::vector<std::string> sources;
  std::vector<std::string> cuda_sources;  // those of sources compiled only with the CUDA toolkit
  std::vector<std::string> hints;
  std::vector<CheckSpec> checks;
  // "stable": the LibTorch stable ABI (chapter 10), built without the precompiled ATen header and with
  // -DTORCH_TARGET_VERSION for torch_target ("2.10"); "python": the operators are defined in Python (chapter 11), in
  // the source LIBRARY.py, which the worker imports (nothing is compiled); "classic" otherwise.
  std::string abi = "classic", torch_target;
  bool stable_abi() const { return abi == "stable"; }
  bool python_abi() const { return abi == "python"; }
  // exercise.json resolved against the check catalog; std::runtime_error naming the file and what is wrong.
  static Exercise load(const fs::path& metadata_file, const fs::path& catalog_file);
  const CheckSpec* find_check(const std::string& id) const;
};

// Where the check catalog lives in a course checkout.
inline fs::path catalog_path(const fs::path& course_root) {
  return course_root / "autograder" / "metadata" / "checks.json";
}

struct Config {
  fs::path course_root, submission, work_dir, out_dir, toolchain_file;
  std::string exercise_id;
  uint64_t seed = 0;
  double worker_timeout_s = 120;
  double build_timeout_s = 600;
  // A row that needs a CUDA device and has none FAILs (not graded, counted as failed) instead of being SKIPPED:
  // for an instructor who must not publish a grade that left its GPU rows out (judge --require-cuda).
  bool require_cuda = false;
  // Test hook (judge --test-fault CHECK[:KIND]): the judge faults on purpose inside that check, to prove that the
  // reports survive a fault inside the judge itself. Empty: never.
  std::string test_fault;
};

struct BuildResult {
  bool ok = false;
  fs::path dir;         // the build folder; its src/ holds the submission's files as compiled (and its .py files)
  fs::path library;     // empty for a Python-only exercise
  std::string log;      // the compiler's output, capped
  std::string failure;  // one line: which step failed
  // When a compile or the link failed (diagnostics.hpp): the first error, in the student's files where it can be
  // placed there ("mm16_cpu.cpp:51:50: 'k' was not declared in this scope"), how many distinct errors follow, and
  // the output reordered to lead with it. Empty when no error could be read from the output (then: log).
  std::string first_error;
  int more_errors = 0;
  std::string errors;
  bool refused = false;  // the submission's files were refused before anything was compiled (a link, a FIFO...)
  std::vector<std::string> left_out;  // cuda_sources not compiled: the course has no CUDA toolkit
  double seconds = 0;
};

// What one worker run returned, after validation. `ok` is false when the worker died, timed out, or answered with
// anything the judge could not validate; `failure` then says which, in words a student can act on.
struct GroupResult {
  bool ok = false;
  std::string failure;
  fs::path dir;                           // the run's folder (files the worker wrote, e.g. a profiler trace)
  std::string nonce;                      // this run's, as the request carried it
  json report;                            // the worker's raw observations
  std::map<std::string, Tensor> tensors;  // tensors it returned
  ProcessResult process;
  // A run retried after a sign of the machine's fault (machine_faults.hpp): why its rows are not graded (the fault
  // was the machine's, on evidence), else what the retry showed (its verdicts stand), else both empty.
  std::string not_graded, retry_note;
};

enum class Status { Pass, Fail, Skip };

struct Row {
  std::string id, title, hint;
  Status status = Status::Fail;
  double points = 0, max_points = 0;
  bool verdict_given = false;
  std::string detail, expected, seen;
  // Why the row's points were not graded on this machine (e.g. "needs a CUDA device"); empty when they were. Set
  // on a SKIPPED row, and on the row --require-cuda failed instead of skipping it.
  std::string not_graded;
  // Set when the row read a worker run the grading machine spoiled (GroupResult::not_graded): the row is then not
  // graded, whatever its check made of that run; retry_note: a run it read was retried (said in its detail).
  std::string machine_fault, retry_note;
};

// Thrown inside a check when a prerequisite (build, worker group) failed: the row fails with this message.
struct NotRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunPlan;  // session_internal.hpp

class Session {
 public:
  static Session& get();
  void init(Config cfg);

  Config cfg;
  Exercise exercise;
  json toolchain;

  const BuildResult& build(const std::string& variant = "default");
  // Runs (once) the worker group `name` against the submission's library built as `variant`.
  const GroupResult& group(const std::string& name, const json& args = json::object(),
                           const std::map<std::string, Tensor>& inputs = {}, const std::string& variant = "default");
  // The group's report, or NotRun with the reason it is missing.
  const GroupResult& require(const std::string& name, const json& args = json::object(),
                             const std::map<std::string, Tensor>& inputs = {}, const std::string& variant = "default");
  // Asked of torch in a process that never loads the submission, so a submission cannot hide the GPU.
  bool cuda_available();
  // The course was configured with nvcc (toolchain.json names it); without it (COURSE_CUDA=off) the judge builds no
  // cuda_sources and every check that needs the toolkit is SKIPPED before it runs (skip_without_toolkit).
  bool toolkit_available() const { return !toolchain.value("nvcc", std::string()).empty(); }
  // The grade is over: the worker server goes, with everything of its uid.
  void finish();
  int cuda_device_count();
  std::string cuda_device_name();

  std::vector<Row> rows;  // in the order the checks ran
  Row* current = nullptr;
  // Where the grade's time went (rows.json "timeline", read by `course bench --breakdown`): one entry per compile,
  // link, worker run and CUDA probe, {"what", "start" (s since init), "seconds", ...}. For measuring, never verdicts.
  json timeline = json::array();
  void record_time(const std::string& what, std::chrono::steady_clock::time_point from, json extra = json::object());
  // Set when the judge's own checking process died (main.cpp): one line, shown in every report.
  std::string grader_crash;
  // What finish() removed of what the worker runs wrote (bytes), and the line the reports show when it was more
  // than a few MiB: a grade leaves its reports and build logs behind, not a submission's files.
  unsigned long long removed_bytes = 0;
  std::string cleanup_note;

 private:
  std::map<std::string, BuildResult> builds_;
  std::map<std::string, GroupResult> groups_;
  std::optional<json> cuda_probe_;
  std::future<ProcessResult> cuda_probe_run_;  // started with the default build, when the exercise has CUDA rows
  std::chrono::steady_clock::time_point cuda_probe_started_;
  void start_cuda_probe();
  // The worker server of this grade (worker_server.py, Sandbox::start_server): started when the default build starts
  // (its torch import overlaps the compile), used by every group it can serve (see group()).
  std::unique_ptr<ServerProcess> server_;
  std::vector<fs::path> server_mounts_;
  int server_starts_ = 0, server_seq_ = 0;
  bool server_off_ = false;
  std::string
      server_note_;  // why the last group did not run on the server (the bench's breakdown prints it)  // this machine, this grade or COURSE_WORKER_SERVER=off: every group in a fresh sandbox
  void start_server(const fs::path& build_dir);
  // Runs one request through the server; false (nothing decided) when the server could not answer it.
  const GroupResult& run_group(const std::string& name, const json& args, const std::map<std::string, Tensor>& inputs,
                               const std::string& variant);
  bool run_on_server(GroupResult& g, const fs::path& dir, double timeout_s,
                     const std::map<std::string, std::string>& env);
  // The phases of one worker run (worker_run.cpp, worker_answer.cpp). `alone`: the retry after a sign of the
  // machine's fault (`sign`); before_retry: the GPU's memory it saw with the GPU turn held.
  RunPlan plan_run(const std::string& name, const json& args, const std::map<std::string, Tensor>& inputs,
                   const std::string& variant, const BuildResult& b) const;
  void attempt_run(GroupResult& g, const RunPlan& plan, bool alone, MachineFault sign, GpuMemory& before_retry);
  bool server_can_serve(const RunPlan& plan) const;
  bool run_served(GroupResult& g, const RunPlan& plan, const fs::path& dir, const std::string& nonce);
  void record_worker_time(const RunPlan& plan, std::chrono::steady_clock::time_point step, const json& answer,
                          bool served);
  void validate_answer(GroupResult& g, const RunPlan& plan, const json& answer, const std::string& unreadable);
  void account_run(GroupResult& g);
  void retry_alone(GroupResult& g, const RunPlan& plan, MachineFault sign);
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::string gpu_stopped_;  // why later GPU runs are not started (an earlier one timed out)
};

// An exclusive flock on `path` (made if missing), held until destroyed; held() is false when the file could not be
// opened. Judges that share something (a submission's compiler cache, the machine's GPU) take turns through one.
class FileLock {
 public:
  FileLock(const std::string& path, mode_t mode);
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};
// This machine's GPU turn, held until destroyed: every process that uses the GPU for a grade (a worker run, a probe
// of the judge's own) runs while one is held, so no two grades are on the GPU at once (COURSE_GPU_LOCK: the lock
// file, default /tmp/course-gpu.lock; "off": no turns).
class GpuTurn {
 public:
  GpuTurn();

 private:
  std::optional<FileLock> lock_;
};

// The run's evidence file `name` (in its folder), only if it is what the worker announced before it ran submission
// code (groups_common.announce_evidence: the first "course-evidence NONCE NAME SHA256" line of its output);
// otherwise std::runtime_error saying why it is not trusted.
fs::path trusted_evidence(const GroupResult& g, const std::string& name);

// CMake's CUDA_ARCHITECTURES syntax ("75;90-real", "75-virtual") -> nvcc -gencode flags, as the judge builds with.
std::vector<std::string> gencode_flags(const std::string& arch_list);

// Verdicts, called inside a check (a doctest test case). A check passes only through pass(): a check that ends
// without a verdict fails.
void pass(const std::string& detail);
void fail(const std::string& detail, const std::string& expected = "", const std::string& seen = "");
// `why_not_graded`: the short reason the totals give for its points (default: the reason itself).
void skip(const std::string& reason, const std::string& why_not_graded = "");
// Skips the current row unless a CUDA device is present; returns true when it skipped (with --require-cuda the row
// FAILs instead, as not graded, and this returns true as well: the check has its verdict either way).
bool skip_without_cuda();
// The reason skip_without_cuda() gives the totals.
inline constexpr const char* kNeedsCuda = "needs a CUDA device";
inline constexpr const char* kNeedsToolkit = "needs the CUDA toolkit";
// The rows of checks that need the toolkit, SKIPPED with the reason, when the course has none: the checks never run.
void skip_without_toolkit(Session& s);

// The judge's one source of drawn inputs: a random stream per purpose (`tag`), from the grade's seed, so one seed
// reproduces a grade exactly and two purposes never share draws. FNV-1a of the tag: the same on every machine
// (std::hash may differ between standard libraries).
std::mt19937_64 rng_for(const std::string& tag);

}  // namespace judge
